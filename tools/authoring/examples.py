"""Write cassettes/examples/*.yaml: `python -m tools.authoring.examples`.

The cassettes the docs examples replay (examples/_replay.py): agent_with_search.py on both
protocols, streaming_chat.py and structured_extraction.py. Every request body is written out by
hand from spec/*.yaml (the extraction schema included); the replies are `Reply` values rendered
by the kit, or responses written out in full where a reply holds more than a `Reply` can say
($web_search rounds, server web search blocks).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from langchain_kimi.testing.frames import Json
from tools.authoring import _kit
from tools.authoring._kit import (
    Call,
    Cassettes,
    Reply,
    anthropic_json,
    exchange,
    interaction,
    openai_json,
    render,
    signature,
)

INVOICE_DOCUMENT = """\
INVOICE No. 2025-0417                                   Issued: 3 March 2025
From: Azulejo Design Lda., Rua da Prata 80, Lisbon (billing@azulejo.example)
To:   Northwind Books Ltd., 12 Harbour St, Bristol
  3 x  hand-painted tile panel (40x40 cm)     @ 180.00 EUR   =   540.00 EUR
  1 x  installation, half day                 @ 220.00 EUR   =   220.00 EUR
Total due: 760.00 EUR, payable within 30 days (by 2 April 2025).
"""
"""The document of examples/structured_extraction.py, as the example sends it."""


def party() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "email": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "description": "Contact e-mail, if given",
            },
        },
        "required": ["name", "email"],
        "additionalProperties": False,
    }


def agent_with_search_openai() -> str:
    system = "You are a concise travel assistant. Use the tools for facts."
    question = (
        "I land in Lisbon on Saturday with 250 USD in cash. What's the weather there, how much is "
        "that in euros, and is there a big event in Lisbon this weekend?"
    )
    tools: list[Json] = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the current weather for a city.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": 'City name, e.g. "Lisbon".'}
                    },
                    "required": ["city"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "convert_currency",
                "description": "Convert an amount of money between currencies (ISO codes such as USD, EUR, GBP).",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "amount": {"type": "number", "description": "The amount to convert."},
                        "from_currency": {
                            "type": "string",
                            "description": "ISO code of the source currency.",
                        },
                        "to_currency": {
                            "type": "string",
                            "description": "ISO code of the target currency.",
                        },
                    },
                    "required": ["amount", "from_currency", "to_currency"],
                },
            },
        },
        {"type": "web_search"},
    ]
    r1 = (
        "Three questions. Weather and currency have tools; the weekend event needs a web search. "
        "I will search first."
    )
    search_args = '{"query":"Lisbon events this weekend","search_id":"ws_Lx4Qe7Tn2R"}'
    r2 = (
        "The search found the Lisbon Book Fair in Parque Eduardo VII running through Sunday. "
        "Now the weather and the conversion."
    )
    r3 = "Sunny at 21 °C; 250 USD is 230 EUR; the Book Fair is on. Summarise briefly."
    answer = (
        "Lisbon will be sunny and 21 °C with a light breeze. Your 250 USD is about 230 EUR. "
        "This weekend the Lisbon Book Fair is on in Parque Eduardo VII (free entry, open until late)."
    )

    base: Json = {
        "model": "kimi-k3.1-pro",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": question}],
        "reasoning_effort": "low",
        "tools": tools,
    }

    # Round 1: a pure $web_search round (builtin_function).
    reply1 = Reply(
        id="chatcmpl-kimiAgentR1s3Ar4h",
        reasoning=r1,
        plain_input=24,
        cache_write=290,
        output=48,
        reasoning_tokens=30,
    )
    wire1 = openai_json(reply1)
    assistant1: Json = {
        "role": "assistant",
        "content": None,
        "reasoning_content": r1,
        "tool_calls": [
            {
                "id": "call_ws_lisbon_01",
                "type": "builtin_function",
                "function": {"name": "$web_search", "arguments": search_args},
            }
        ],
    }
    wire1["choices"][0]["message"] = assistant1
    wire1["choices"][0]["finish_reason"] = "tool_calls"

    # Round 2: the follow-up with the echoed assistant message and the tool answer.
    body2 = copy.deepcopy(base)
    body2["messages"] += [
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": r1,
            "tool_calls": [
                {
                    "id": "call_ws_lisbon_01",
                    "type": "builtin_function",
                    "function": {"name": "$web_search", "arguments": search_args},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_ws_lisbon_01", "content": search_args},
    ]
    reply2 = Reply(
        id="chatcmpl-kimiAgentR2t0Ol5s",
        reasoning=r2,
        plain_input=1850,
        cache_read=290,
        output=86,
        reasoning_tokens=34,
        calls=(
            Call("call_weather_01", "get_weather", {"city": "Lisbon"}),
            Call(
                "call_fx_02",
                "convert_currency",
                {"amount": 250, "from_currency": "USD", "to_currency": "EUR"},
            ),
        ),
    )

    # Round 3: the agent sends the history back (search round verbatim) with both tool results.
    body3 = copy.deepcopy(body2)
    body3["messages"] += [
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": r2,
            "tool_calls": [
                {
                    "id": "call_weather_01",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'},
                },
                {
                    "id": "call_fx_02",
                    "type": "function",
                    "function": {
                        "name": "convert_currency",
                        "arguments": '{"amount": 250, "from_currency": "USD", "to_currency": "EUR"}',
                    },
                },
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_weather_01",
            "content": "Lisbon: 21 °C, sunny, light breeze",
        },
        {"role": "tool", "tool_call_id": "call_fx_02", "content": "250.00 USD = 230.00 EUR"},
    ]
    reply3 = Reply(
        id="chatcmpl-kimiAgentR3f1Na7l",
        reasoning=r3,
        text=answer,
        plain_input=120,
        cache_read=2140,
        output=92,
        reasoning_tokens=28,
    )

    # Round 1's reply is the full wire form written above (a builtin_function call).
    items = [
        exchange("openai", base, wire1, shared_provenance=True),
        interaction("openai", body2, reply2),
        interaction("openai", body3, reply3),
    ]
    note = (
        'examples/agent_with_search.py on /v1/chat/completions (create_agent, stream_mode="updates",\n'
        "so each model call is a non-streaming request). Call 1 is a pure $web_search round\n"
        "(builtin_function); ChatKimi posts the follow-up itself: the assistant message unchanged plus a\n"
        "tool message whose content is the call's arguments. The reply asks for both client tools; the\n"
        "agent runs them and the last request carries the search round verbatim, the assistant message with\n"
        "its own reasoning_content and raw tool calls, and the two tool results."
    )
    return render(items, note)


def agent_with_search_anthropic() -> str:
    system = "You are a concise travel assistant. Use the tools for facts."
    question = (
        "I land in Lisbon on Saturday with 250 USD in cash. What's the weather there, how much is "
        "that in euros, and is there a big event in Lisbon this weekend?"
    )
    tools: list[Json] = [
        {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": 'City name, e.g. "Lisbon".'}
                },
                "required": ["city"],
            },
        },
        {
            "name": "convert_currency",
            "description": "Convert an amount of money between currencies (ISO codes such as USD, EUR, GBP).",
            "input_schema": {
                "type": "object",
                "properties": {
                    "amount": {"type": "number", "description": "The amount to convert."},
                    "from_currency": {
                        "type": "string",
                        "description": "ISO code of the source currency.",
                    },
                    "to_currency": {
                        "type": "string",
                        "description": "ISO code of the target currency.",
                    },
                },
                "required": ["amount", "from_currency", "to_currency"],
            },
        },
        {"type": "web_search_20250305", "name": "web_search"},
    ]
    r1 = (
        "Three questions. The weekend event needs a web search; weather and currency have tools. "
        "The search found the Lisbon Book Fair, so now both tools."
    )
    r2 = "Sunny at 21 °C; 250 USD is 230 EUR; the Book Fair is on. Summarise briefly."
    answer = (
        "Lisbon will be sunny and 21 °C with a light breeze. Your 250 USD is about 230 EUR. "
        "This weekend the Lisbon Book Fair is on in Parque Eduardo VII (free entry, open until late)."
    )
    id1, id2 = "msg_01KimiAgentSearchT1a2B3c4", "msg_01KimiAgentAnswerT2d5E6f7"
    blocks1: list[Json] = [
        {"type": "thinking", "thinking": r1, "signature": signature(id1)},
        {
            "type": "server_tool_use",
            "id": "srvtoolu_01KimiLisbonQ7w8",
            "name": "web_search",
            "input": {"query": "Lisbon events this weekend"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_01KimiLisbonQ7w8",
            "content": [
                {
                    "type": "web_search_result",
                    "title": "Feira do Livro de Lisboa",
                    "url": "https://feiradolivrodelisboa.example/programa",
                    "encrypted_content": "EqkCCioIDRgCIiRLaW1pQXV0aG9yZWRMaXNib25Cb29rRmFpclJlc3VsdDEaDKimiAuthoredFromSpecAAAA",
                    "page_age": "2 days ago",
                }
            ],
        },
        {"type": "text", "text": "Let me check the weather and the exchange rate."},
        {
            "type": "tool_use",
            "id": "toolu_01KimiWeatherL1s2",
            "name": "get_weather",
            "input": {"city": "Lisbon"},
        },
        {
            "type": "tool_use",
            "id": "toolu_01KimiFxL3s4",
            "name": "convert_currency",
            "input": {"amount": 250, "from_currency": "USD", "to_currency": "EUR"},
        },
    ]
    body1: Json = {
        "model": "kimi-k3.1-pro",
        "max_tokens": 131072,
        "system": system,
        "messages": [{"role": "user", "content": question}],
        "output_config": {"effort": "low"},
        "tools": tools,
    }
    reply1 = Reply(
        id=id1,
        plain_input=24,
        cache_write=1900,
        output=140,
        reasoning_tokens=36,
        extra_usage={"server_tool_use": {"web_search_requests": 1}},
    )
    wire1 = anthropic_json(reply1)
    wire1["content"] = blocks1
    wire1["stop_reason"] = "tool_use"

    body2 = copy.deepcopy(body1)
    body2["messages"] += [
        {"role": "assistant", "content": copy.deepcopy(blocks1)},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01KimiWeatherL1s2",
                    "content": "Lisbon: 21 °C, sunny, light breeze",
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01KimiFxL3s4",
                    "content": "250.00 USD = 230.00 EUR",
                },
            ],
        },
    ]
    reply2 = Reply(
        id=id2,
        reasoning=r2,
        text=answer,
        plain_input=64,
        cache_read=1924,
        output=92,
        reasoning_tokens=28,
    )

    # Call 1's reply is the full wire form written above (server search blocks, tool_use).
    items = [
        exchange("anthropic", body1, wire1, shared_provenance=True),
        interaction("anthropic", body2, reply2),
    ]
    note = (
        "examples/agent_with_search.py --protocol anthropic on /v1/messages (create_agent,\n"
        'stream_mode="updates": non-streaming requests). Call 1: thinking, a server web search\n'
        "(server_tool_use + web_search_tool_result, run by the service), text, then two client tool_use\n"
        "blocks; usage.server_tool_use counts the search. The second request sends the assistant's blocks\n"
        "back complete and unchanged, then one user turn with both tool_result blocks."
    )
    return render(items, note)


def streaming_chat() -> str:
    system = "You are a friendly, concise assistant."
    q1 = "In one sentence: why does a kettle whistle?"
    q2 = "And why does the pitch rise as it heats up? Two sentences."
    r1 = (
        "The whistle is a small chamber with two holes. Steam forced through the first hole forms "
        "a jet, and vortices shed at the second hole make the air column resonate. One sentence."
    )
    a1 = (
        "Steam rushing through the narrow holes of the whistle sheds vortices that make the small "
        "chamber between them resonate, and that resonance is the whistle you hear."
    )
    r2 = (
        "They ask about the rising pitch. More heat means faster steam flow; vortex shedding "
        "frequency grows with flow speed, so the tone climbs until the flow settles."
    )
    a2 = (
        "As the water boils harder, steam leaves faster, and faster flow sheds vortices more often. "
        "A higher shedding frequency excites a higher tone, so the pitch climbs until boiling is steady."
    )

    turn1: Json = {
        "model": "kimi-k3.1-pro",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": q1}],
        "stream": True,
        "reasoning_effort": "high",
    }
    turn2: Json = {
        "model": "kimi-k3.1-pro",
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": q1},
            {"role": "assistant", "content": a1, "reasoning_content": r1},
            {"role": "user", "content": q2},
        ],
        "stream": True,
        "reasoning_effort": "high",
    }
    reply1 = Reply(
        id="chatcmpl-kimiKettle1Wh5sTl",
        text=a1,
        reasoning=r1,
        plain_input=8,
        cache_write=26,
        output=96,
        reasoning_tokens=51,
    )
    reply2 = Reply(
        id="chatcmpl-kimiKettle2Pi7cHx",
        text=a2,
        reasoning=r2,
        plain_input=27,
        cache_read=34,
        cache_write=56,
        output=104,
        reasoning_tokens=49,
    )
    note = (
        "examples/streaming_chat.py on /v1/chat/completions, two streamed turns: reasoning_content\n"
        "deltas, then content deltas, a finish chunk, and usage in a trailing chunk with empty choices.\n"
        "The second request carries the first reply exactly as streamed (content and reasoning_content)."
    )
    return render(
        [interaction("openai", turn1, reply1), interaction("openai", turn2, reply2)], note
    )


def structured_extraction() -> str:
    schema: Json = {
        "title": "Invoice",
        "description": "The key facts of an invoice.",
        "type": "object",
        "properties": {
            "number": {"type": "string"},
            "issued_on": {"type": "string", "description": "ISO 8601 date"},
            "due_on": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "description": "ISO 8601 date, if stated",
            },
            "seller": party(),
            "buyer": party(),
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "description": {"type": "string"},
                        "quantity": {"type": "integer"},
                        "unit_price": {"type": "number"},
                    },
                    "required": ["description", "quantity", "unit_price"],
                    "additionalProperties": False,
                },
            },
            "currency": {"type": "string", "description": "ISO 4217 code"},
            "total": {"type": "number"},
        },
        "required": [
            "number",
            "issued_on",
            "due_on",
            "seller",
            "buyer",
            "items",
            "currency",
            "total",
        ],
        "additionalProperties": False,
    }
    body: Json = {
        "model": "kimi-k3.1-pro",
        "messages": [
            {
                "role": "system",
                "content": "Extract the invoice. Leave out what the document does not state.",
            },
            {"role": "user", "content": INVOICE_DOCUMENT},
        ],
        "reasoning_effort": "low",
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "Invoice", "strict": True, "schema": schema},
        },
    }
    answer: Json = {
        "number": "2025-0417",
        "issued_on": "2025-03-03",
        "due_on": "2025-04-02",
        "seller": {"name": "Azulejo Design Lda.", "email": "billing@azulejo.example"},
        "buyer": {"name": "Northwind Books Ltd.", "email": None},
        "items": [
            {
                "description": "hand-painted tile panel (40x40 cm)",
                "quantity": 3,
                "unit_price": 180.0,
            },
            {"description": "installation, half day", "quantity": 1, "unit_price": 220.0},
        ],
        "currency": "EUR",
        "total": 760.0,
    }
    reply = Reply(
        id="chatcmpl-kimiInvoice4Xt7Rq2",
        text=json.dumps(answer, ensure_ascii=False),
        reasoning=(
            "Invoice 2025-0417 from Azulejo Design to Northwind Books. Two line items; "
            "the buyer has no e-mail, so null. Due date is 30 days after 3 March: 2 April."
        ),
        plain_input=296,
        cache_write=0,
        output=190,
        reasoning_tokens=58,
    )
    note = (
        "examples/structured_extraction.py on /v1/chat/completions: with_structured_output(Invoice,\n"
        "include_raw=True). The pydantic schema goes out as a strict json_schema response_format: nested\n"
        "models inlined, titles removed below the top, every property required, optional ones nullable,\n"
        "defaults dropped, objects closed. The answer puts null on the buyer's missing e-mail."
    )
    return render([interaction("openai", body, reply)], note)


def cassettes() -> Cassettes:
    return {
        f"examples/{name}.yaml": build()
        for name, build in (
            ("agent_with_search_anthropic", agent_with_search_anthropic),
            ("agent_with_search_openai", agent_with_search_openai),
            ("streaming_chat", streaming_chat),
            ("structured_extraction", structured_extraction),
        )
    }


if __name__ == "__main__":
    _kit.main(cassettes())
