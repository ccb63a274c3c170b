"""A readable YAML cassette format for vcrpy ("kimiyaml").

vcrpy hands serializers ``{"version": 1, "interactions": [{"request": {..., "body": str},
"response": {"status": {...}, "headers": {...}, "body": {"string": str}}}]}``. On disk, bodies are
written in the most readable lossless form:

- ``json:``   a JSON object/array body as a YAML mapping/list (re-encoded with ``json.dumps``;
              the ``json_body`` matcher compares requests as parsed JSON, so spacing is irrelevant);
- ``sse: |``  a ``text/event-stream`` body as a literal block, byte for byte;
- ``string:`` anything else, as is.

``deserialize`` turns these back into the plain strings vcrpy expects.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

PROVENANCE_HEADER = "x-cassette-provenance"
AUTHORED = "authored-from-spec"
AUTHORED_COMMENT = (
    "# Authored by hand from the published API spec (spec/*.yaml), not recorded from the live\n"
    "# service. Responses carry the header x-cassette-provenance: authored-from-spec.\n"
)


# libyaml's loader when PyYAML has it (the pure-Python one is ~10x slower on the cassettes).
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(source: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.load(source, Loader=_Loader) or {}
    return data


class _Dumper(yaml.SafeDumper):
    pass


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # PyYAML silently falls back to a quoted scalar when a literal block cannot hold the text
    # exactly (trailing spaces, tabs, CR), so this never loses bytes.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _header(headers: dict[str, Any], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return str(value[0] if isinstance(value, list) and value else value)
    return ""


def _pack_body(text: str | None, content_type: str) -> dict[str, Any] | None:
    if text is None:
        return None
    if "text/event-stream" in content_type or text.startswith(("event:", "data:")):
        return {"sse": text}
    try:
        parsed = json.loads(text)
    except ValueError:
        return {"string": text}
    if isinstance(parsed, dict | list):
        return {"json": parsed}
    return {"string": text}


def _unpack_body(body: Any) -> str | None:
    if body is None or isinstance(body, str):
        return body
    if "json" in body:
        return json.dumps(body["json"], ensure_ascii=False)
    if "sse" in body:
        return str(body["sse"])
    return None if body.get("string") is None else str(body["string"])


def _as_text(value: Any) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return None if value is None else str(value)


def serialize(cassette: dict[str, Any]) -> str:
    """vcrpy's cassette dict -> readable YAML text."""
    interactions = []
    authored = False
    for interaction in cassette["interactions"]:
        request = dict(interaction["request"])
        response = dict(interaction["response"])
        request_type = _header(request.get("headers", {}), "content-type")
        request["body"] = _pack_body(_as_text(request.get("body")), request_type)
        response_type = _header(response.get("headers", {}), "content-type")
        body = response.get("body", {})
        text = _as_text(body.get("string")) if isinstance(body, dict) else _as_text(body)
        response["body"] = _pack_body(text, response_type) or {"string": ""}
        authored = authored or _header(response.get("headers", {}), PROVENANCE_HEADER) == AUTHORED
        interactions.append({"request": request, "response": response})
    data = {"interactions": interactions, "version": cassette.get("version", 1)}
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return (AUTHORED_COMMENT if authored else "") + text


def deserialize(text: str) -> dict[str, Any]:
    """Readable YAML text -> vcrpy's cassette dict."""
    data = _load(text)
    interactions = []
    for interaction in data.get("interactions", []):
        request = dict(interaction["request"])
        request["body"] = _unpack_body(request.get("body"))
        response = dict(interaction["response"])
        response["body"] = {"string": _unpack_body(response.get("body")) or ""}
        interactions.append({"request": request, "response": response})
    return {"interactions": interactions, "version": data.get("version", 1)}


def load_interactions(path: str) -> list[dict[str, Any]]:
    """The interactions of a cassette file with bodies still in their readable form."""
    with open(path, encoding="utf-8") as handle:
        data = _load(handle)
    return list(data.get("interactions", []))


MATCH_ON = ["method", "scheme", "host", "port", "path", "json_body"]


def json_body_matcher(r1: Any, r2: Any) -> None:
    """vcr matcher: request bodies equal as parsed JSON (key order and spacing ignored)."""

    def parse(body: Any) -> Any:
        if body is None or body in (b"", ""):
            return None
        if isinstance(body, bytes):
            body = body.decode("utf-8")
        try:
            return json.loads(body)
        except ValueError:
            return body

    left, right = parse(r1.body), parse(r2.body)
    assert left == right, f"request bodies differ:\n{left!r}\n!=\n{right!r}"


def replay_vcr(record_mode: str = "none") -> Any:
    """A vcrpy recorder that reads and writes the kimiyaml format and matches JSON bodies."""
    import sys

    import vcr  # type: ignore[import-untyped]

    recorder = vcr.VCR(record_mode=record_mode, serializer="kimiyaml", match_on=MATCH_ON)
    recorder.register_serializer("kimiyaml", sys.modules[__name__])
    recorder.register_matcher("json_body", json_body_matcher)
    return recorder
