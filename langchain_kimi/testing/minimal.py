"""Replies cut down to what the published documents promise (the `reply-optional-fields` row).

The response schemas (`MessageResponse`, `MessageUsage`, `ContentBlock`; `ChatCompletionResponse`,
`ChatMessage`, `ToolCall`, `ChatUsage`) mark few keys `required`: none of a reply's envelope,
none of its usage, not a thinking block's `signature` nor a tool call's `function.name`. A
literal "required keys only" reply would be `{}` and carry no answer, so the cut keeps a key the
schema does not require only when it says something the step scripted: it drops every optional
key whose value is empty (null, 0, "", [] or {}, after its own cut) or the one value the
schema's enum allows (`type: message`, `role: assistant`). A client that reads an optional key
unguarded (`usage["prompt_tokens_details"]["cache_write_tokens"]`) fails on these replies, as
it would on a service that omits what the documents let it omit.

Keys the schemas do not name are kept as they are: the stream envelopes (`message_start`'s
`type`, a chunk's `delta`, a streamed tool call's `index`) follow Anthropic's and OpenAI's stream
formats, which the documents name ("suele incluir message_start, content_block_*, ...") without a
schema. Where a stream part is a documented object, it is cut by that object's schema: the
`message` of `message_start` and the `delta` of `message_delta` as a `MessageResponse`, a
`content_block` as a `ContentBlock`, a chunk as a `ChatCompletionResponse` whose choices carry a
`ChatMessage` as `delta`. The one exception is the trailing usage chunk's empty `choices`: its
shape is another row's (`chat-stream-usage`, "usage on a trailing chunk with empty choices").
"""

from __future__ import annotations

from typing import Any

from langchain_kimi.testing.documents import response_components
from langchain_kimi.testing.frames import Json

Schema = dict[str, Any]


def reply(body: Json, protocol: str, model: str) -> Json:
    """A whole JSON reply (`MessageResponse` / `ChatCompletionResponse`), cut."""
    name = "MessageResponse" if protocol == "anthropic" else "ChatCompletionResponse"
    out: Json = _Cut(protocol, model).value(body, {"$ref": f"#/components/schemas/{name}"})
    return out


def anthropic_event(event: Json, model: str) -> Json:
    """One Messages stream event, its documented parts cut."""
    cut = _Cut("anthropic", model)
    parts = {
        "message": "MessageResponse",
        "content_block": "ContentBlock",
        "delta": "MessageResponse" if event.get("type") == "message_delta" else None,
        "usage": "MessageUsage",
    }
    out = dict(event)
    for key, name in parts.items():
        if name is not None and key in out:
            out[key] = cut.value(out[key], {"$ref": f"#/components/schemas/{name}"})
    return out


def openai_chunk(chunk: Json, model: str) -> Json:
    """One Chat Completions stream chunk: a `ChatCompletionResponse` whose choices hold a
    `ChatMessage` under `delta` instead of `message`."""
    cut = _Cut("openai", model)
    out: Json = cut.value(chunk, {"$ref": "#/components/schemas/ChatCompletionResponse"})
    if "choices" in chunk:  # the trailing usage chunk keeps its `[]` (the chat-stream-usage row)
        out.setdefault("choices", [])
    message = {"$ref": "#/components/schemas/ChatMessage"}
    for choice in out.get("choices") or []:
        if "delta" in choice:
            # A delta carries `role` only in the first chunk: the cut never adds a key.
            choice["delta"] = cut.value(choice["delta"], message)
    return out


class _Cut:
    def __init__(self, protocol: str, model: str) -> None:
        self.components = response_components(protocol, model)

    def resolve(self, schema: Schema) -> Schema:
        while "$ref" in schema:
            schema = self.components[schema["$ref"].rsplit("/", 1)[-1]]
        return schema

    def value(self, value: Any, schema: Schema) -> Any:
        schema = self.branch(value, self.resolve(schema))
        if isinstance(value, dict) and "properties" in schema:
            return self.object(value, schema)
        if isinstance(value, list) and "items" in schema:
            return [self.value(item, schema["items"]) for item in value]
        return value

    def object(self, value: Json, schema: Schema) -> Json:
        required = set(schema.get("required", ()))
        out: Json = {}
        for key, item in value.items():
            sub = schema["properties"].get(key)
            if sub is None:
                out[key] = item  # not named by the schema: nothing to judge it by
                continue
            item = self.value(item, sub)
            if key in required or not (_empty(item) or _constant(item, self.resolve(sub))):
                out[key] = item
        return out

    def branch(self, value: Any, schema: Schema) -> Schema:
        """The `oneOf` branch `value` takes: the block whose `type` enum names its type, the
        array form for a list; the schema itself otherwise."""
        for option in map(self.resolve, schema.get("oneOf", ())):
            if isinstance(value, dict) and value.get("type") in (
                option.get("properties", {}).get("type", {}).get("enum", ())
            ):
                return option
            if isinstance(value, list) and option.get("type") == "array":
                return option
        return schema


def _empty(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return value is None or value == 0 or value in ("", [], {})


def _constant(value: Any, schema: Schema) -> bool:
    """The schema allows one value and `value` is it: the key says nothing."""
    allowed = [v for v in schema.get("enum", ()) if v is not None]
    return len(allowed) == 1 and value == allowed[0]
