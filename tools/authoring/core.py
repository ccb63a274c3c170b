"""Write cassettes/core_cassettes/*.yaml: `python -m tools.authoring.core`.

Plain text, a system prompt and a two-turn conversation on each protocol, each once
non-streaming and once streaming. Every request and response body is written out by hand from
spec/*.yaml; the streams exercise the usage variants the specs allow (input counts only in
message_start or repeated in message_delta; usage in a trailing chunk, in choices[0], or both).
"""

from __future__ import annotations

from typing import Any

from langchain_kimi.testing import frames
from tools.authoring import _kit
from tools.authoring._kit import Cassettes, exchange, render

MODEL = "kimi-k3.1-pro"
SIG = (
    "EqQDCkgIBxABGAIqQNs8kMWu1Hq2XoVb7tZpRk3cJf0aLyE9gTiUw4sPnQ2mHvYdCxK6jRbA5oFz1eIlSuN7gqWy"
    "3tVhDp0kZcMxOa8SDBpG2n4rQv7yUeJwLhoMT2xRk9aBcVd3eFgHIjCq5Wm1Ns8Yt0Lr4Kp6Jz2Xv9Ub7Ci3Eh5Do1"
    "Fg8Am0Qs4Iw6Pj2Ty7Rn5Kx3Vl1GaSkimiauthoredfromspecsignatureAAAAAAAAGAE="
)
SIG2 = "EqQE" + SIG[4:]
"""The second turn's signature (a different opaque value)."""

USER_OK: list[frames.Json] = [{"role": "user", "content": "Reply with OK."}]
SYSTEM = "You are a terse assistant. Answer in one word."
Q1: frames.Json = {
    "role": "user",
    "content": "Pick a number between 1 and 3. Reply with the number only.",
}
Q2: frames.Json = {"role": "user", "content": "Add 1 to it. Reply with the number only."}
PLAIN_THINKING = ["The user asks me", " to reply with OK.", " I will do exactly that."]
SYSTEM_THINKING = ["A one-word", " answer is requested:", " OK."]
TURN1_THINKING = ["Any number from 1 to 3", " works; I pick 2."]
TURN2_THINKING = ["I picked 2 before;", " 2 + 1 = 3."]


# --- /v1/messages ----------------------------------------------------------------------------


def a_body(
    messages: list[frames.Json], system: str | None = None, *, stream: bool = False
) -> dict[str, Any]:
    body: dict[str, Any] = {"model": MODEL, "max_tokens": 131072, "messages": messages}
    if system is not None:
        body["system"] = system
    if stream:
        body["stream"] = True
    return body


def a_reply(mid: str, thinking: list[str], sig: str, text: str, usage: frames.Json) -> frames.Json:
    content: list[frames.Json] = [
        {"type": "thinking", "thinking": "".join(thinking), "signature": sig},
        {"type": "text", "text": text},
    ]
    return frames.anthropic_message(mid, MODEL, content, "end_turn", usage)


def a_stream(
    mid: str,
    thinking: list[str],
    sig: str,
    text: list[str],
    usage: frames.Json,
    *,
    cumulative: bool,
) -> str:
    """cumulative: message_delta repeats the input counts already sent in message_start."""
    final = (
        dict(usage)
        if cumulative
        else {k: usage[k] for k in ("output_tokens", "output_tokens_details")}
    )
    events = [
        frames.message_start(mid, MODEL, frames.start_usage(usage)),
        frames.block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        frames.PING,
        *[frames.block_delta(0, {"type": "thinking_delta", "thinking": p}) for p in thinking],
        frames.block_delta(0, {"type": "signature_delta", "signature": sig}),
        frames.block_stop(0),
        frames.block_start(1, {"type": "text", "text": ""}),
        *[frames.block_delta(1, {"type": "text_delta", "text": p}) for p in text],
        frames.block_stop(1),
        frames.message_delta("end_turn", final),
        frames.MESSAGE_STOP,
    ]
    return frames.frame_anthropic(events)


def anthropic_cassettes() -> Cassettes:
    files: Cassettes = {}
    mid = "msg_01KimiPlainA1b2C3d4E5f6G7"
    usage = frames.anthropic_usage_counts(12, 21, 19, read=4, write=2)
    files["core_cassettes/anthropic_plain.yaml"] = render(
        [
            exchange("anthropic", a_body(USER_OK), a_reply(mid, PLAIN_THINKING, SIG, "OK", usage)),
            exchange(
                "anthropic",
                a_body(USER_OK, stream=True),
                a_stream(mid, PLAIN_THINKING, SIG, ["O", "K"], usage, cumulative=False),
            ),
        ],
        "Plain text on /v1/messages. Streaming usage variant: input counts only in\n"
        "message_start; message_delta carries output_tokens only.",
    )

    mid = "msg_01KimiSystemH8i9J0k1L2m3"
    usage = frames.anthropic_usage_counts(25, 17, 15, write=8)
    files["core_cassettes/anthropic_system.yaml"] = render(
        [
            exchange(
                "anthropic",
                a_body(USER_OK, SYSTEM),
                a_reply(mid, SYSTEM_THINKING, SIG, "OK", usage),
            ),
            exchange(
                "anthropic",
                a_body(USER_OK, SYSTEM, stream=True),
                a_stream(mid, SYSTEM_THINKING, SIG, ["OK"], usage, cumulative=True),
            ),
        ],
        "System prompt as a top-level string. Streaming usage variant: message_delta\n"
        "repeats the cumulative input counts already sent in message_start.",
    )

    one, two = "msg_01KimiTurnOneN4o5P6q7R8", "msg_01KimiTurnTwoS9t0U1v2W3"
    usage1 = frames.anthropic_usage_counts(22, 18, 16)
    usage2 = frames.anthropic_usage_counts(9, 16, 14, read=40)
    echo: frames.Json = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "".join(TURN1_THINKING), "signature": SIG},
            {"type": "text", "text": "2"},
        ],
    }
    history = [Q1, echo, Q2]
    files["core_cassettes/anthropic_two_turn.yaml"] = render(
        [
            exchange("anthropic", a_body([Q1]), a_reply(one, TURN1_THINKING, SIG, "2", usage1)),
            exchange("anthropic", a_body(history), a_reply(two, TURN2_THINKING, SIG2, "3", usage2)),
            exchange(
                "anthropic",
                a_body([Q1], stream=True),
                a_stream(one, TURN1_THINKING, SIG, ["2"], usage1, cumulative=False),
            ),
            exchange(
                "anthropic",
                a_body(history, stream=True),
                a_stream(two, TURN2_THINKING, SIG2, ["3"], usage2, cumulative=True),
            ),
        ],
        "Two turns: the second request sends the first reply back unchanged (thinking\n"
        "block with its signature, then the text block). Streaming: turn 1 input\n"
        "counts only in message_start, turn 2 repeated in message_delta.",
    )
    return files


# --- /v1/chat/completions --------------------------------------------------------------------


def o_body(messages: list[frames.Json], *, stream: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"model": MODEL, "messages": messages}
    if stream:
        body["stream"] = True
    return body


def o_reply(cid: str, reasoning: list[str], text: str, usage: frames.Json) -> frames.Json:
    message: frames.Json = {
        "role": "assistant",
        "content": text,
        "reasoning_content": "".join(reasoning),
    }
    return frames.openai_completion(cid, MODEL, message, "stop", usage)


def o_stream(
    cid: str, reasoning: list[str], text: list[str], usage: frames.Json, where: str
) -> str:
    """where: "top" trailing usage chunk, "choice" choices[0].usage on the finish chunk, "both"."""
    chunks = [
        frames.openai_chunk(
            cid, MODEL, {"role": "assistant", "content": "", "reasoning_content": ""}
        ),
        *[frames.openai_chunk(cid, MODEL, {"reasoning_content": p}) for p in reasoning],
        *[frames.openai_chunk(cid, MODEL, {"content": p}) for p in text],
        frames.openai_chunk(cid, MODEL, {}, "stop", usage=usage if where != "top" else None),
    ]
    if where != "choice":
        chunks.append(frames.openai_usage_chunk(cid, MODEL, usage))
    return frames.frame_openai(chunks)


def openai_cassettes() -> Cassettes:
    files: Cassettes = {}
    cid = "chatcmpl-kimiPlain7Qx2Lm9Vb4"
    usage = frames.openai_usage_counts(18, 21, 19, cached=4, written=2)
    files["core_cassettes/openai_plain.yaml"] = render(
        [
            exchange("openai", o_body(USER_OK), o_reply(cid, PLAIN_THINKING, "OK", usage)),
            exchange(
                "openai",
                o_body(USER_OK, stream=True),
                o_stream(cid, PLAIN_THINKING, ["O", "K"], usage, "top"),
            ),
        ],
        "Plain text on /v1/chat/completions. Streaming usage variant: a trailing\n"
        "top-level usage chunk with empty choices.",
    )

    cid = "chatcmpl-kimiSystem3Fh8Kd1Wp6"
    usage = frames.openai_usage_counts(33, 17, 15, written=8)
    messages = [{"role": "system", "content": SYSTEM}, *USER_OK]
    files["core_cassettes/openai_system.yaml"] = render(
        [
            exchange("openai", o_body(messages), o_reply(cid, SYSTEM_THINKING, "OK", usage)),
            exchange(
                "openai",
                o_body(messages, stream=True),
                o_stream(cid, SYSTEM_THINKING, ["OK"], usage, "choice"),
            ),
        ],
        "System prompt as the first message. Streaming usage variant: usage only in\n"
        "choices[0].usage of the finish chunk.",
    )

    one, two = "chatcmpl-kimiTurnOne5Rt7Yu2Io9", "chatcmpl-kimiTurnTwo8Pa3Sd6Fg1"
    usage1 = frames.openai_usage_counts(22, 18, 16)
    usage2 = frames.openai_usage_counts(49, 16, 14, cached=40)
    echo: frames.Json = {
        "role": "assistant",
        "content": "2",
        "reasoning_content": "".join(TURN1_THINKING),
    }
    history = [Q1, echo, Q2]
    files["core_cassettes/openai_two_turn.yaml"] = render(
        [
            exchange("openai", o_body([Q1]), o_reply(one, TURN1_THINKING, "2", usage1)),
            exchange("openai", o_body(history), o_reply(two, TURN2_THINKING, "3", usage2)),
            exchange(
                "openai",
                o_body([Q1], stream=True),
                o_stream(one, TURN1_THINKING, ["2"], usage1, "both"),
            ),
            exchange(
                "openai",
                o_body(history, stream=True),
                o_stream(two, TURN2_THINKING, ["3"], usage2, "both"),
            ),
        ],
        "Two turns: the second request echoes the first reply as an assistant message\n"
        "with content and reasoning_content unchanged. Streaming usage variant: both\n"
        "choices[0].usage on the finish chunk and a trailing top-level usage chunk\n"
        "(the same numbers twice; counted once).",
    )
    return files


def cassettes() -> Cassettes:
    return {**anthropic_cassettes(), **openai_cassettes()}


if __name__ == "__main__":
    _kit.main(cassettes())
