"""`./dev live` (`python -m tools.live`): the suites and open questions against the live gateway.

Needs `EVOLINK_API_KEY`; without it, prints what it would run and exits 0. `EVOLINK_BASE_URL`
points it elsewhere (the offline proof uses a loopback server). Exit code 1 when a test failed or
a response differs from `spec/`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

from langchain_kimi._secrets import Scrubber
from langchain_kimi.chat_models import DEFAULT_BASE_URL, DOCUMENTED_FALLBACK_URL
from tools.live import record
from tools.live.checks import check_all
from tools.live.exchanges import ExchangeLog
from tools.live.probe import Probe
from tools.live.questions import QUESTIONS, answer_all
from tools.live.report import Report, SuiteOutcome, render
from tools.paths import ROOT

MODELS = ("kimi-k3.1-pro", "kimi-k3.1-pro-highspeed", "kimi-k3")
PROTOCOLS = ("openai", "anthropic")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="./dev live", description=__doc__)
    parser.add_argument("--model", action="append", choices=MODELS, help="repeatable; default all")
    parser.add_argument("--protocol", action="append", choices=PROTOCOLS, help="default both")
    parser.add_argument(
        "--search", action="store_true", help="also run the billed $web_search loop"
    )
    parser.add_argument(
        "--record", type=Path, metavar="DIR", help="write every exchange as a cassette"
    )
    parser.add_argument(
        "-k", dest="select", metavar="EXPR", help="pytest -k expression for the suites"
    )
    parser.add_argument("--no-suites", action="store_true", help="only the open questions")
    parser.add_argument(
        "--costly",
        action="store_true",
        help="also ask the questions that need a large billed request (a near-full context)",
    )
    parser.add_argument(
        "--timeout-minutes", type=float, default=240, help="bound on the whole suite run"
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the report as JSON")
    return parser


def _plan(args: argparse.Namespace, base_url: str, models: list[str], protocols: list[str]) -> str:
    rows = len(models) * len(protocols)
    lines = [
        "EVOLINK_API_KEY is not set: nothing was sent. With a key, `./dev live` would:",
        f"- talk to {base_url} for {rows} model x protocol row(s): "
        f"{', '.join(models)} over {', '.join(protocols)};",
        "- run langchain-tests' ChatModelIntegrationTests live per row (tools/live/test_live_standard.py)",
        "  and the behavioural checks (tools/live/test_live_behaviour.py)"
        + (
            " including the billed $web_search loop;"
            if args.search
            else "; no web search (--search);"
        ),
        f"- answer {len(QUESTIONS)} open questions (tools/live/questions.py) with raw probes"
        + ("" if args.costly else ", skipping the costly ones (--costly)")
        + ";",
        "- validate every response (bodies, stream events and their order, error bodies) against spec/;",
    ]
    if args.record:
        lines.append(f"- record every exchange, credentials scrubbed, under {args.record}/.")
    return "\n".join(lines)


def _socket_flags(base_url: str) -> list[str]:
    # The suite's default is no sockets at all; live runs open them, to loopback only if local.
    host = httpx.URL(base_url).host
    return ["--force-enable-socket"] + ([f"--allow-hosts={host}"] if host in _LOOPBACK else [])


def _run_suites(
    args: argparse.Namespace, base_url: str, models: list[str], protocols: list[str], workdir: Path
) -> tuple[SuiteOutcome, list]:
    log_path, junit = workdir / "exchanges.jsonl", workdir / "junit.xml"
    env = {
        **os.environ,
        "KIMI_LIVE": "1",
        "KIMI_LIVE_EXCHANGES": str(log_path),
        "KIMI_LIVE_MODELS": ",".join(models),
        "KIMI_LIVE_PROTOCOLS": ",".join(protocols),
        "KIMI_LIVE_SEARCH": "1" if args.search else "0",
    }
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tools/live",
        "-q",
        "--tb=short",
        "-p",
        "no:xdist",
        "-o",
        "addopts=--record-mode=none -p no:cacheprovider",
        f"--junitxml={junit}",
        *_socket_flags(base_url),
    ]
    if args.select:
        command += ["-k", args.select]
    try:
        subprocess.run(command, cwd=ROOT, env=env, check=False, timeout=args.timeout_minutes * 60)
    except subprocess.TimeoutExpired:
        outcome = SuiteOutcome.from_junit(junit)
        outcome.failed += 1
        outcome.failures.append(f"the suites did not finish within {args.timeout_minutes} minutes")
        return outcome, ExchangeLog.read(log_path)
    return SuiteOutcome.from_junit(junit), ExchangeLog.read(log_path)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    models, protocols = args.model or list(MODELS), args.protocol or list(PROTOCOLS)
    base_url = os.environ.get("EVOLINK_BASE_URL") or DEFAULT_BASE_URL
    key = os.environ.get("EVOLINK_API_KEY", "")
    if not key:
        print(_plan(args, Scrubber.for_key(None, base_url).url(base_url), models, protocols))
        return 0
    if key != key.strip():
        # ChatKimi refuses such a key (an HTTP header cannot carry it): nothing would run.
        print("EVOLINK_API_KEY has surrounding whitespace: remove it. Nothing was sent.")
        return 2
    fallback = DOCUMENTED_FALLBACK_URL if base_url.rstrip("/") == DEFAULT_BASE_URL else None
    with tempfile.TemporaryDirectory(prefix="kimi-live-") as tmp:
        suites, exchanges = SuiteOutcome(), []
        if not args.no_suites:
            suites, exchanges = _run_suites(args, base_url, models, protocols, Path(tmp))
    probe = Probe(base_url, key, ExchangeLog(), fallback_url=fallback, costly=args.costly)
    try:
        answers = answer_all(probe, exchanges)
    finally:
        probe.close()
    everything = [*exchanges, *probe.log.items]
    report = Report(base_url, suites, check_all(everything), answers, len(everything), key=key)
    print(render(report))
    if args.json:
        args.json.write_text(json.dumps(report.as_json(), indent=2), encoding="utf-8")
    if args.record:
        written = record.write(everything, args.record, key)
        print(
            f"\nRecorded {len(written)} cassette(s) under {args.record}; compare with "
            f"`python -m tools.authoring --diff {args.record}`"
        )
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
