"""Targets, the markdown page and the chart, from one results document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.clients import (
    CHAT_ANTHROPIC,
    CHAT_DEEPSEEK,
    CHAT_OPENAI,
    CLIENTS,
    KIMI_ANTHROPIC,
    KIMI_OPENAI,
    PROTOCOL,
)

COMMAND = "python -m benchmarks.run"
INVOKE_FLOORS = ("floor-anthropic", "httpx-anthropic", "floor-openai", "httpx-openai")
STREAM_FLOORS = ("floor-anthropic", "parse-floor-anthropic", "floor-openai", "parse-floor-openai")
_REFERENCE_PREFIXES = ("floor", "httpx", "parse")


def _median(section: dict[str, Any], name: str, key: str = "median") -> float | None:
    entry = section.get(name) or {}
    value = entry.get(key)
    return float(value) if isinstance(value, int | float) else None


def _target(
    what: str, value: float | None, reference: float | None, limit: float, note: str = ""
) -> dict[str, Any]:
    ratio = value / reference if value is not None and reference else None
    return {
        "what": what,
        "ratio": ratio,
        "limit": limit,
        "pass": ratio is not None and ratio <= limit,
        "note": note,
    }


def evaluate(results: dict[str, Any]) -> list[dict[str, Any]]:
    invoke, stream = results["invoke_cpu_ms"], results["stream_cpu_ms"]
    hist, imports = results["history"], results["imports_ms"]
    targets = [
        _target(
            "invoke CPU: kimi-anthropic / ChatAnthropic",
            _median(invoke, KIMI_ANTHROPIC),
            _median(invoke, CHAT_ANTHROPIC),
            0.5,
        ),
        _target(
            "invoke CPU: kimi-openai / ChatOpenAI",
            _median(invoke, KIMI_OPENAI),
            _median(invoke, CHAT_OPENAI),
            0.5,
        ),
        _target(
            "stream CPU: kimi-anthropic / streaming floor",
            _median(stream, KIMI_ANTHROPIC),
            _median(stream, "floor-anthropic"),
            1.3,
        ),
        _target(
            "stream CPU: kimi-openai / streaming floor",
            _median(stream, KIMI_OPENAI),
            _median(stream, "floor-openai"),
            1.3,
        ),
        _target(
            "1M-token request time: kimi-anthropic / ChatAnthropic",
            _median(hist, KIMI_ANTHROPIC, "wall_ms"),
            _median(hist, CHAT_ANTHROPIC, "wall_ms"),
            0.5,
        ),
        _target(
            "import: langchain_kimi / floor",
            _median(imports, "kimi"),
            _median(imports, "floor"),
            1.15,
        ),
    ]
    for protocol, kimi in (("anthropic", KIMI_ANTHROPIC), ("openai", KIMI_OPENAI)):
        info = _target(
            f"(info) stream CPU: {kimi} / parse floor (SSE + json.loads + AIMessageChunk)",
            _median(stream, kimi),
            _median(stream, f"parse-floor-{protocol}"),
            1.3,
        )
        info["pass"] = None
        targets.append(info)
    info = _target(
        "(info) 1M-token request client CPU: kimi-anthropic / ChatAnthropic",
        _median(hist, KIMI_ANTHROPIC, "cpu_ms"),
        _median(hist, CHAT_ANTHROPIC, "cpu_ms"),
        0.5,
    )
    info["pass"] = None
    targets.append(info)
    info = _target(
        "(info) 1M-token request time: kimi-anthropic / floor (dumps once + raw POST)",
        _median(hist, KIMI_ANTHROPIC, "wall_ms"),
        _median(hist, "floor", "wall_ms"),
        1.3,
    )
    info["pass"] = None
    targets.append(info)
    errors = sum(int(results["concurrency"][name].get("errors", 0)) for name in CLIENTS)
    targets.append(
        {
            "what": "errors in the concurrent ainvoke bursts (all clients)",
            "ratio": float(errors),
            "limit": 0.0,
            "pass": errors == 0,
            "note": "count, not a ratio",
        }
    )
    return targets


def _fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def _ratio_to_kimi(section: dict[str, Any], name: str, key: str = "median") -> str:
    protocol = PROTOCOL.get(name, name.rsplit("-", 1)[-1])
    kimi = KIMI_ANTHROPIC if protocol == "anthropic" else KIMI_OPENAI
    value, base = _median(section, name, key), _median(section, kimi, key)
    if name.startswith("kimi") or value is None or not base:
        return ""
    return f"{value / base:.2f}x"


def _cpu_table(section: dict[str, Any], names: list[str], unit: str) -> list[str]:
    lines = [f"| client | protocol | median {unit} | runs | / ChatKimi (same protocol) | errors |"]
    lines.append("|---|---|---:|---|---:|---:|")
    for name in names:
        entry = section.get(name, {})
        samples = ", ".join(_fmt(s) for s in entry.get("samples", []))
        protocol = PROTOCOL.get(name, name.rsplit("-", 1)[-1])
        lines.append(
            f"| {name} | {protocol} | {_fmt(_median(section, name))} | {samples} | "
            f"{_ratio_to_kimi(section, name)} | {entry.get('errors', 0)} |"
        )
    return lines


def _history_table(hist: dict[str, Any]) -> list[str]:
    lines = ["| client | wall ms (median) | client CPU ms | peak MB (tracemalloc) | body MB | "]
    lines[0] += "wall / kimi same protocol |"
    lines.append("|---|---:|---:|---:|---:|---:|")
    for name in ("floor", *CLIENTS):
        entry = hist.get(name, {})
        if "error" in entry:
            lines.append(f"| {name} | error: {entry['error']} | | | | |")
            continue
        ratio = "" if name == "floor" else _ratio_to_kimi(hist, name, "wall_ms")
        lines.append(
            f"| {name} | {_fmt(entry.get('wall_ms'), 1)} | {_fmt(entry.get('cpu_ms'), 1)} | "
            f"{_fmt(entry.get('peak_mb'), 1)} | {_fmt(entry.get('body_bytes', 0) / 1e6, 2)} | "
            f"{ratio} |"
        )
    serialize = hist.get("floor", {}).get("serialize_ms")
    lines.append("")
    lines.append(
        f"`floor` = `json.dumps` of an already-built Chat Completions body + one raw httpx POST; "
        f"`json.dumps` alone took {_fmt(serialize, 1)} ms."
    )
    return lines


def _concurrency_table(section: dict[str, Any]) -> list[str]:
    lines = ["| client | calls/s (median) | runs | errors | first error |"]
    lines.append("|---|---:|---|---:|---|")
    for name in CLIENTS:
        entry = section.get(name, {})
        samples = ", ".join(_fmt(s, 0) for s in entry.get("samples", []))
        lines.append(
            f"| {name} | {_fmt(_median(section, name), 0)} | {samples} | "
            f"{entry.get('errors', 0)} | {entry.get('first_error') or ''} |"
        )
    return lines


def _imports_table(section: dict[str, Any]) -> list[str]:
    floor = _median(section, "floor")
    lines = ["| import | CPU ms (median) | / floor | wall ms (median) | statement |"]
    lines.append("|---|---:|---:|---:|---|")
    for name in ("floor", "kimi", CHAT_ANTHROPIC, CHAT_OPENAI, CHAT_DEEPSEEK):
        if name not in section:
            continue
        value = _median(section, name)
        ratio = f"{value / floor:.2f}x" if value is not None and floor else ""
        wall = _median(section, name, "wall_median")
        code = section[name].get("code", "")
        lines.append(f"| {name} | {_fmt(value, 1)} | {ratio} | {_fmt(wall, 1)} | `{code}` |")
    bare = section.get("interpreter_start", {})
    lines.append("")
    lines.append(
        "Both columns are above a bare interpreter (`python -c pass`: "
        f"{_fmt(bare.get('median'), 1)} ms CPU, {_fmt(bare.get('wall_median'), 1)} ms wall), "
        "subtracted. CPU = the child's user + system time (`getrusage`), robust to other load."
    )
    return lines


def _scale_sections(results: dict[str, Any]) -> list[str]:
    config = results["config"]
    out: list[str] = []
    if "scale" in results:
        levels = list(results["scale"])
        out += ["", "## Calls/s as concurrency rises (one instance)", ""]
        out += [
            "The same burst as above at each concurrency: one connection per call in flight, "
            "httpx's own pool.",
            "",
            "| client | " + " | ".join(f"{level} concurrent" for level in levels) + " |",
            "|---|" + "---:|" * len(levels),
        ]
        for name in results["scale"][levels[0]]:
            row = [_fmt(results["scale"][level][name].get("median"), 0) for level in levels]
            out.append(f"| {name} | " + " | ".join(row) + " |")
    if "goodput" in results:
        out += ["", f"## Goodput under a rate limit ({config['rate']:g} requests/s)", ""]
        out += [
            "`benchmarks/gateway.py` in its own process: a token bucket of "
            f"{config['rate']:g} requests/s, `429` + `Retry-After` beyond it, each answer after a "
            "seeded 0.2-2 s delay. Every client with its shipped defaults (retries included). "
            "Ideal = answers / rate; requests per answer counts the 429s too.",
            "",
            "| case | client | wall s | ideal s | wall / ideal | requests / answer | 429s "
            "| failures |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        for case, clients in results["goodput"].items():
            for name, row in clients.items():
                out.append(
                    f"| {case} | {name} | {_fmt(row['wall_s'], 1)} | {_fmt(row['ideal_s'], 1)} "
                    f"| {_fmt(row['wall_vs_ideal'])} | {_fmt(row['requests_per_answer'])} "
                    f"| {row['throttled']} | {row['failures']} |"
                )
    if "streams" in results:
        out += ["", f"## {config['streams']:,} concurrent `astream` on one event loop", ""]
        out += [
            f"Each stream ~{config['events']} events, paced over 5 s in 25 bursts by the gateway; "
            "each client in a fresh interpreter. Peak memory = growth of the peak RSS over the "
            "warmed-up process, per stream; loop lag = worst overshoot of a 10 ms ticker.",
            "",
            "| client | CPU µs / chunk | peak KiB / stream | worst loop lag ms | wall s | errors |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, row in results["streams"].items():
            if "error" in row:
                out.append(f"| {name} | failed: {row['error']} | | | | |")
                continue
            out.append(
                f"| {name} | {_fmt(row['cpu_us_per_chunk'], 1)} "
                f"| {_fmt(row['peak_kib_per_stream'], 1)} | {_fmt(row['worst_loop_lag_ms'], 1)} "
                f"| {_fmt(row['wall_s'], 1)} | {row['errors']} |"
            )
    return out


def markdown(results: dict[str, Any], image: str) -> str:
    env, config = results["environment"], results["config"]
    packages = ", ".join(f"{k} {v}" for k, v in env["packages"].items())
    stream = results["stream_cpu_ms"]
    chunks = {name: stream.get(name, {}).get("chunks") for name in stream}
    out = [
        "# Benchmarks: ChatKimi against ChatAnthropic, ChatOpenAI and ChatDeepSeek",
        "",
        "Every client is served **the same fixed replies** (shaped like the recorded traffic in "
        "`tests/fixtures/corpus/`) by a loopback HTTP server "
        "running in a separate process (`benchmarks/server.py`, replies generated "
        "deterministically by `benchmarks/replies.py`), so the numbers compare client work only. "
        "Client CPU is `time.process_time()` of the benchmark process (the server's CPU is not "
        "in it). Medians over repeated runs; clients interleaved within each run.",
        "",
        "This page measures speed. How ChatKimi, ChatOpenAI and ChatAnthropic behave on ten real "
        "tasks\n(agents, streams, structured output, persisted history, callbacks, a protocol "
        "switch ...) is on\nthe migration page: [Measured beside the peers]"
        "(migrating.md#measured-beside-the-peers).",
        "",
        "Reproduce (about 5-8 minutes on 2 cores; `--quick` for fewer repetitions):",
        "",
        "```bash",
        "pip install -e '.[bench]'",
        "# or: pip install matplotlib langchain-anthropic langchain-openai \\",
        "#     langchain-deepseek",
        COMMAND,
        "```",
        "",
        f"Environment: {env['cpu']}, {env['cores']} cores, {env['os']}, Python {env['python']}, "
        f"1-min load average at start {env.get('load_average_1m')}, "
        f"commit {env['commit']}, {env['date']}. Packages: {packages}. "
        f"Profile `{results['profile']}`: {config}. Total run time {results['elapsed_s']} s.",
        "",
        "## Targets",
        "",
        "| target | measured | limit | result |",
        "|---|---:|---:|---|",
    ]
    for target in results["targets"]:
        verdict = {True: "PASS", False: "FAIL", None: "info"}[target["pass"]]
        out.append(
            f"| {target['what']} | {_fmt(target['ratio'])} | {_fmt(target['limit'])} | {verdict} |"
        )
    # The chart is wider than the page's text column, which shrinks it: a click shows it whole.
    out += ["", f"[![benchmark chart (click for full size)]({image})]({image})", ""]
    out += ["## Client CPU per `invoke` (~1 KB JSON reply with reasoning)", ""]
    out += [
        "`floor-*`: a do-nothing `BaseChatModel` returning a pre-built reply (LangChain's "
        "`invoke()` machinery alone). `httpx-*`: one raw `httpx` POST of pre-encoded bytes + "
        "`response.json()`, no LangChain (the transport alone).",
        "",
    ]
    out += _cpu_table(results["invoke_cpu_ms"], [*CLIENTS, *INVOKE_FLOORS], "ms")
    out += [
        "",
        f"## Client CPU per `stream` ({config['events']} SSE events of reasoning + text)",
        "",
        "`floor-*` is a do-nothing `BaseChatModel` yielding the very chunks ChatKimi parsed, "
        "already built: what LangChain's own `stream()` machinery costs. `parse-floor-*` "
        "adds the least parsing any client does, without I/O: httpx-sse framing of the "
        "in-memory body, `json.loads` per event, one `AIMessageChunk` per delta. "
        f"Chunks seen per stream: {chunks}.",
        "",
    ]
    out += _cpu_table(stream, [*CLIENTS, *STREAM_FLOORS], "ms")
    out += [
        "",
        f"## A ~1M-token history ({config['turns']:,} turns) in one `invoke`",
        "",
        "Each client in a fresh interpreter; the history's `BaseMessage` list is built before "
        "timing. Peak = what the call allocated at its peak (tracemalloc, separate run).",
        "",
    ]
    out += _history_table(results["history"])
    out += ["", f"## {config['concurrency']} concurrent `ainvoke` on one instance", ""]
    out += _concurrency_table(results["concurrency"])
    out += _scale_sections(results)
    out += ["", "## Import time (fresh interpreters)", ""]
    out += _imports_table(results["imports_ms"])
    return "\n".join(out) + "\n"


def _bars(ax: Any, title: str, labels: list[str], values: list[float | None]) -> None:
    colors = [
        "#1f77b4"
        if label.startswith("kimi")
        else "#bbbbbb"
        if label.startswith(_REFERENCE_PREFIXES)
        else "#ff7f0e"
        for label in labels
    ]
    heights = [v or 0.0 for v in values]
    ax.bar(range(len(labels)), heights, color=colors)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    ax.set_title(title, fontsize=9)
    for i, value in enumerate(values):
        ax.text(i, heights[i], _fmt(value, 1), ha="center", va="bottom", fontsize=7)


def chart(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5))
    clients = list(CLIENTS)
    invoke, stream = results["invoke_cpu_ms"], results["stream_cpu_ms"]
    hist, conc, imports = results["history"], results["concurrency"], results["imports_ms"]
    invokers = [*clients, *INVOKE_FLOORS]
    streamers = [*clients, *STREAM_FLOORS]
    hist_names = ["floor", *clients]
    import_names = ["floor", "kimi", CHAT_ANTHROPIC, CHAT_OPENAI, CHAT_DEEPSEEK]
    _bars(
        axes[0][0], "client CPU per invoke (ms)", invokers, [_median(invoke, n) for n in invokers]
    )
    _bars(
        axes[0][1], "client CPU per stream (ms)", streamers, [_median(stream, n) for n in streamers]
    )
    _bars(
        axes[0][2],
        "1M-token request: wall (ms)",
        hist_names,
        [_median(hist, n, "wall_ms") for n in hist_names],
    )
    _bars(
        axes[1][0],
        "1M-token request: peak alloc (MB)",
        hist_names,
        [_median(hist, n, "peak_mb") for n in hist_names],
    )
    _bars(
        axes[1][1],
        "concurrent ainvoke: calls/s (higher is better)",
        clients,
        [_median(conc, n) for n in clients],
    )
    _bars(axes[1][2], "import time (ms)", import_names, [_median(imports, n) for n in import_names])
    fig.suptitle("langchain-kimi vs peers, same loopback replies (lower is better unless noted)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    _as_palette(path)


def _as_palette(path: Path) -> None:
    """Rewrite the chart with 64 colours: flat bars and text look the same in a third the bytes."""
    from PIL import Image  # matplotlib's own dependency

    with Image.open(path) as image:
        palette = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    palette.save(path, optimize=True)
