"""The pytest plugin (entry point `pytest11`): the `kimi_cassette` fixture and `--kimi-record`.

```python
def test_capital(kimi_cassette):
    model = ChatKimi(model="kimi-k3.1-pro")
    assert "Paris" in model.invoke("Capital of France? One word.").text
```

The first run with `EVOLINK_API_KEY` set records the test's calls to a file named after its full
node id, `<rootdir>/tests/cassettes/<module path below tests/>/<test name>.yaml`; every later run
replays them, with no key and no network (`--kimi-record` records again). A recording whose
test failed is not kept. Loaded by every pytest run once the package is installed, so this module
imports only pytest; the recorder loads when a test asks for the fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_CALL_FAILED = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kimi", "langchain-kimi cassettes")
    group.addoption(
        "--kimi-record",
        action="store_true",
        default=False,
        help="kimi_cassette: record every cassette again against the service (needs "
        "EVOLINK_API_KEY); without it a missing cassette is recorded only when a key is set",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
    return report


@pytest.fixture
def kimi_cassette(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Record this test's Kimi calls once (with `EVOLINK_API_KEY`), replay them offline after.

    In replay `EVOLINK_API_KEY` is a placeholder (create your `ChatKimi` inside the test or in a
    fixture that uses this one). Yields the vcrpy cassette (`.play_count`, `.requests`)."""
    from langchain_kimi.testing import cassettes

    plan = cassettes.plan(
        Path(request.config.rootpath),
        request.node.nodeid,
        force_record=bool(request.config.getoption("kimi_record")),
    )
    if not plan.record:
        monkeypatch.setenv(cassettes.KEY_ENV, cassettes.REPLAY_KEY)
    with cassettes.use(plan) as cassette:
        yield cassette
    if plan.record and request.node.stash.get(_CALL_FAILED, False):
        # A half-recorded test would replay as "no recording" later: the next run with a key
        # records it again instead.
        cassettes.discard(plan)
