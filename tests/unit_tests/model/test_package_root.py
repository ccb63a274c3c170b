"""The package root `langchain_kimi` loads its public names on first use (PEP 562): importing
the package (which every pytest run does, for the `pytest11` plugin in `langchain_kimi.testing`)
costs nothing, and every public name still resolves, to the object its home module defines."""

from __future__ import annotations

import subprocess
import sys

import pytest

import langchain_kimi
from langchain_kimi import _contract, _errors, chat_models


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_the_package_loads_neither_langchain_nor_the_model() -> None:
    loaded = _run(
        "import sys, langchain_kimi\n"
        "print(langchain_kimi.__version__)\n"
        "print(sorted(m for m in ('langchain_core', 'langchain_kimi.chat_models', 'pydantic',"
        " 'httpx') if m in sys.modules))"
    )
    assert loaded.splitlines() == [langchain_kimi.__version__, "[]"]


@pytest.mark.parametrize("name", langchain_kimi.__all__)
def test_every_public_name_resolves_to_its_home_modules_object(name: str) -> None:
    homes = [m for m in (chat_models, _contract, _errors) if hasattr(m, name)]
    value = getattr(langchain_kimi, name)
    if name == "__version__":
        assert isinstance(value, str)
    else:
        assert [getattr(m, name) for m in homes] == [value]


def test_star_import_and_dir_show_the_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from langchain_kimi import *", namespace)  # the import form under test
    assert set(langchain_kimi.__all__) <= set(namespace)
    assert set(langchain_kimi.__all__) <= set(dir(langchain_kimi))


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'ChatKimmi'"):
        _ = langchain_kimi.ChatKimmi  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "code",
    ["from langchain_kimi import ChatKimi", "import langchain_kimi.chat_models"],
)
def test_the_kimi_block_translator_is_registered_with_the_model(code: str) -> None:
    """Messages of `model_provider` "kimi" come from ChatKimi: loading it registers their
    `content_blocks` translator with langchain-core."""
    registered = _run(
        f"{code}\n"
        "from langchain_core.messages.block_translators import get_translator\n"
        "print(get_translator('kimi') is not None)"
    )
    assert registered == "True"
