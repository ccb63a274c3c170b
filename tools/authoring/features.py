"""Write cassettes/features_cassettes/*.yaml: `python -m tools.authoring.features`.

Kimi features on both protocols: reasoning effort and cache TTL (with the usage split they
produce), native and emulated stop sequences, and multimodal input. Every request and response
body is written out by hand from spec/*.yaml.
"""

from __future__ import annotations

from langchain_kimi.testing import frames
from tools.authoring import _kit
from tools.authoring import _wire as wire
from tools.authoring._kit import Cassettes, body_first, exchange, render

ANTH, OAI = "anthropic", "openai"
SIG = "EqQDCkgIBxABGAIqQKimiWebSearchAuthoredFromSpecSignatureN4o5P6q7R8s9T0u1V2w3X4y5Z6a7B8c9D0e1F2g3H4i5J6k7L8m9N0o1P2q3R4s5T6u7V8w9X0y1Z2kimiauthoredfromspecsignatureAAAAAAAAGAE="
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
MP4 = "AAAAIGZ0eXBpc29tAAACAGlzb21pc28yYXZjMW1wNDE="


def interaction(protocol: str, req: frames.Json, resp: frames.Json | str) -> frames.Json:
    """A hand-written exchange, request body before headers as first committed."""
    return body_first(exchange(protocol, req, resp))


def amsg(
    model: str,
    mid: str,
    content: list[frames.Json],
    usage: frames.Json,
    stop_reason: str = "end_turn",
    stop_sequence: str | None = None,
) -> frames.Json:
    return frames.anthropic_message(mid, model, content, stop_reason, usage, stop_sequence)


def a_stream(
    model: str,
    mid: str,
    thinking: str,
    texts: list[str],
    start_usage: frames.Json,
    delta_usage: frames.Json,
    stop_reason: str = "end_turn",
    stop_sequence: str | None = None,
) -> str:
    events = [
        frames.message_start(mid, model, start_usage),
        frames.block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        frames.PING,
        frames.block_delta(0, {"type": "thinking_delta", "thinking": thinking}),
        frames.block_delta(0, {"type": "signature_delta", "signature": SIG}),
        frames.block_stop(0),
        frames.block_start(1, {"type": "text", "text": ""}),
        *[frames.block_delta(1, {"type": "text_delta", "text": t}) for t in texts],
        frames.block_stop(1),
        frames.message_delta(stop_reason, delta_usage, stop_sequence),
        frames.MESSAGE_STOP,
    ]
    return frames.frame_anthropic(events)


def completion(
    model: str, cid: str, content: str, reasoning: str, usage: frames.Json, finish: str = "stop"
) -> frames.Json:
    message: frames.Json = {"role": "assistant", "content": content, "reasoning_content": reasoning}
    return frames.openai_completion(cid, model, message, finish, usage)


def o_stream(
    model: str,
    cid: str,
    reasoning: str,
    texts: list[str],
    usage: frames.Json,
    usage_in_choice: bool = False,
) -> str:
    chunks = [
        frames.openai_chunk(
            cid, model, {"role": "assistant", "content": "", "reasoning_content": ""}
        ),
        frames.openai_chunk(cid, model, {"reasoning_content": reasoning}),
        *[frames.openai_chunk(cid, model, {"content": t}) for t in texts],
    ]
    if usage_in_choice:
        chunks.append(frames.openai_chunk(cid, model, {}, "stop", usage=usage))
    else:
        chunks += [
            frames.openai_chunk(cid, model, {}, "stop"),
            frames.openai_usage_chunk(cid, model, usage),
        ]
    return frames.frame_openai(chunks)


def cassettes() -> Cassettes:
    files: Cassettes = {}
    # ---- 1. anthropic K3.1: effort alias + 1h cache TTL, usage with the 5m/1h split
    k31 = "kimi-k3.1-pro"
    ctx = "Here is our style guide: " + "Prefer short sentences. " * 8
    long_prompt = ctx + "Summarize it in three words."
    req: frames.Json = {
        "model": k31,
        "max_tokens": 131072,
        "messages": [{"role": "user", "content": long_prompt}],
        "output_config": {"effort": "high"},
        "cache_control": {"type": "ephemeral", "ttl": "1h"},
    }
    usage: frames.Json = {
        "input_tokens": 30,
        "cache_creation_input_tokens": 2048,
        "cache_read_input_tokens": 1000,
        "output_tokens": 120,
        "output_tokens_details": {"thinking_tokens": 100},
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 2048},
    }
    thinking = "The guide keeps repeating one rule."
    files["features_cassettes/anthropic_effort_cache.yaml"] = render(
        [
            interaction(
                ANTH,
                req,
                amsg(
                    k31,
                    "msg_01KimiEffortCacheZ1x2C3",
                    [
                        {"type": "thinking", "thinking": thinking, "signature": SIG},
                        {"type": "text", "text": "Prefer short sentences."},
                    ],
                    usage,
                ),
            ),
            interaction(
                ANTH,
                {**req, "stream": True},
                a_stream(
                    k31,
                    "msg_01KimiEffortCacheZ1x2C3",
                    thinking,
                    ["Prefer short", " sentences."],
                    frames.start_usage(usage),
                    usage,
                ),
            ),
        ],
        (
            'kimi-k3.1-pro on /v1/messages with reasoning_effort="medium" (sent as output_config.effort\n'
            '"high") and cache_ttl="1h" (top-level cache_control). Usage: plain input, cache reads and\n'
            "cache writes split by TTL (all 1h). Streaming: message_start has the input counts,\n"
            "message_delta repeats everything with the final output counts."
        ),
    )

    # ---- 2. openai K3.1 highspeed: xhigh -> max, 5m cache TTL, usage with cache reads/writes
    highspeed = "kimi-k3.1-pro-highspeed"
    req = {
        "model": highspeed,
        "messages": [{"role": "user", "content": long_prompt}],
        "reasoning_effort": "max",
        "prompt_cache_options": {"mode": "implicit", "ttl": "5m"},
    }
    o_usage: frames.Json = {
        "prompt_tokens": 3078,
        "completion_tokens": 120,
        "total_tokens": 3198,
        "prompt_tokens_details": {"cached_tokens": 1000, "cache_write_tokens": 2048},
        "completion_tokens_details": {"reasoning_tokens": 100},
    }
    files["features_cassettes/openai_effort_cache.yaml"] = render(
        [
            interaction(
                OAI,
                req,
                completion(
                    highspeed,
                    "chatcmpl-kimiEffortCache4V5b6N",
                    "Prefer short sentences.",
                    thinking,
                    o_usage,
                ),
            ),
            interaction(
                OAI,
                {**req, "stream": True},
                o_stream(
                    highspeed,
                    "chatcmpl-kimiEffortCache4V5b6N",
                    thinking,
                    ["Prefer short", " sentences."],
                    o_usage,
                    usage_in_choice=True,
                ),
            ),
        ],
        (
            'kimi-k3.1-pro-highspeed on /v1/chat/completions with reasoning_effort="xhigh" (sent as\n'
            '"max") and cache_ttl="5m" (prompt_cache_options). prompt_tokens already includes cache\n'
            "reads and writes. Streaming: usage inside choices[0] of the finish chunk."
        ),
    )

    # ---- 3. openai kimi-k3: effort max, emulated stop (no `stop` field on the wire)
    k3 = "kimi-k3"
    stop_prompt = "List three primary colours, one per line, then write END."
    req = {
        "model": k3,
        "messages": [{"role": "user", "content": stop_prompt}],
        "reasoning_effort": "max",
    }
    k3u: frames.Json = {
        "prompt_tokens": 20,
        "completion_tokens": 40,
        "total_tokens": 60,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 25},
    }
    files["features_cassettes/openai_k3_stop.yaml"] = render(
        [
            interaction(
                OAI,
                req,
                completion(
                    k3,
                    "chatcmpl-kimiK3Stop7M8n9B",
                    "Red\nYellow\nBlue\nEND\nThat is all.",
                    "Three primaries, then END.",
                    k3u,
                ),
            ),
            interaction(
                OAI,
                {**req, "stream": True},
                o_stream(
                    k3,
                    "chatcmpl-kimiK3Stop7M8n9B",
                    "Three primaries, then END.",
                    ["Red\nYel", "low\nBlue\nE", "ND\nThat", " is all."],
                    k3u,
                ),
            ),
        ],
        (
            'kimi-k3 on /v1/chat/completions with reasoning_effort="max" and stop=["END"]: the schema\n'
            'has no stop field, so nothing is sent and ChatKimi cuts the answer before "END" (the\n'
            "stream splits the stop string across two chunks)."
        ),
    )

    # ---- 4. anthropic K3.1 native stop_sequences
    req = {
        "model": k31,
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": stop_prompt}],
        "stop_sequences": ["END", "STOP"],
    }
    a_usage: frames.Json = {
        "input_tokens": 21,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 30,
        "output_tokens_details": {"thinking_tokens": 18},
    }
    files["features_cassettes/anthropic_stop.yaml"] = render(
        [
            interaction(
                ANTH,
                req,
                amsg(
                    k31,
                    "msg_01KimiStopNativeP0o9I8",
                    [
                        {"type": "thinking", "thinking": "Three primaries.", "signature": SIG},
                        {"type": "text", "text": "Red\nYellow\nBlue\n"},
                    ],
                    a_usage,
                    "end_turn",
                    "END",
                ),
            ),
            interaction(
                ANTH,
                {**req, "stream": True},
                a_stream(
                    k31,
                    "msg_01KimiStopNativeP0o9I8",
                    "Three primaries.",
                    ["Red\nYellow", "\nBlue\n"],
                    {
                        "input_tokens": 21,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "output_tokens": 1,
                    },
                    {"output_tokens": 30, "output_tokens_details": {"thinking_tokens": 18}},
                    "end_turn",
                    "END",
                ),
            ),
        ],
        (
            'kimi-k3.1-pro on /v1/messages with stop=["END", "STOP"] and max_tokens=1024: native\n'
            "stop_sequences; the service excludes the match and reports it in stop_sequence."
        ),
    )

    # ---- 5. anthropic kimi-k3: emulated stop, no stop_sequences on the wire
    req = {
        "model": k3,
        "max_tokens": 131072,
        "messages": [{"role": "user", "content": stop_prompt}],
    }
    files["features_cassettes/anthropic_k3_stop.yaml"] = render(
        [
            interaction(
                ANTH,
                req,
                amsg(
                    k3,
                    "msg_01KimiK3StopU7y6T5",
                    [
                        {"type": "thinking", "thinking": "Three primaries.", "signature": SIG},
                        {"type": "text", "text": "Red\nYellow\nBlue\nEND"},
                    ],
                    a_usage,
                ),
            ),
            interaction(
                ANTH,
                {**req, "stream": True},
                a_stream(
                    k3,
                    "msg_01KimiK3StopU7y6T5",
                    "Three primaries.",
                    ["Red\nYellow\nBlue\nE", "ND"],
                    {
                        "input_tokens": 21,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "output_tokens": 1,
                    },
                    {"output_tokens": 30, "output_tokens_details": {"thinking_tokens": 18}},
                ),
            ),
        ],
        (
            'kimi-k3 on /v1/messages with stop=["END"]: its schema has no stop_sequences, so nothing\n'
            'is sent and ChatKimi cuts the answer before "END", in invoke and in streaming.'
        ),
    )

    # ---- 6. anthropic K3.1 multimodal: images in the user turn and in a tool result
    req = {
        "model": k31,
        "max_tokens": 131072,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What do these two images show?"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                    },
                    {
                        "type": "image",
                        "source": {"type": "url", "url": "https://example.com/cat.jpg"},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    wire.FOREIGN_THINKING,  # a hand-written tool-call turn: ChatKimi's placeholder
                    {
                        "type": "tool_use",
                        "id": "toolu_01KimiShot",
                        "name": "screenshot",
                        "input": {},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01KimiShot",
                        "content": [
                            {"type": "text", "text": "Screen captured."},
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": PNG,
                                },
                            },
                        ],
                    }
                ],
            },
        ],
    }
    files["features_cassettes/anthropic_multimodal.yaml"] = render(
        [
            interaction(
                ANTH,
                req,
                amsg(
                    k31,
                    "msg_01KimiImagesL4k3J2",
                    [
                        {
                            "type": "thinking",
                            "thinking": "A pixel, a cat, a screen.",
                            "signature": SIG,
                        },
                        {"type": "text", "text": "A single pixel, a cat and your screen."},
                    ],
                    {
                        "input_tokens": 1600,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "output_tokens": 25,
                        "output_tokens_details": {"thinking_tokens": 10},
                    },
                ),
            ),
        ],
        (
            "kimi-k3.1-pro on /v1/messages: a LangChain v1 base64 image and an OpenAI-style http\n"
            "image_url part become image blocks (base64 / url sources); a ToolMessage holding text and\n"
            "an image becomes a tool_result with a block array."
        ),
    )

    # ---- 7. openai: image (data URL + http URL) and video
    req = {
        "model": k3,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Compare the image with the video."},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG}},
                    {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
                    {"type": "video_url", "video_url": {"url": "data:video/mp4;base64," + MP4}},
                ],
            }
        ],
    }
    files["features_cassettes/openai_multimodal.yaml"] = render(
        [
            interaction(
                OAI,
                req,
                completion(
                    k3,
                    "chatcmpl-kimiMedia1Q2w3E",
                    "Both show a cat.",
                    "Image: cat; video: cat.",
                    {"prompt_tokens": 2400, "completion_tokens": 12, "total_tokens": 2412},
                ),
            ),
        ],
        (
            "kimi-k3 on /v1/chat/completions: a LangChain v1 base64 image becomes a data URL\n"
            "image_url part, an http image URL stays a URL, a v1 base64 video becomes a video_url part."
        ),
    )

    return files


if __name__ == "__main__":
    _kit.main(cassettes())
