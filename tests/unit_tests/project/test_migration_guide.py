"""docs/migrating.md against the peers as installed and against ChatKimi.

- "Every setting of ChatOpenAI and ChatAnthropic" names every constructor setting of both peers
  (field names and aliases), and says of each what ChatKimi does: `kept` (accepted as given),
  `renamed: X` (refused, the error naming `X`) or `refused`. A peer release that adds a setting,
  or a ChatKimi change of what it accepts, fails here.
- "Why switch" names the tests that show each point: they exist.
"""

from __future__ import annotations

import re

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_openai import ChatOpenAI
from pydantic import AliasChoices

from langchain_kimi import ChatKimi
from langchain_kimi._langchain.arguments import accepted_names
from tools.paths import ROOT

PAGE = (ROOT / "docs" / "migrating.md").read_text(encoding="utf-8")
PEERS_TEST = ROOT / "tests" / "integration_tests" / "test_peers_at_the_gateway.py"
SECTION = "## Every setting of ChatOpenAI and ChatAnthropic"


def _peer_settings() -> set[str]:
    names: set[str] = set()
    for peer in (ChatOpenAI, ChatAnthropic):
        for name, info in peer.model_fields.items():
            names.add(name)
            for alias in (info.alias, info.validation_alias):
                if isinstance(alias, str):
                    names.add(alias)
                elif isinstance(alias, AliasChoices):
                    names.update(a for a in alias.choices if isinstance(a, str))
    return names


def _fates() -> dict[str, str]:
    """Setting -> its fate cell, from the section's table (a peer name in parentheses, such as
    ChatDeepSeek's `api_base`, counts too)."""
    section = PAGE[PAGE.index(SECTION) :].split("\n## ")[0]
    fates: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) != 3:
            continue
        for name in re.findall(r"`(\w+)`", cells[0]):
            assert name not in fates, f"{name} is in two rows"
            fates[name] = cells[1]
    return fates


FATES = _fates()


def test_every_setting_of_both_peers_has_a_row() -> None:
    missing = sorted(_peer_settings() - set(FATES))
    assert missing == []


ACCEPTED = accepted_names(ChatKimi.model_fields)


@pytest.mark.parametrize("name", sorted(FATES))
def test_each_row_says_what_chatkimi_does(name: str) -> None:
    fate = FATES[name]
    renamed = re.fullmatch(r"renamed: `(\w+)`", fate)
    if fate.startswith("kept") or (renamed and renamed.group(1) == name):
        assert name in ACCEPTED
        return
    with pytest.raises(ValueError, match=f"unexpected argument `{name}`") as refused:
        ChatKimi(api_key="sk-test-placeholder", **{name: None})
    if renamed:
        assert f"did you mean `{renamed.group(1)}`?" in str(refused.value)
    else:
        assert fate == "refused", fate
        assert "did you mean" not in str(refused.value)


def test_the_tests_named_as_evidence_exist() -> None:
    why = PAGE[PAGE.index("## Why switch") :].split("\n## ")[0]
    named = set(re.findall(r"`(test_\w+)`", why))
    assert len(named) >= 5
    defined = set(re.findall(r"^def (test_\w+)", PEERS_TEST.read_text(encoding="utf-8"), re.M))
    assert named <= defined
