"""Hand-written request bodies for the standard integration suite on /v1/messages (K3.1).

`max_tokens` is required by the Messages schema: ChatKimi sends 131,072 when unset (the
documented Chat Completions default). No `temperature` (not in the Messages schema). A
single-text user turn is sent as a string; consecutive same-role messages merge into one turn;
system messages join into one `system` string. Block-level `cache_control` marks and a tool's
`cache_control` are stripped (only the top-level `cache_control` sets the TTL on Kimi).
K3.1 has no named tool_choice: a named tool is forced by offering only it with `{"type": "any"}`.
"""

from __future__ import annotations

from typing import Any

from tools.authoring import _shared as shared
from tools.authoring import _wire as wire
from tools.authoring._kit import Call, Reply, signature

M = "kimi-k3.1-pro"
FAST = "kimi-k3.1-pro-highspeed"
Table = dict[str, list[tuple[dict[str, Any], Reply]]]


def std(messages: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"model": M, "max_tokens": 131072, "messages": messages, **fields}


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": spec["name"],
        "description": spec["description"],
        "input_schema": spec["parameters"],
    }


def use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def result(call_id: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, **extra}


def fmt(schema: dict[str, Any]) -> dict[str, Any]:
    return {"output_config": {"format": {"type": "json_schema", "schema": schema}}}


def _stream(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "stream": True}


def _rid(name: str, suffix: str = "") -> str:
    return "msg_std_" + name.removeprefix("test_").replace("[", "_").rstrip("]") + suffix


HELLO = [user("Hello")]
ANY = {"type": "any"}
PNG_BLOCK = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": shared.PNG_1X1},
}
IMAGE_PROMPT = text("Give a concise description of this image.")
DESCRIBE = Reply(
    "msg_std_image", "A single colored pixel.", "The image is a 1x1 PNG.", plain_input=120
)
_TITLED = {
    "setup": {"title": "Setup", **shared.joke_schema()["properties"]["setup"]},
    "punchline": {"title": "Punchline", **shared.joke_schema()["properties"]["punchline"]},
}
JOKE_PROMPT = [user("Tell me a joke about cats.")]
WEATHER_Q = user("What is the weather in San Francisco, CA?")
WEATHER_REASONING = "I need the weather for San Francisco: call get_weather."


def weather_call(rid: str) -> Reply:
    return Reply(
        rid,
        reasoning=WEATHER_REASONING,
        calls=(Call("toolu_weather_01", "get_weather", {"location": "San Francisco, CA"}),),
        plain_input=70,
        output=31,
        reasoning_tokens=14,
    )


def table() -> Table:
    t: Table = {}
    for name in ("test_invoke", "test_ainvoke"):
        t[name] = [(std(HELLO), shared.hello(_rid(name)))]
    t["test_message_with_name"] = [(std([user("hello")]), shared.hello(_rid("name")))]
    for name in ("test_stream", "test_astream"):
        for param in ("model0", "model1"):
            key = f"{name}[{param}]"
            t[key] = [(_stream(std(HELLO)), shared.hello(_rid(key)))]
    for name in ("test_stream_events_v3", "test_astream_events_v3"):
        t[name] = [(_stream(std(HELLO)), shared.hello(_rid(name)))]
    for name, stream in (
        ("test_invoke_with_model_override", False),
        ("test_ainvoke_with_model_override", False),
        ("test_stream_with_model_override", True),
        ("test_astream_with_model_override", True),
    ):
        body = {**std(HELLO), "model": FAST, **({"stream": True} if stream else {})}
        t[name] = [(body, shared.hello(_rid(name), model=FAST))]
    for name in ("test_batch", "test_abatch"):
        t[name] = [
            (std(HELLO), shared.hello(_rid(name, "_1"))),
            (std([user("Hey")]), shared.hello(_rid(name, "_2"))),
        ]
    t["test_conversation"] = [
        (
            std([user("hello"), assistant(text("hello")), user("how are you")]),
            Reply(
                _rid("conversation"), "I'm doing well, thanks for asking!", shared.HELLO_REASONING
            ),
        )
    ]
    t["test_double_messages_conversation"] = [
        (
            std(
                [
                    user([text("hello"), text("hello")]),
                    assistant(text("hello"), text("hello")),
                    user("how are you"),
                ],
                system="hello\n\nhello",
            ),
            Reply(_rid("double"), "I'm well, thank you!", shared.HELLO_REASONING),
        )
    ]
    helpers = [
        (std([user(shared.REASONING_PROMPT)]), shared.reasoning_reply(_rid("reasoning"))),
        (
            std([user(shared.CACHE_READ_PROMPT)], system=shared.CACHE_CONTEXT),
            shared.cache_read_reply(_rid("cache_read")),
        ),
        (
            std(
                [user(shared.CACHE_WRITE_PROMPT)],
                system=shared.CACHE_CONTEXT,
                cache_control={"type": "ephemeral", "ttl": "1h"},
            ),
            shared.cache_write_reply(_rid("cache_write")),
        ),
    ]
    t["test_usage_metadata"] = [(std(HELLO), shared.hello(_rid("usage"))), *helpers]
    haikus = Reply(
        _rid("haikus"),
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
    # Native stop sequence on K3.1: the service stops before "you" (the match is excluded).
    stopped = Reply(
        _rid("stop"),
        "Hello! How can I help ",
        shared.HELLO_REASONING,
        stop_sequence="you",
        output=19,
    )
    t["test_stop_sequence"] = [
        (std([user("hi")], stop_sequences=["you"]), stopped),
        (std([user("hi")], stop_sequences=["you"]), stopped),
    ]
    magic = {"tools": [tool(shared.MAGIC)], "tool_choice": ANY}
    magic_q = [user("What is the value of magic_function(3)? Use the tool.")]
    for name in (
        "test_tool_calling[model0]",
        "test_tool_calling[model1]",
        "test_tool_calling_async",
    ):
        t[name] = [
            (std(magic_q, **magic), shared.magic_call(_rid(name, "_i"), "toolu_magic_01")),
            (_stream(std(magic_q, **magic)), shared.magic_call(_rid(name, "_s"), "toolu_magic_02")),
        ]
    t["test_bind_runnables_as_tools"] = [
        (
            std(
                [user("Using the tool, generate a Pirate greeting.")],
                tools=[tool(shared.GREETING)],
                tool_choice=ANY,
            ),
            Reply(
                _rid("runnable_tool"),
                reasoning="Call greeting_generator with the pirate style.",
                calls=(Call("toolu_greet_01", "greeting_generator", {"answer_style": "pirate"}),),
                plain_input=80,
            ),
        )
    ]
    adder = {"tools": [tool(shared.ADDER)]}
    answer = Reply(
        _rid("tools_answer"), "The sum of 1 and 2 is 3.", "The tool returned 3.", plain_input=110
    )
    t["test_tool_message_histories_string_content"] = [
        (
            std(
                [
                    user("What is 1 + 2"),
                    assistant(
                        wire.FOREIGN_THINKING, use("abc123", "my_adder_tool", {"a": 1, "b": 2})
                    ),
                    user([result("abc123", '{"result": 3}')]),
                ],
                **adder,
            ),
            answer,
        )
    ]
    t["test_tool_message_histories_list_content"] = [
        (
            std(
                [
                    user("What is 1 + 2"),
                    assistant(
                        wire.FOREIGN_THINKING,
                        text("some text"),
                        use("abc123", "my_adder_tool", {"a": 1, "b": 2}),
                    ),
                    user([result("abc123", '{"result": 3}')]),
                ],
                **adder,
            ),
            answer,
        )
    ]
    t["test_tool_message_error_status"] = [
        (
            std(
                [
                    user("What is 1 + 2"),
                    assistant(wire.FOREIGN_THINKING, use("abc123", "my_adder_tool", {"a": 1})),
                    user(
                        [result("abc123", "Error: Missing required argument 'b'.", is_error=True)]
                    ),
                ],
                **adder,
            ),
            Reply(
                _rid("tool_error"),
                "The tool needs both numbers: 1 + 2 = 3.",
                "Missing b.",
                plain_input=110,
            ),
        )
    ]
    t["test_tool_choice"] = [
        (
            std(
                [user("Hello!")],
                tools=[tool(shared.MAGIC), tool(shared.WEATHER_CHOICE)],
                tool_choice=ANY,
            ),
            shared.magic_call(_rid("choice_any"), "toolu_choice_01"),
        ),
        (
            std([user("Hello!")], tools=[tool(shared.MAGIC)], tool_choice=ANY),
            shared.magic_call(_rid("choice_named"), "toolu_choice_02"),
        ),
    ]
    no_args_q = [user("What is the value of magic_function_no_args()? Use the tool.")]
    no_args = {"tools": [tool(shared.MAGIC_NO_ARGS)], "tool_choice": ANY}
    no_args_reply = Reply(
        _rid("no_args"),
        reasoning="The tool takes no arguments; call it.",
        calls=(Call("toolu_noargs_01", "magic_function_no_args", {}),),
        plain_input=60,
    )
    t["test_tool_calling_with_no_arguments"] = [
        (std(no_args_q, **no_args), no_args_reply),
        (_stream(std(no_args_q, **no_args)), no_args_reply),
    ]
    few_shot_id = "00000000-0000-4000-8000-000000000001"
    t["test_structured_few_shot_examples"] = [
        (
            std(
                [
                    user("What is 1 + 2"),
                    assistant(
                        wire.FOREIGN_THINKING, use(few_shot_id, "my_adder_tool", {"a": 1, "b": 2})
                    ),
                    user([result(few_shot_id, '{"result": 3}')]),
                    assistant(text('{"result": 3}')),
                    user("What is 3 + 4"),
                ],
                tools=[tool(shared.ADDER)],
                tool_choice=ANY,
            ),
            Reply(
                _rid("few_shot"),
                reasoning="Same pattern as the example: call my_adder_tool with 3 and 4.",
                calls=(Call("toolu_adder_34", "my_adder_tool", {"a": 3, "b": 4}),),
                plain_input=140,
            ),
        )
    ]
    schemas = {
        "pydantic": shared.joke_schema(),
        "typeddict": shared.joke_schema("JokeDict"),
        "json_schema": {**shared.joke_schema(), "properties": _TITLED},
    }
    for kind, schema in schemas.items():
        for name in ("test_structured_output", "test_structured_output_async"):
            key = f"{name}[{kind}]"
            t[key] = [
                (std(JOKE_PROMPT, **fmt(schema)), shared.joke(_rid(key, "_i"))),
                (_stream(std(JOKE_PROMPT, **fmt(schema))), shared.joke(_rid(key, "_s"))),
            ]
    # json_mode on Messages K3.1 is the native json_schema path (there is no JSON-object mode).
    json_mode_prompt = [
        user(
            "Tell me a joke about cats. Return the result as a JSON with 'setup' and "
            "'punchline' keys. Return nothing other than JSON."
        )
    ]
    titled = {**shared.joke_schema(), "properties": _TITLED}
    t["test_json_mode"] = [
        (std(json_mode_prompt, **fmt(shared.joke_schema())), shared.joke(_rid("json_mode_1"))),
        (
            _stream(std(json_mode_prompt, **fmt(shared.joke_schema()))),
            shared.joke(_rid("json_mode_2")),
        ),
        (std(json_mode_prompt, **fmt(titled)), shared.joke(_rid("json_mode_3"))),
        (_stream(std(json_mode_prompt, **fmt(titled))), shared.joke(_rid("json_mode_4"))),
    ]
    v1_dict = {**shared.joke_schema(), "properties": _TITLED}
    t["test_structured_output_pydantic_2_v1"] = [
        (std(JOKE_PROMPT, **fmt(shared.joke_schema())), shared.joke(_rid("v1_1"))),
        (_stream(std(JOKE_PROMPT, **fmt(shared.joke_schema()))), shared.joke(_rid("v1_2"))),
        (std(JOKE_PROMPT, **fmt(v1_dict)), shared.joke(_rid("v1_3"))),
        (_stream(std(JOKE_PROMPT, **fmt(v1_dict))), shared.joke(_rid("v1_4"))),
    ]
    opt = shared.optional_joke_schema()
    opt_dict = {
        **opt,
        "properties": {
            "setup": {"title": "Setup", **opt["properties"]["setup"]},
            "punchline": {"title": "Punchline", **opt["properties"]["punchline"]},
        },
    }
    opt_typeddict = {
        **opt,
        "title": "JokeDict",
        "properties": {
            "setup": opt["properties"]["setup"],
            "punchline": {"type": "string", "description": "answer to resolve the joke"},
        },
    }
    setup_only = '{"setup": "Why did the cat sit on the laptop?"}'
    t["test_structured_output_optional_param"] = [
        (
            std([user("Give me the setup to a joke about cats, no punchline.")], **fmt(opt)),
            shared.joke(_rid("opt_1"), setup_only),
        ),
        (
            std([user("Give me a joke about cats, include the punchline.")], **fmt(opt)),
            shared.joke(_rid("opt_2")),
        ),
        (std(JOKE_PROMPT, **fmt(opt_dict)), shared.joke(_rid("opt_3"))),
        (std(JOKE_PROMPT, **fmt(opt_typeddict)), shared.joke(_rid("opt_4"))),
    ]
    t["test_image_inputs"] = [
        (std([user([IMAGE_PROMPT, PNG_BLOCK])]), DESCRIBE),
        (std([user([IMAGE_PROMPT, PNG_BLOCK])]), DESCRIBE),
        (
            std(
                [
                    user(
                        [
                            IMAGE_PROMPT,
                            {"type": "image", "source": {"type": "url", "url": shared.IMAGE_URL}},
                        ]
                    )
                ]
            ),
            DESCRIBE,
        ),
    ]
    image_turn = [
        user("get a random diagram using the tool and give it a concise description"),
        assistant(wire.FOREIGN_THINKING, use("1", "random_image", {})),
        user([result("1", [PNG_BLOCK])]),
    ]
    t["test_image_tool_message"] = [
        (std(image_turn, tools=[tool(shared.RANDOM_IMAGE)]), DESCRIBE),
        (std(image_turn, tools=[tool(shared.RANDOM_IMAGE)]), DESCRIBE),
    ]
    color_picker = {
        "name": "color_picker",
        "description": "Input your fav color and get a random fact about it.",
        "input_schema": {
            "type": "object",
            "properties": {"fav_color": {"type": "string"}},
            "required": ["fav_color"],
        },
    }
    thinking = {
        "type": "thinking",
        "thinking": (
            "This is a simple greeting. I should respond warmly and professionally, and perhaps "
            "ask how I can help the person today."
        ),
        "signature": (
            "ErUBCkYICBgCIkDCTQUXPc3O7nHXd302Zercaz8WrrpddpOqHITxBih5zeFPoJkwKBvkvZ8ID1aAfJftji6+ZI5gB"
            "YDo7XmNBIkzEgzVDHKopedAn/scG80aDFDXVZrDOWgla7lEBiIwLq5kfFjQjvF/CyuL8J5V7dRwsJN5gQIXaMB6xX"
            "Ts6T+2Zp0VdiyiMb/hcdrHt+7aKh0z2E1UnjiOCoTlofNFHzOnKk0qPIoPmfGgpPgGNRgC"
        ),
    }
    t["test_anthropic_inputs"] = [
        (
            std(
                [
                    user([text("what's your favorite color in this image"), PNG_BLOCK]),
                    assistant(
                        wire.FOREIGN_THINKING,
                        text("Hmm let me think about that"),
                        use("foo", "color_picker", {"fav_color": "purple"}),
                    ),
                    user([result("foo", "That's a great pick!")]),
                ],
                system="you're a good assistant",
                tools=[color_picker],
            ),
            Reply(
                _rid("anthropic_inputs_1"),
                "Purple it is: a color long tied to royalty.",
                "The tool liked purple.",
                plain_input=150,
            ),
        ),
        (
            std(
                [
                    user("Hello"),
                    assistant(thinking, text("Hello, how are you?")),
                    user("Well, thanks."),
                ]
            ),
            Reply(
                _rid("anthropic_inputs_2"),
                "Glad to hear it! What can I do for you?",
                shared.HELLO_REASONING,
            ),
        ),
    ]
    for param in ("model0", "model1"):
        rid = _rid(f"agent_{param}")
        call = weather_call(rid)
        t[f"test_agent_loop[{param}]"] = [
            (std([WEATHER_Q], tools=[tool(shared.WEATHER_AGENT)]), call),
            (
                std(
                    [
                        WEATHER_Q,
                        assistant(
                            {
                                "type": "thinking",
                                "thinking": WEATHER_REASONING,
                                "signature": signature(rid),
                            },
                            use(
                                "toolu_weather_01", "get_weather", {"location": "San Francisco, CA"}
                            ),
                        ),
                        user([result("toolu_weather_01", "It's sunny.")]),
                    ],
                    tools=[tool(shared.WEATHER_AGENT)],
                ),
                Reply(
                    _rid(f"agent_{param}", "_2"),
                    "It's sunny in San Francisco, CA.",
                    "The tool says sunny.",
                    plain_input=40,
                    cache_read=64,
                ),
            ),
        ]
    story = Reply(
        _rid("story"),
        "Miso the cat found a sunbeam on the library floor and guarded it all afternoon, "
        "moving inch by inch as the light crept toward the door.",
        "A very short cat story.",
        plain_input=14,
        output=58,
        reasoning_tokens=11,
    )
    t["test_stream_time"] = [(_stream(std([user("Write a story about a cat.")])), story)]
    uni = {"tools": [tool(shared.UNICODE_CUSTOMER)], "tool_choice": ANY}
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
            Reply(
                _rid("unicode_zh"),
                reasoning="Create the customer with the name exactly as given.",
                calls=(
                    Call(
                        "toolu_zh",
                        "unicode_customer",
                        {
                            "customer_name": "你好啊集团",
                            "description": "Chinese technology company",
                        },
                    ),
                ),
                plain_input=150,
            ),
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
            Reply(
                _rid("unicode_ja"),
                reasoning="Create the customer with the name exactly as given.",
                calls=(
                    Call(
                        "toolu_ja",
                        "unicode_customer",
                        {"customer_name": "こんにちは株式会社", "description": "Japanese company"},
                    ),
                ),
                plain_input=150,
            ),
        ),
    ]
    return t
