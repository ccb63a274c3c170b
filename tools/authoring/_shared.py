"""Inputs shared by both protocols' standard-suite cassettes, written out by hand.

Tool schemas are what `langchain_core.utils.function_calling.convert_to_openai_tool` makes of
the suite's tools (titles removed, pydantic constraints kept); output schemas are what
`convert_to_json_schema` makes of the suite's Joke classes. The prompts are the suite's own.
"""

from __future__ import annotations

from typing import Any

from tools.authoring._kit import Call, Reply

PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGOot98PAAK+AX5l2oU9AAAAAElFTkSuQmCC"
)
"""The 1x1 PNG the test module serves instead of the suite's GitHub download (no network)."""
IMAGE_URL = (
    "https://raw.githubusercontent.com/langchain-ai/docs/4d11d08b6b0e210bd456943f7a22febbd168b543"
    "/src/images/agentic-rag-output.png"
)

MAGIC = {
    "name": "magic_function",
    "description": "Apply a magic function to an input.",
    "parameters": {
        "type": "object",
        "properties": {
            "input": {"type": "integer", "exclusiveMinimum": -1000, "exclusiveMaximum": 1000}
        },
        "required": ["input"],
    },
}
MAGIC_NO_ARGS = {
    "name": "magic_function_no_args",
    "description": "Calculate a magic function.",
    "parameters": {"type": "object", "properties": {}},
}
ADDER = {
    "name": "my_adder_tool",
    "description": (
        "Tool that adds two integers.\n\n            Takes two integers, a and b, and returns "
        "their sum."
    ),
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}
WEATHER_AGENT = {
    "name": "get_weather",
    "description": "Get the weather at a location.",
    "parameters": {
        "type": "object",
        "properties": {"location": {"type": "string"}},
        "required": ["location"],
    },
}
WEATHER_CHOICE = {**WEATHER_AGENT, "description": "Get weather at a location."}
GREETING = {
    "name": "greeting_generator",
    "description": "Generate a greeting in a particular style of speaking.",
    "parameters": {
        "type": "object",
        "properties": {"answer_style": {"type": "string"}},
        "required": ["answer_style"],
    },
}
UNICODE_CUSTOMER = {
    "name": "unicode_customer",
    "description": (
        "Tool for creating a customer with Unicode name.\n\n    Args:\n        customer_name: "
        "The customer's name in their native language.\n        description: Description of "
        "the customer.\n\n    Returns:\n        A confirmation message about the customer "
        "creation."
    ),
    "parameters": {
        "type": "object",
        "properties": {"customer_name": {"type": "string"}, "description": {"type": "string"}},
        "required": ["customer_name", "description"],
    },
}
RANDOM_IMAGE = {
    "name": "random_image",
    "description": "Return a random image.",
    "parameters": {"type": "object", "properties": {}},
}

_SETUP = {"type": "string", "description": "question to set up a joke"}
_PUNCHLINE = {"type": "string", "description": "answer to resolve the joke"}


def joke_schema(title: str = "Joke", **extra: Any) -> dict[str, Any]:
    """The Joke / JokeDict JSON schema (`convert_to_json_schema` form)."""
    return {
        "type": "object",
        "title": title,
        "description": "Joke to tell user.",
        "properties": {"setup": _SETUP, "punchline": _PUNCHLINE},
        "required": ["setup", "punchline"],
        **extra,
    }


def optional_joke_schema(title: str = "Joke") -> dict[str, Any]:
    """Joke whose punchline is `str | None = None`."""
    return {
        "type": "object",
        "title": title,
        "description": "Joke to tell user.",
        "properties": {
            "setup": _SETUP,
            "punchline": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "answer to resolve the joke",
            },
        },
        "required": ["setup"],
    }


JOKE_JSON = '{"setup": "Why was the cat sitting on the computer?", "punchline": "To keep an eye on the mouse."}'

HELLO_REASONING = "The user greets me. A short friendly greeting back is right."
HELLO_TEXT = "Hello! How can I help you today?"


def hello(rid: str, model: str = "kimi-k3.1-pro") -> Reply:
    return Reply(
        rid, HELLO_TEXT, HELLO_REASONING, model=model, plain_input=8, output=22, reasoning_tokens=13
    )


def magic_call(rid: str, call_id: str) -> Reply:
    return Reply(
        rid,
        reasoning="The user wants magic_function applied to 3; I call the tool with input 3.",
        calls=(Call(call_id, "magic_function", {"input": 3}),),
        plain_input=96,
        output=38,
        reasoning_tokens=19,
    )


def joke(rid: str, text: str = JOKE_JSON) -> Reply:
    return Reply(
        rid,
        text,
        "A cat joke with a setup and a punchline: the computer mouse pun works.",
        plain_input=64,
        output=52,
        reasoning_tokens=18,
    )


# invoke_with_* helpers (both protocols use the same prompts; see test_standard.py)
REASONING_PROMPT = "Is 221 a prime number? Answer yes or no."
CACHE_CONTEXT = (
    "You are the front-desk assistant of the Harbor Lighthouse Museum. Opening hours: Tuesday "
    "to Sunday, 10:00 to 17:00; closed on Mondays. Tickets: adults 12 EUR, children under 12 "
    "free. The lantern room is reached by 217 steps and closes 30 minutes before the museum."
)
CACHE_READ_PROMPT = "Is the museum open on Monday? Answer in one sentence."
CACHE_WRITE_PROMPT = "How many steps lead to the lantern room? Answer in one sentence."


def reasoning_reply(rid: str) -> Reply:
    return Reply(
        rid,
        "No.",
        "221 = 13 x 17, so it is not prime.",
        plain_input=17,
        output=41,
        reasoning_tokens=38,
    )


def cache_read_reply(rid: str) -> Reply:
    return Reply(
        rid,
        "No, the museum is closed on Mondays.",
        "The context says closed on Mondays.",
        plain_input=22,
        cache_read=64,
        output=30,
        reasoning_tokens=19,
    )


def cache_write_reply(rid: str) -> Reply:
    return Reply(
        rid,
        "217 steps lead to the lantern room.",
        "The context says 217 steps.",
        plain_input=23,
        cache_write=64,
        output=27,
        reasoning_tokens=17,
    )
