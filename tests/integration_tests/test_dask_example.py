"""examples/dask_extraction.py on a LocalCluster of 2 worker processes, against the loopback gateway
(`benchmarks/gateway.py`, its own process): 200 documents per worker, each answered exactly once;
a run whose partitions fail reports them, and the next run redoes only those.

Needs the `scale` extra (installed by `.ci/run`; under CI a missing extra fails the test instead
of skipping it).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.run import ServerProcess
from tools.paths import ROOT

EXAMPLE = ROOT / "examples" / "dask_extraction.py"

if not os.environ.get("CI"):
    pytest.importorskip("distributed", reason="the scale extra is not installed")
    pytest.importorskip("pyarrow", reason="the scale extra is not installed")

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]


def _run(base_url: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EVOLINK_API_KEY": "loopback-placeholder-key", "PYTHONPATH": str(ROOT)}
    env.pop("EVOLINK_BASE_URL", None)
    command = [sys.executable, str(EXAMPLE), "--base-url", base_url, "--out", str(out), *extra]
    return subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=300, check=False, cwd=ROOT
    )


def test_two_workers_answer_every_document_once_and_rerun_only_failed(tmp_path: Path) -> None:
    out = tmp_path / "reviews"
    with socket.socket() as probe:  # nobody listens here: every call of the first run fails
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    common = ("--workers", "2", "--documents", "400", "--partition-size", "100")

    failed = _run(dead, out, *common)
    assert failed.returncode != 0
    assert "partition 0: 100 failed" in failed.stdout
    assert "0 partition(s) written" in failed.stdout
    assert "4 failed" in failed.stdout
    assert "re-run the same command" in failed.stderr
    assert not list(out.glob("*.parquet"))

    options = ("--rate", "0", "--min-delay", "0.01", "--max-delay", "0.05")
    with ServerProcess(40, 300, "benchmarks.gateway", options) as gateway:
        url = f"http://127.0.0.1:{gateway.port}"
        first = _run(url, out, *common, "--check")
        assert first.returncode == 0, first.stderr[-2000:]
        assert "4 partition(s) to run" in first.stdout
        assert "check: all 400 documents answered exactly once" in first.stdout
        (out / "part-00002.parquet").unlink()  # as if that partition had failed
        again = _run(url, out, *common, "--check")
        assert again.returncode == 0, again.stderr[-2000:]
        assert "1 partition(s) to run" in again.stdout
        assert "check: all 400 documents answered exactly once" in again.stdout
        requests = gateway.stats()["requests"]
    assert requests == 400 + 100  # the re-run sent only the missing partition's documents
