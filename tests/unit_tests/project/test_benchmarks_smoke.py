"""Smoke test of the benchmark harness (`benchmarks/`): tiny workload, no timing assertions.

It starts the loopback server process and runs every section for every client, then checks
that each produced numbers and that no call failed. Only 127.0.0.1 is contacted. The tiny
profile is sized so that no check depends on how loaded the machine is (see its comment in
`benchmarks/run.py`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
@pytest.mark.filterwarnings("ignore:Unrecognized keys in model profile")
def test_tiny_run_covers_every_client_without_errors(tmp_path: Path) -> None:
    # Imported here, not at collection: only the worker that runs this test pays for the
    # harness, its peers and matplotlib (about a second of CPU).
    pytest.importorskip("matplotlib")
    from benchmarks import run
    from benchmarks.clients import CLIENTS

    results = run.main(["--tiny", "--out", str(tmp_path)])

    for section in ("invoke_cpu_ms", "stream_cpu_ms"):
        for name in (*CLIENTS, "floor-anthropic", "floor-openai"):
            entry = results[section][name]
            assert entry["errors"] == 0, (section, name, entry["first_error"])
            assert entry["median"] is not None, (section, name)
            assert entry["median"] > 0, (section, name)
    tiny = run.PROFILES["tiny"]
    for name in CLIENTS:
        # Every client understood the served replies: text in the reply, chunks in the stream.
        assert results["invoke_cpu_ms"][name]["text_chars"] > 0, name
        assert results["stream_cpu_ms"][name]["chunks"] > 10, name
        burst = results["concurrency"][name]
        assert burst["errors"] == 0, (name, burst["first_error"])
        assert burst["calls"] == tiny.concurrency * tiny.concurrency_runs
    for name in ("floor", *CLIENTS):
        entry = results["history"][name]
        assert "error" not in entry, (name, entry)
        assert entry["body_bytes"] > 10 * 1_000, name  # the history really went on the wire
    assert results["imports_ms"]["kimi"]["median"] is not None
    for level in map(str, tiny.scale_levels):  # past the pool size
        for name in ("kimi-anthropic", "kimi-openai"):
            assert results["scale"][level][name]["errors"] == 0, (level, name)
    assert len(results["goodput"]) == 3  # abatch, thread-pool batch, overload
    calls, concurrency = tiny.overload
    overload = results["goodput"][f"abatch {calls} @ {concurrency}"]
    # The 429 path is covered: the tiny profile's bucket is far smaller than the overload burst.
    assert all(row["throttled"] > 0 for row in overload.values())
    for case in results["goodput"].values():
        for name, row in case.items():
            assert row["requests"] >= row["calls"] - row["failures"], (name, row)
            if name.startswith("ChatKimi"):
                assert row["failures"] == 0, (name, row["first_failure"])
    for name, row in results["streams"].items():
        assert "error" not in row, (name, row)
        assert row["errors"] == 0, (name, row["first_error"])
        assert row["chunks"] > 10 * row["streams"], name
    # ChatKimi keeps the reasoning on both protocols (ChatOpenAI is known to drop it).
    assert results["invoke_cpu_ms"]["kimi-anthropic"]["reasoning_kept"] is True
    assert results["invoke_cpu_ms"]["kimi-openai"]["reasoning_kept"] is True

    assert {t["what"] for t in results["targets"]} >= {"import: langchain_kimi / floor"}
    assert json.loads((tmp_path / "latest.json").read_text())["profile"] == "tiny"
    page = (tmp_path / "benchmarks.md").read_text()
    assert "python -m benchmarks.run" in page
    assert "| kimi-anthropic |" in page
    assert "## Goodput under a rate limit" in page
    assert "concurrent `astream` on one event loop" in page
    assert (tmp_path / "benchmarks.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
