"""Validate wire bodies against the published OpenAPI documents copied into `spec/`.

`validate_request` also enforces "documented-only": every top-level key of a request body must be
named by the request schema of that model x protocol.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tools.paths import SPEC_DIR

_DOCS = {
    ("anthropic", "k3.1"): "anthropic-messages.kimi-k3.1-pro.yaml",
    ("anthropic", "k3"): "anthropic-messages.kimi-k3.yaml",
    ("openai", "k3.1"): "chat-completions.all-models.yaml",
    ("openai", "k3"): "chat-completions.all-models.yaml",
}
_SCHEMA_NAMES = {
    ("anthropic", "request"): "CreateMessageRequest",
    ("anthropic", "response"): "MessageResponse",
    ("anthropic", "error"): "ErrorResponse",
    ("openai", "request"): "ChatCompletionRequest",
    ("openai", "response"): "ChatCompletionResponse",
    ("openai", "error"): "ErrorResponse",
}


def _family(model: str) -> str:
    return "k3" if model == "kimi-k3" else "k3.1"


@cache
def _document(filename: str) -> dict[str, Any]:
    text = (SPEC_DIR / filename).read_text(encoding="utf-8")
    loaded: dict[str, Any] = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return loaded


def _validator(protocol: str, model: str, kind: str) -> jsonschema.protocols.Validator:
    filename = _DOCS[(protocol, _family(model))]
    document = _document(filename)
    uri = f"urn:kimi:{filename}"
    registry: Registry[Any] = Registry().with_resource(
        uri, Resource.from_contents(document, default_specification=DRAFT202012)
    )
    name = _SCHEMA_NAMES[(protocol, kind)]
    schema = {"$ref": f"{uri}#/components/schemas/{name}"}
    return jsonschema.Draft202012Validator(schema, registry=registry)


def schema_properties(protocol: str, model: str, kind: str) -> set[str]:
    document = _document(_DOCS[(protocol, _family(model))])
    props = document["components"]["schemas"][_SCHEMA_NAMES[(protocol, kind)]]["properties"]
    return set(props)


def validate_request(body: dict[str, Any], protocol: str, model: str | None = None) -> None:
    """Raise if `body` is not a valid, documented-only request for that model x protocol."""
    model = model or str(body.get("model"))
    _validator(protocol, model, "request").validate(body)
    undocumented = set(body) - schema_properties(protocol, model, "request")
    assert not undocumented, f"undocumented top-level fields for {model}: {sorted(undocumented)}"


def validate_response(body: dict[str, Any], protocol: str, model: str | None = None) -> None:
    model = model or str(body.get("model"))
    _validator(protocol, model, "response").validate(body)


def validate_error(body: dict[str, Any], protocol: str, model: str = "kimi-k3.1-pro") -> None:
    _validator(protocol, model, "error").validate(body)


def component_properties(protocol: str, model: str, component: str) -> set[str]:
    """The documented property names of one `components/schemas` entry (empty if unknown)."""
    schemas = _document(_DOCS[(protocol, _family(model))])["components"]["schemas"]
    return set((schemas.get(component) or {}).get("properties") or {})
