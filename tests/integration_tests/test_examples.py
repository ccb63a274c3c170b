"""The runnable examples in examples/, run in replay mode with sockets disabled.

Each example runs as a script (`runpy`, `__main__`) without EVOLINK_API_KEY, so it replays its
cassette in cassettes/examples/ (vcr record mode "none", JSON-body matching: the example passes
only if ChatKimi sends exactly the hand-written bodies). The tests check the replay notice and
the lines each example promises; the demo command (`./dev demo`) also runs as a subprocess.
"""

from __future__ import annotations

import io
import os
import runpy
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from vcr.errors import CannotOverwriteExistingCassetteException  # type: ignore[import-untyped]

from tools.paths import ROOT

EXAMPLES = ROOT / "examples"
NOTICE = "No EVOLINK_API_KEY set: replaying authored responses from cassettes/examples/{}.yaml"

RunExample = Callable[..., str]


@pytest.fixture
def run_example(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> RunExample:
    monkeypatch.delenv("EVOLINK_API_KEY", raising=False)
    monkeypatch.syspath_prepend(str(EXAMPLES))

    def run(name: str, *args: str) -> str:
        path = EXAMPLES / f"{name}.py"
        monkeypatch.setattr(sys, "argv", [str(path), *args])
        code: object = 0
        try:
            runpy.run_path(str(path), run_name="__main__")
        except SystemExit as exc:  # argparse or the example itself
            code = exc.code
        assert code in (None, 0), f"{name} exited with {code}"
        return capsys.readouterr().out

    return run


def _in_order(out: str, lines: list[str]) -> None:
    positions = []
    for line in lines:
        assert line in out, f"missing {line!r} in:\n{out}"
        positions.append(out.index(line))
    assert positions == sorted(positions), f"steps out of order in:\n{out}"


def test_agent_with_search_prints_every_step(run_example: RunExample) -> None:
    out = run_example("agent_with_search")
    assert out.startswith(NOTICE.format("agent_with_search_openai"))
    calls = "[call]   convert_currency(amount=250, from_currency='USD', to_currency='EUR')"
    after_tools = "[think]  Sunny at 21 °C; 250 USD is 230 EUR;"
    # The two tools run in parallel: their results print in completion order.
    _in_order(
        out, [calls, "[tool]   get_weather -> Lisbon: 21 °C, sunny, light breeze", after_tools]
    )
    _in_order(out, [calls, "[tool]   convert_currency -> 250.00 USD = 230.00 EUR", after_tools])
    _in_order(
        out,
        [
            "[user]   I land in Lisbon on Saturday with 250 USD",
            "[think]  Three questions. Weather and currency have tools;",
            "[search] 'Lisbon events this weekend'",
            "[search] 1 web search(es) run by the service",
            "[call]   get_weather(city='Lisbon')",
            calls,
            after_tools,
            "[answer] Lisbon will be sunny and 21 °C with a light breeze.",
            # Three model calls (search round, tool calls, answer) summed; input counts cache
            # reads and writes: (24+290) + (1850+290) + (120+2140).
            "usage: input 4714 (cached 2430) · output 226 (reasoning 92)",
        ],
    )


def test_agent_with_search_on_the_messages_protocol(run_example: RunExample) -> None:
    out = run_example("agent_with_search", "--protocol", "anthropic")
    assert out.startswith(NOTICE.format("agent_with_search_anthropic"))
    _in_order(
        out,
        [
            "[think]  Three questions. The weekend event needs a web search;",
            # server_tool_use block (content_blocks) and usage.server_tool_use (metadata)
            "[search] 'Lisbon events this weekend'",
            "[search] 1 web search(es) run by the service",
            "[say]    Let me check the weather and the exchange rate.",
            "[call]   get_weather(city='Lisbon')",
            "[call]   convert_currency(amount=250, from_currency='USD', to_currency='EUR')",
            "[think]  Sunny at 21 °C; 250 USD is 230 EUR;",
            "[answer] Lisbon will be sunny and 21 °C with a light breeze.",
            # Messages input_tokens excludes cache reads/writes; the summary counts them all:
            # (24 + 1900 written) + (64 + 1924 read).
            "usage: input 3912 (cached 1924) · output 232 (reasoning 64)",
        ],
    )
    assert out.count("[tool]   ") == 2


def test_agent_demo_command_exits_zero() -> None:
    """What `./dev demo` runs, as a real process; without a key it must not need the network."""
    env = {k: v for k, v in os.environ.items() if k not in ("EVOLINK_API_KEY", "EVOLINK_BASE_URL")}
    # The child has no pytest-socket: block sockets there too before the example starts.
    code = (
        "import runpy, sys, pytest_socket; pytest_socket.disable_socket(allow_unix_socket=True); "
        f"sys.path.insert(0, {str(EXAMPLES)!r}); sys.argv = ['agent_with_search.py']; "
        f"runpy.run_path({str(EXAMPLES / 'agent_with_search.py')!r}, run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(NOTICE.format("agent_with_search_openai"))
    assert "[answer] Lisbon will be sunny" in done.stdout


def test_structured_extraction_prints_fields(run_example: RunExample) -> None:
    out = run_example("structured_extraction")
    assert out.startswith(NOTICE.format("structured_extraction"))
    _in_order(
        out,
        [
            "invoice 2025-0417, issued 2025-03-03, due 2025-04-02",
            "seller: Azulejo Design Lda. (billing@azulejo.example)",
            # The strict schema made the optional e-mail nullable; the null the model sent
            # was dropped again, so the field fell back to its default.
            "buyer: Northwind Books Ltd. (no e-mail given)",
            "  3 x hand-painted tile panel (40x40 cm) @ 180.00",
            "  1 x installation, half day @ 220.00",
            "total: 760.00 EUR",
            "usage: input 296 (cached 0) · output 190 (reasoning 58)",
        ],
    )


def test_streaming_chat_script_mode(run_example: RunExample) -> None:
    module: dict[str, Any] = runpy.run_path(str(EXAMPLES / "streaming_chat.py"))
    out = run_example("streaming_chat", "--script", *module["DEMO_SCRIPT"])
    assert out.startswith(NOTICE.format("streaming_chat"))
    assert "\033[" not in out, "no ANSI codes when stdout is not a terminal"
    _in_order(
        out,
        [
            "you> In one sentence: why does a kettle whistle?",
            "[thinking] The whistle is a small chamber with two holes.",
            "kimi> Steam rushing through the narrow holes",
            "usage: input 34 (cached 0) · output 96 (reasoning 51)",
            "you> And why does the pitch rise as it heats up? Two sentences.",
            "[thinking] They ask about the rising pitch.",
            "kimi> As the water boils harder",
            # The second request replays the first reply: the cache now serves 34 tokens.
            "usage: input 117 (cached 34) · output 104 (reasoning 49)",
        ],
    )
    # The reasoning streams whole: no delta lost between the prefix and the answer.
    assert (
        "[thinking] The whistle is a small chamber with two holes. Steam forced through the "
        "first hole forms a jet, and vortices shed at the second hole make the air column "
        "resonate. One sentence.\nkimi> "
    ) in out


def test_streaming_chat_replays_demo_script_by_default(run_example: RunExample) -> None:
    out = run_example("streaming_chat")
    assert out.count("usage: input ") == 2


def test_replay_with_an_unrecorded_script_explains_and_exits(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("EVOLINK_API_KEY", raising=False)
    monkeypatch.syspath_prepend(str(EXAMPLES))
    module: dict[str, Any] = runpy.run_path(str(EXAMPLES / "streaming_chat.py"))
    with pytest.raises(SystemExit) as info:
        module["main"](["--script", "Something never recorded"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Replay mode plays only the recorded demo script" in err
    assert module["DEMO_SCRIPT"][0] in err
    assert "EVOLINK_API_KEY" in err


def test_replay_refuses_unrecorded_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """A request the cassette does not hold fails loudly; it never goes to the network."""
    monkeypatch.delenv("EVOLINK_API_KEY", raising=False)
    monkeypatch.syspath_prepend(str(EXAMPLES))
    replay: dict[str, Any] = runpy.run_path(str(EXAMPLES / "_replay.py"))
    from langchain_kimi import ChatKimi

    with (
        pytest.raises(CannotOverwriteExistingCassetteException),
        replay["live_or_replay"]("streaming_chat"),
    ):
        ChatKimi(max_retries=0).invoke("Something never recorded")


def test_structured_extraction_help_prints_usage(run_example: RunExample) -> None:
    out = run_example("structured_extraction", "--help")
    assert out.startswith("usage: structured_extraction.py")
    assert "No EVOLINK_API_KEY set" not in out, "--help must not run the example"
    assert "total:" not in out


def test_tty_output_dims_reasoning_with_a_spinner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    module: dict[str, Any] = runpy.run_path(str(EXAMPLES / "streaming_chat.py"))

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    printer = module["TurnPrinter"](screen)
    assert "thinking…" in screen.getvalue(), "a progress line before the first token"
    printer.reasoning("Steam ")
    printer.reasoning("jets.")
    printer.answer("A whistle.")
    printer.done({"input_tokens": 10, "output_tokens": 5, "total_tokens": 15})
    text = screen.getvalue()
    assert "\033[2mSteam " in text, "reasoning is dimmed"
    assert "[thinking]" not in text
    spinner_frames = [c for c in text if c in module["SPINNER"]]
    assert len(spinner_frames) >= 3, "the spinner advances with each reasoning delta"
    assert "kimi> A whistle." in text
    assert "usage: input 10 (cached 0) · output 5 (reasoning 0)" in text


def test_live_mode_with_a_key_does_not_replay(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.setenv("EVOLINK_API_KEY", "test-key-not-real")
    replay: dict[str, Any] = runpy.run_path(str(EXAMPLES / "_replay.py"))
    with replay["live_or_replay"]("agent_with_search_openai") as live:
        assert live is True
    out = capsys.readouterr().out
    assert "live Kimi service" in out
    assert "replaying" not in out
