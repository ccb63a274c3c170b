"""Request bodies checked against the published OpenAPI documents, shipped with the package.

The three documents are the gateway's own (`spec/` in the repository, `langchain_kimi/testing/spec/`
in the wheel): `CreateMessageRequest` for `/v1/messages` (one document for K3.1, one for
kimi-k3) and `ChatCompletionRequest` for `/v1/chat/completions` (all models).
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

try:
    import jsonschema  # type: ignore[import-untyped]
    import yaml
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012
except ImportError as exc:  # pragma: no cover - depends on the environment
    msg = (
        "langchain_kimi.testing validates requests against the published documents with "
        "jsonschema and PyYAML: pip install 'langchain-kimi[testing]'"
    )
    raise ImportError(msg) from exc

_DOCUMENTS = {
    ("anthropic", "k3.1"): "anthropic-messages.kimi-k3.1-pro.yaml",
    ("anthropic", "k3"): "anthropic-messages.kimi-k3.yaml",
    ("openai", "k3.1"): "chat-completions.all-models.yaml",
    ("openai", "k3"): "chat-completions.all-models.yaml",
}
_REQUEST_SCHEMAS = {"anthropic": "CreateMessageRequest", "openai": "ChatCompletionRequest"}
_RESPONSE_SCHEMAS = {"anthropic": "MessageResponse", "openai": "ChatCompletionResponse"}


def spec_dir() -> Path:
    """The documents: package data in an installed wheel, `spec/` in a source checkout."""
    packaged = Path(__file__).with_name("spec")
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "spec"


@cache
def _document(filename: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((spec_dir() / filename).read_text(encoding="utf-8"))
    return loaded


@cache
def _validator(protocol: str, family: str, kind: str = "request") -> Any:
    filename = _DOCUMENTS[(protocol, family)]
    uri = f"urn:kimi:{filename}"
    resource = Resource.from_contents(_document(filename), default_specification=DRAFT202012)
    registry: Registry[Any] = Registry().with_resource(uri, resource)
    names = _REQUEST_SCHEMAS if kind == "request" else _RESPONSE_SCHEMAS
    schema = {"$ref": f"{uri}#/components/schemas/{names[protocol]}"}
    return jsonschema.Draft202012Validator(schema, registry=registry)


def request_problems(body: Any, protocol: str) -> list[str]:
    """Where `body` breaks the request schema of its model x protocol ([] when it does not).
    Remembered per body: test suites send the same few bodies over and over, and a schema
    walk costs about a millisecond."""
    return list(_request_problems(json.dumps(body, sort_keys=True), protocol))


@lru_cache(maxsize=4096)
def _request_problems(text: str, protocol: str) -> tuple[str, ...]:
    body = json.loads(text)
    family = "k3" if isinstance(body, dict) and body.get("model") == "kimi-k3" else "k3.1"
    return tuple(_problems(_validator(protocol, family), body))


def response_problems(body: Any, protocol: str, model: str) -> list[str]:
    """Where a JSON reply breaks the response schema (`MessageResponse`,
    `ChatCompletionResponse`) of `model` x `protocol` ([] when it does not)."""
    return _problems(_validator(protocol, "k3" if model == "kimi-k3" else "k3.1", "response"), body)


def response_components(protocol: str, model: str) -> dict[str, Any]:
    """The schemas of the document answering `model` x `protocol` (`components.schemas`)."""
    family = "k3" if model == "kimi-k3" else "k3.1"
    schemas: dict[str, Any] = _document(_DOCUMENTS[(protocol, family)])["components"]["schemas"]
    return schemas


def _problems(validator: Any, body: Any) -> list[str]:
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.path))
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(body)'}: {_short(e.message)}"
        for e in errors[:5]
    ]


def _short(text: str, limit: int = 300) -> str:
    """jsonschema quotes the offending value whole: a long message would bury the reason."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def schema_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """Why `value` breaks `schema` (a request's own output schema); None when it does not, or
    when the schema itself is not one jsonschema can read."""
    try:
        validator = _schema_validator(json.dumps(schema, sort_keys=True))
    except jsonschema.SchemaError:
        return None
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    return None if error is None else _short(error.message, 120)


@lru_cache(maxsize=256)
def _schema_validator(text: str) -> Any:
    """A checked validator for a request's output schema (checking a schema costs more than
    validating a value: `jsonschema.validate` does both every time)."""
    schema = json.loads(text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)
