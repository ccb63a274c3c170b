"""Hand-written request bodies for the standard integration suite on /v1/chat/completions.

The integration suite's model fixture adds no standard parameters (its
`standard_chat_model_params` is `{}`; only the unit suite passes `temperature=0, max_tokens=100`),
so a plain body is `{model, messages}`: no `max_completion_tokens` (service default 131,072).
A non-empty `stop` is emulated client-side (the schema has no `stop`). A HumanMessage `name` has
no field in the ChatMessage schema: dropped.
"""

from __future__ import annotations

from typing import Any

from tools.authoring import _shared as shared
from tools.authoring import _wire as wire
from tools.authoring._kit import Call, Reply

M = "kimi-k3.1-pro"
FAST = "kimi-k3.1-pro-highspeed"
Table = dict[str, list[tuple[dict[str, Any], Reply]]]


def std(messages: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """The fixture model's body around hand-written messages and fields."""
    return {"model": M, "messages": messages, **fields}


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def fn(spec: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": spec}


HELLO = [user("Hello")]


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """Written-out strict form: closed object, every property required."""
    return {**schema, "additionalProperties": False, "required": list(schema["properties"])}


def rf(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


JOKE_PROMPT = [user("Tell me a joke about cats.")]
JOKE_RF = rf("Joke", strict(shared.joke_schema()))
JOKEDICT_RF = rf("JokeDict", strict(shared.joke_schema("JokeDict")))
_V1_PROPS = {
    "setup": {"title": "Setup", "description": "question to set up a joke", "type": "string"},
    "punchline": {
        "title": "Punchline",
        "description": "answer to resolve the joke",
        "type": "string",
    },
}
_OPT = shared.optional_joke_schema()
OPT_JOKE_RF = rf(
    "Joke",
    {
        **_OPT,
        "properties": {
            "setup": _OPT["properties"]["setup"],
            "punchline": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "description": "answer to resolve the joke",
            },
        },
        "required": ["setup", "punchline"],
        "additionalProperties": False,
    },
)
_OPT_STRICT = OPT_JOKE_RF["json_schema"]["schema"]
# `Joke.model_json_schema()` is passed as a dict: its property titles stay.
OPT_DICT_RF = rf(
    "Joke",
    {
        **_OPT_STRICT,
        "properties": {
            "setup": {"title": "Setup", **_OPT_STRICT["properties"]["setup"]},
            "punchline": {"title": "Punchline", **_OPT_STRICT["properties"]["punchline"]},
        },
    },
)
# The TypedDict's `str | None` (default None, not required) becomes a nullable type in strict mode.
OPT_TYPEDDICT_RF = rf(
    "JokeDict",
    {
        **_OPT_STRICT,
        "title": "JokeDict",
        "properties": {
            "setup": _OPT_STRICT["properties"]["setup"],
            "punchline": {"type": ["string", "null"], "description": "answer to resolve the joke"},
        },
    },
)
JSON_MODE_PROMPT = [
    user(
        "Tell me a joke about cats. Return the result as a JSON with 'setup' and 'punchline' "
        "keys. Return nothing other than JSON."
    )
]
ADDER_HISTORY_CALL = {
    "id": "abc123",
    "type": "function",
    "function": {"name": "my_adder_tool", "arguments": '{"a": 1, "b": 2}'},
}
TOOL_RESULT = {"role": "tool", "tool_call_id": "abc123", "content": '{"result": 3}'}
IMAGE_PROMPT = {"type": "text", "text": "Give a concise description of this image."}
IMAGE_DATA = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{shared.PNG_1X1}"}}
DESCRIBE = Reply(
    "chatcmpl-std-image", "A single colored pixel.", "The image is a 1x1 PNG.", plain_input=120
)
RANDOM_IMAGE_TURN = [
    user("get a random diagram using the tool and give it a concise description"),
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": wire.FOREIGN_REASONING,
        "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "random_image", "arguments": "{}"}}
        ],
    },
]
WEATHER_Q = user("What is the weather in San Francisco, CA?")
WEATHER_CALL = Reply(
    "chatcmpl-std-agent-1",
    reasoning="I need the weather for San Francisco: call get_weather.",
    calls=(Call("call_weather_01", "get_weather", {"location": "San Francisco, CA"}),),
    plain_input=70,
    output=31,
    reasoning_tokens=14,
)
WEATHER_REPLAY = {
    "role": "assistant",
    "content": None,
    "reasoning_content": "I need the weather for San Francisco: call get_weather.",
    "tool_calls": [
        {
            "id": "call_weather_01",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"location": "San Francisco, CA"}'},
        }
    ],
}
WEATHER_ANSWER = Reply(
    "chatcmpl-std-agent-2",
    "It's sunny in San Francisco, CA.",
    "The tool says it's sunny.",
    plain_input=40,
    cache_read=64,
)


def _tools_reply(rid: str, text: str = "The sum of 1 and 2 is 3.") -> Reply:
    return Reply(rid, text, "The tool returned the result; I report it.", plain_input=110)


def unicode_reply(rid: str, name: str, description: str) -> Reply:
    return Reply(
        rid,
        reasoning="Create the customer with the name exactly as given.",
        calls=(
            Call(
                f"call_{rid[-2:]}",
                "unicode_customer",
                {"customer_name": name, "description": description},
            ),
        ),
        plain_input=150,
    )


def _stream(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "stream": True}


def table() -> Table:
    t: Table = {}
    for name in ("test_invoke", "test_ainvoke", "test_message_with_name"):
        t[name] = [(std(HELLO), shared.hello(f"chatcmpl-std-{name[5:]}"))]
    t["test_message_with_name"] = [(std([user("hello")]), shared.hello("chatcmpl-std-name"))]
    for name in ("test_stream", "test_astream"):
        for param in ("model0", "model1"):
            t[f"{name}[{param}]"] = [
                (_stream(std(HELLO)), shared.hello(f"chatcmpl-std-{name[5:]}-{param}"))
            ]
    for name in ("test_stream_events_v3", "test_astream_events_v3"):
        t[name] = [(_stream(std(HELLO)), shared.hello(f"chatcmpl-std-{name[5:]}"))]
    for name, stream in (
        ("test_invoke_with_model_override", False),
        ("test_ainvoke_with_model_override", False),
        ("test_stream_with_model_override", True),
        ("test_astream_with_model_override", True),
    ):
        body = {**std(HELLO), "model": FAST, **({"stream": True} if stream else {})}
        t[name] = [(body, shared.hello(f"chatcmpl-std-{name[5:20]}", model=FAST))]
    for name in ("test_batch", "test_abatch"):
        t[name] = [
            (std(HELLO), shared.hello(f"chatcmpl-std-{name[5:]}-1")),
            (std([user("Hey")]), shared.hello(f"chatcmpl-std-{name[5:]}-2")),
        ]
    t["test_conversation"] = [
        (
            std([user("hello"), {"role": "assistant", "content": "hello"}, user("how are you")]),
            Reply(
                "chatcmpl-std-conv", "I'm doing well, thanks for asking!", shared.HELLO_REASONING
            ),
        )
    ]
    t["test_double_messages_conversation"] = [
        (
            std(
                [
                    {"role": "system", "content": "hello"},
                    {"role": "system", "content": "hello"},
                    user("hello"),
                    user("hello"),
                    {"role": "assistant", "content": "hello"},
                    {"role": "assistant", "content": "hello"},
                    user("how are you"),
                ]
            ),
            Reply("chatcmpl-std-double", "I'm well, thank you!", shared.HELLO_REASONING),
        )
    ]
    cache_system = {"role": "system", "content": shared.CACHE_CONTEXT}
    helpers = [
        (std([user(shared.REASONING_PROMPT)]), shared.reasoning_reply("chatcmpl-std-reasoning")),
        (
            std([cache_system, user(shared.CACHE_READ_PROMPT)]),
            shared.cache_read_reply("chatcmpl-std-cache-read"),
        ),
        (
            std(
                [cache_system, user(shared.CACHE_WRITE_PROMPT)],
                prompt_cache_options={"mode": "implicit", "ttl": "1h"},
            ),
            shared.cache_write_reply("chatcmpl-std-cache-write"),
        ),
    ]
    t["test_usage_metadata"] = [(std(HELLO), shared.hello("chatcmpl-std-usage")), *helpers]
    haikus = Reply(
        "chatcmpl-std-haikus",
        "Morning fog lifts slow\nharbor bells call out to sea\ngulls stitch the gray sky\n\n"
        "Cat on the warm sill\ndreams of birds it will not catch\nsun moves, so does she",
        "Two haikus, 5-7-5 each, nothing else.",
        plain_input=19,
        output=72,
        reasoning_tokens=12,
    )
    t["test_usage_metadata_streaming"] = [
        (_stream(std([user("Write me 2 haikus. Only include the haikus.")])), haikus),
        *[(_stream(body), reply) for body, reply in helpers],
    ]
    t["test_stop_sequence"] = [
        (std([user("hi")]), shared.hello("chatcmpl-std-stop-1")),
        ({"model": M, "messages": [user("hi")]}, shared.hello("chatcmpl-std-stop-2")),
    ]
    magic_tools = {"tools": [fn(shared.MAGIC)], "tool_choice": "required"}
    magic_q = [user("What is the value of magic_function(3)? Use the tool.")]
    for name in (
        "test_tool_calling[model0]",
        "test_tool_calling[model1]",
        "test_tool_calling_async",
    ):
        t[name] = [
            (
                std(magic_q, **magic_tools),
                shared.magic_call(f"chatcmpl-std-{name[5:]}-i", "call_magic_01"),
            ),
            (
                _stream(std(magic_q, **magic_tools)),
                shared.magic_call(f"chatcmpl-std-{name[5:]}-s", "call_magic_02"),
            ),
        ]
    t["test_bind_runnables_as_tools"] = [
        (
            std(
                [user("Using the tool, generate a Pirate greeting.")],
                tools=[fn(shared.GREETING)],
                tool_choice="required",
            ),
            Reply(
                "chatcmpl-std-runnable-tool",
                reasoning="Call greeting_generator with the pirate style.",
                calls=(Call("call_greet_01", "greeting_generator", {"answer_style": "pirate"}),),
                plain_input=80,
            ),
        )
    ]
    adder = {"tools": [fn(shared.ADDER)]}
    t["test_tool_message_histories_string_content"] = [
        (
            std(
                [
                    user("What is 1 + 2"),
                    {
                        "role": "assistant",
                        "content": None,
                        "reasoning_content": wire.FOREIGN_REASONING,
                        "tool_calls": [ADDER_HISTORY_CALL],
                    },
                    TOOL_RESULT,
                ],
                **adder,
            ),
            _tools_reply("chatcmpl-std-hist-str"),
        )
    ]
    t["test_tool_message_histories_list_content"] = [
        (
            std(
                [
                    user("What is 1 + 2"),
                    {
                        "role": "assistant",
                        "content": "some text",
                        "reasoning_content": wire.FOREIGN_REASONING,
                        "tool_calls": [ADDER_HISTORY_CALL],
                    },
                    TOOL_RESULT,
                ],
                **adder,
            ),
            _tools_reply("chatcmpl-std-hist-list"),
        )
    ]
    t["test_tool_message_error_status"] = [
        (
            std(
                [
                    user("What is 1 + 2"),
                    {
                        "role": "assistant",
                        "content": None,
                        "reasoning_content": wire.FOREIGN_REASONING,
                        "tool_calls": [
                            {
                                "id": "abc123",
                                "type": "function",
                                "function": {"name": "my_adder_tool", "arguments": '{"a": 1}'},
                            }
                        ],
                    },
                    {
                        "role": "tool",
                        "tool_call_id": "abc123",
                        "content": "Error: Missing required argument 'b'.",
                    },
                ],
                **adder,
            ),
            _tools_reply("chatcmpl-std-tool-error", "The tool needs both numbers: 1 + 2 = 3."),
        )
    ]
    two_tools = [fn(shared.MAGIC), fn(shared.WEATHER_CHOICE)]
    t["test_tool_choice"] = [
        (
            std([user("Hello!")], tools=two_tools, tool_choice="required"),
            shared.magic_call("chatcmpl-std-choice-any", "call_choice_01"),
        ),
        (
            std(
                [user("Hello!")],
                tools=two_tools,
                tool_choice={"type": "function", "function": {"name": "magic_function"}},
            ),
            shared.magic_call("chatcmpl-std-choice-named", "call_choice_02"),
        ),
    ]
    no_args = {"tools": [fn(shared.MAGIC_NO_ARGS)], "tool_choice": "required"}
    no_args_q = [user("What is the value of magic_function_no_args()? Use the tool.")]
    no_args_reply = Reply(
        "chatcmpl-std-noargs",
        reasoning="The tool takes no arguments; call it.",
        calls=(Call("call_noargs_01", "magic_function_no_args", {}),),
        plain_input=60,
    )
    t["test_tool_calling_with_no_arguments"] = [
        (std(no_args_q, **no_args), no_args_reply),
        (_stream(std(no_args_q, **no_args)), no_args_reply),
    ]
    few_shot_call = {
        "id": "00000000-0000-4000-8000-000000000001",
        "type": "function",
        # tool_example_to_messages keeps its own compact arguments string: sent back unchanged.
        "function": {"name": "my_adder_tool", "arguments": '{"a":1,"b":2}'},
    }
    t["test_structured_few_shot_examples"] = [
        (
            std(
                [
                    user("What is 1 + 2"),
                    {
                        "role": "assistant",
                        "content": None,
                        "reasoning_content": wire.FOREIGN_REASONING,
                        "tool_calls": [few_shot_call],
                    },
                    {
                        "role": "tool",
                        "tool_call_id": "00000000-0000-4000-8000-000000000001",
                        "content": '{"result": 3}',
                    },
                    {"role": "assistant", "content": '{"result": 3}'},
                    user("What is 3 + 4"),
                ],
                tools=[fn(shared.ADDER)],
                tool_choice="required",
            ),
            Reply(
                "chatcmpl-std-few-shot",
                reasoning="Same pattern as the example: call my_adder_tool with 3 and 4.",
                calls=(Call("call_adder_34", "my_adder_tool", {"a": 3, "b": 4}),),
                plain_input=140,
            ),
        )
    ]
    json_schema_rf = rf(
        "Joke",
        strict(
            {
                **shared.joke_schema(),
                "properties": {
                    "setup": {"title": "Setup", **shared.joke_schema()["properties"]["setup"]},
                    "punchline": {
                        "title": "Punchline",
                        **shared.joke_schema()["properties"]["punchline"],
                    },
                },
            }
        ),
    )
    for kind, fmt in (
        ("pydantic", JOKE_RF),
        ("typeddict", JOKEDICT_RF),
        ("json_schema", json_schema_rf),
    ):
        for name in ("test_structured_output", "test_structured_output_async"):
            t[f"{name}[{kind}]"] = [
                (std(JOKE_PROMPT, response_format=fmt), shared.joke(f"chatcmpl-std-so-{kind}-i")),
                (
                    _stream(std(JOKE_PROMPT, response_format=fmt)),
                    shared.joke(f"chatcmpl-std-so-{kind}-s"),
                ),
            ]
    v1_rf = rf("Joke", strict({**shared.joke_schema(), "properties": _V1_PROPS}))
    t["test_structured_output_pydantic_2_v1"] = [
        (std(JOKE_PROMPT, response_format=JOKE_RF), shared.joke("chatcmpl-std-v1-1")),
        (_stream(std(JOKE_PROMPT, response_format=JOKE_RF)), shared.joke("chatcmpl-std-v1-2")),
        (std(JOKE_PROMPT, response_format=v1_rf), shared.joke("chatcmpl-std-v1-3")),
        (_stream(std(JOKE_PROMPT, response_format=v1_rf)), shared.joke("chatcmpl-std-v1-4")),
    ]
    setup_only = '{"setup": "Why did the cat sit on the laptop?", "punchline": null}'
    t["test_structured_output_optional_param"] = [
        (
            std(
                [user("Give me the setup to a joke about cats, no punchline.")],
                response_format=OPT_JOKE_RF,
            ),
            shared.joke("chatcmpl-std-opt-1", setup_only),
        ),
        (
            std(
                [user("Give me a joke about cats, include the punchline.")],
                response_format=OPT_JOKE_RF,
            ),
            shared.joke("chatcmpl-std-opt-2"),
        ),
        (std(JOKE_PROMPT, response_format=OPT_DICT_RF), shared.joke("chatcmpl-std-opt-3")),
        (std(JOKE_PROMPT, response_format=OPT_TYPEDDICT_RF), shared.joke("chatcmpl-std-opt-4")),
    ]
    jm = {"response_format": {"type": "json_object"}}
    t["test_json_mode"] = [
        (std(JSON_MODE_PROMPT, **jm), shared.joke("chatcmpl-std-json-1")),
        (_stream(std(JSON_MODE_PROMPT, **jm)), shared.joke("chatcmpl-std-json-2")),
        (std(JSON_MODE_PROMPT, **jm), shared.joke("chatcmpl-std-json-3")),
        (_stream(std(JSON_MODE_PROMPT, **jm)), shared.joke("chatcmpl-std-json-4")),
    ]
    t["test_image_inputs"] = [
        (std([user([IMAGE_PROMPT, IMAGE_DATA])]), DESCRIBE),
        (std([user([IMAGE_PROMPT, IMAGE_DATA])]), DESCRIBE),
        (
            std(
                [
                    user(
                        [
                            IMAGE_PROMPT,
                            {"type": "image_url", "image_url": {"url": shared.IMAGE_URL}},
                        ]
                    )
                ]
            ),
            DESCRIBE,
        ),
    ]
    image_tool = {"tools": [fn(shared.RANDOM_IMAGE)]}
    t["test_image_tool_message"] = [
        (
            std(
                [
                    *RANDOM_IMAGE_TURN,
                    {"role": "tool", "tool_call_id": "1", "content": [IMAGE_DATA]},
                ],
                **image_tool,
            ),
            DESCRIBE,
        ),
        (
            std(
                [
                    *RANDOM_IMAGE_TURN,
                    {"role": "tool", "tool_call_id": "1", "content": [IMAGE_DATA]},
                ],
                **image_tool,
            ),
            DESCRIBE,
        ),
    ]
    for param in ("model0", "model1"):
        t[f"test_agent_loop[{param}]"] = [
            (std([WEATHER_Q], tools=[fn(shared.WEATHER_AGENT)]), WEATHER_CALL),
            (
                std(
                    [
                        WEATHER_Q,
                        WEATHER_REPLAY,
                        {
                            "role": "tool",
                            "tool_call_id": "call_weather_01",
                            "content": "It's sunny.",
                        },
                    ],
                    tools=[fn(shared.WEATHER_AGENT)],
                ),
                WEATHER_ANSWER,
            ),
        ]
    story = Reply(
        "chatcmpl-std-story",
        "Miso the cat found a sunbeam on the library floor and guarded it all afternoon, "
        "moving inch by inch as the light crept toward the door.",
        "A very short cat story within the token budget.",
        plain_input=14,
        output=58,
        reasoning_tokens=11,
    )
    t["test_stream_time"] = [(_stream(std([user("Write a story about a cat.")])), story)]
    uni = {"tools": [fn(shared.UNICODE_CUSTOMER)], "tool_choice": "required"}
    t["test_unicode_tool_call_integration"] = [
        (
            std(
                [
                    user(
                        "Create a customer named '你好啊集团' (Hello Group) - a Chinese technology company"
                    )
                ],
                **uni,
            ),
            unicode_reply("chatcmpl-std-unicode-zh", "你好啊集团", "Chinese technology company"),
        ),
        (
            std(
                [
                    user(
                        "Create a customer named 'こんにちは株式会社' (Hello Corporation) - a Japanese company"
                    )
                ],
                **uni,
            ),
            unicode_reply("chatcmpl-std-unicode-ja", "こんにちは株式会社", "Japanese company"),
        ),
    ]
    return t


__all__ = ["table"]
