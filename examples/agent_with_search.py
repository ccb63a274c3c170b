"""An agent with two tools and Kimi's built-in web search, printing each step as it happens.

Shows `langchain.agents.create_agent` driving `ChatKimi`: the model reasons, searches the web
(the gateway runs the searches; on the Chat Completions protocol ChatKimi also runs the documented
`$web_search` round trip for you), calls two local Python tools, and answers. Each step is printed:
reasoning (shortened), searches, tool calls, tool results, the answer and the total token usage.

Run it live:

    EVOLINK_API_KEY=... python examples/agent_with_search.py
    EVOLINK_API_KEY=... python examples/agent_with_search.py --protocol anthropic

Without EVOLINK_API_KEY it replays recorded responses from cassettes/examples/ (no network).
"""

from __future__ import annotations

import argparse
from typing import Any

from _replay import live_or_replay
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.messages.ai import UsageMetadata, add_usage
from langchain_core.tools import tool

from langchain_kimi import ChatKimi

QUESTION = (
    "I land in Lisbon on Saturday with 250 USD in cash. What's the weather there, how much is "
    "that in euros, and is there a big event in Lisbon this weekend?"
)

WEATHER = {"lisbon": "21 °C, sunny, light breeze", "porto": "17 °C, cloudy"}
RATES_PER_USD = {"USD": 1.0, "EUR": 0.92, "GBP": 0.79}


@tool(parse_docstring=True)
def get_weather(city: str) -> str:
    """Get the current weather for a city.

    Args:
        city: City name, e.g. "Lisbon".
    """
    return f"{city}: {WEATHER.get(city.lower(), 'no data')}"


@tool(parse_docstring=True)
def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount of money between currencies (ISO codes such as USD, EUR, GBP).

    Args:
        amount: The amount to convert.
        from_currency: ISO code of the source currency.
        to_currency: ISO code of the target currency.
    """
    rate = RATES_PER_USD[to_currency.upper()] / RATES_PER_USD[from_currency.upper()]
    return f"{amount:.2f} {from_currency.upper()} = {amount * rate:.2f} {to_currency.upper()}"


def shorten(text: str, limit: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def print_step(message: BaseMessage) -> None:
    if isinstance(message, ToolMessage):
        print(f"[tool]   {message.name} -> {message.content}")
        return
    if not isinstance(message, AIMessage):
        return
    if reasoning := message.additional_kwargs.get("reasoning_content"):
        print(f"[think]  {shorten(reasoning)}")
    # Searches run on the service; content_blocks shows them on both protocols.
    for block in message.content_blocks:
        if block["type"] == "server_tool_call" and block.get("name") == "web_search":
            print(f"[search] {block.get('args', {}).get('query', '')!r}")
    searches = message.response_metadata.get("server_tool_use", {}).get("web_search_requests", 0)
    if searches:
        print(f"[search] {searches} web search(es) run by the service")
    if message.text:
        label = "[say]   " if message.tool_calls else "[answer]"
        print(f"{label} {message.text}")
    for call in message.tool_calls:
        args = ", ".join(f"{key}={value!r}" for key, value in call["args"].items())
        print(f"[call]   {call['name']}({args})")


def usage_line(usage: UsageMetadata | None) -> str:
    usage = usage or UsageMetadata(input_tokens=0, output_tokens=0, total_tokens=0)
    cached = usage.get("input_token_details", {}).get("cache_read", 0)
    reasoning = usage.get("output_token_details", {}).get("reasoning", 0)
    return (
        f"usage: input {usage['input_tokens']} (cached {cached}) · "
        f"output {usage['output_tokens']} (reasoning {reasoning})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--protocol", choices=["openai", "anthropic"], default="openai")
    args = parser.parse_args(argv)

    with live_or_replay(f"agent_with_search_{args.protocol}"):
        model = ChatKimi(model="kimi-k3.1-pro", protocol=args.protocol, reasoning_effort="low")
        agent = create_agent(
            model,
            # "web_search" as a dict is a built-in tool: the service runs it, not the agent.
            tools=[get_weather, convert_currency, {"type": "web_search"}],
            system_prompt="You are a concise travel assistant. Use the tools for facts.",
        )
        print(f"[user]   {QUESTION}")
        total: Any = None
        inputs: Any = {"messages": [("user", QUESTION)]}
        for update in agent.stream(inputs, stream_mode="updates"):
            for node in update.values():
                for message in (node or {}).get("messages", []):
                    print_step(message)
                    if isinstance(message, AIMessage) and message.usage_metadata:
                        total = add_usage(total, message.usage_metadata)
        print(usage_line(total))


if __name__ == "__main__":
    main()
