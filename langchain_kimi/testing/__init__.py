"""Test your own Kimi code without a key or a network: `FakeKimiGateway` (a scripted gateway)
and the `kimi_cassette` pytest fixture (record once, replay offline).

Needs the `testing` extra (`pip install 'langchain-kimi[testing]'`: jsonschema to check requests
against the published documents, vcrpy for the cassettes). The names load on first use: the
pytest plugin in this package is imported by every pytest run, and must stay light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_kimi.testing.gateway import (
        FAKE_KEY,
        AmbiguousStepError,
        FakeKimiGateway,
        ScriptError,
    )

__all__ = ["FAKE_KEY", "AmbiguousStepError", "FakeKimiGateway", "ScriptError"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from langchain_kimi.testing import gateway

        return getattr(gateway, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
