"""Write cassettes/runnables/*.yaml: `python -m tools.authoring.write_runnables`.

Request bodies written out per protocol; see tests/integration_tests/test_runnables.py.
"""

from __future__ import annotations

from typing import Any

from tools.authoring import _kit
from tools.authoring._kit import Cassettes, Reply, exchange, interaction, render

M = "kimi-k3.1-pro"
FAST = "kimi-k3.1-pro-highspeed"
ERRORS: dict[str, dict[str, Any]] = {
    "openai": {
        "error": {"message": "internal error", "type": "server_error", "code": "internal_error"}
    },
    "anthropic": {
        "type": "error",
        "error": {"type": "api_error", "message": "internal error"},
        "request_id": "req_authored_500",
    },
}


def body(protocol: str, prompt: str, model: str = M, **fields: Any) -> dict[str, Any]:
    messages = [{"role": "user", "content": prompt}]
    if protocol == "openai":
        return {"model": model, "messages": messages, **fields}
    return {
        "model": model,
        "max_tokens": fields.pop("max_tokens", 131072),
        "messages": messages,
        **fields,
    }


def server_error(protocol: str, request: dict[str, Any]) -> dict[str, Any]:
    status = (500, "Internal Server Error")
    return exchange(protocol, request, ERRORS[protocol], status, shared_provenance=True)


def ok(rid: str, text: str, model: str = M) -> Reply:
    return Reply(
        rid,
        text,
        f"The user asked for {text!r}; answer briefly.",
        model=model,
        plain_input=11,
        output=18,
        reasoning_tokens=12,
    )


def cassettes() -> Cassettes:
    files: Cassettes = {}
    for p in ("openai", "anthropic"):
        pre = "chatcmpl-run-" if p == "openai" else "msg_run_"
        cases: dict[str, list[dict[str, Any]]] = {
            "test_rate_limiter": [interaction(p, body(p, "Reply with OK."), ok(pre + "rl", "OK"))],
            "test_stream_callbacks_get_every_token": [
                interaction(
                    p,
                    {**body(p, "Count to three."), "stream": True},
                    ok(pre + "count", "One, two, three, and that is all."),
                )
            ],
            "test_with_fallbacks": [
                server_error(p, body(p, "Say hi.")),
                interaction(p, body(p, "Say hi.", FAST), ok(pre + "fallback", "Hi!", FAST)),
            ],
            "test_with_retry": [
                server_error(p, body(p, "Say hi.")),
                interaction(p, body(p, "Say hi."), ok(pre + "retry", "Hi!")),
            ],
            "test_batch_max_concurrency": [
                interaction(
                    p, body(p, f"Write the number {n} as a word."), ok(f"{pre}batch{n}", word)
                )
                for n, word in ((1, "One."), (2, "Two."), (3, "Three."))
            ],
            "test_astream_events_v2": [
                interaction(
                    p, {**body(p, "Hello"), "stream": True}, ok(pre + "ev2", "Hello there!")
                )
            ],
            "test_astream_events_v3": [
                interaction(
                    p, {**body(p, "Hello"), "stream": True}, ok(pre + "ev3", "Hello there!")
                )
            ],
        }
        # Per-call model override, output cap and stop (native on anthropic K3.1 only).
        if p == "openai":
            ls_body = {
                "model": FAST,
                "messages": [{"role": "user", "content": "Hello"}],
                "max_completion_tokens": 50,
            }
        else:
            ls_body = {
                "model": FAST,
                "max_tokens": 50,
                "messages": [{"role": "user", "content": "Hello"}],
                "stop_sequences": ["END"],
            }
        cases["test_ls_params_reach_the_tracer"] = [
            interaction(p, ls_body, ok(pre + "ls", "Hello!", FAST))
        ]
        for name, items in cases.items():
            files[f"runnables/{name}[{p}].yaml"] = render(items)
    return files


if __name__ == "__main__":
    _kit.main(cassettes())
