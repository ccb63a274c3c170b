"""Structured extraction: turn a short invoice into a typed pydantic object.

Shows `ChatKimi.with_structured_output(Invoice, include_raw=True)`: on the Chat Completions
protocol ChatKimi sends the schema as a strict `response_format` (optional fields become
nullable, and the nulls are removed again before validation), parses the answer into `Invoice`,
and keeps the raw `AIMessage` so you can read the reasoning and the token usage.

Run it live:

    EVOLINK_API_KEY=... python examples/structured_extraction.py

Without EVOLINK_API_KEY it replays recorded responses from cassettes/examples/ (no network).
"""

from __future__ import annotations

import argparse

from _replay import live_or_replay
from pydantic import BaseModel, Field

from langchain_kimi import ChatKimi

DOCUMENT = """\
INVOICE No. 2025-0417                                   Issued: 3 March 2025
From: Azulejo Design Lda., Rua da Prata 80, Lisbon (billing@azulejo.example)
To:   Northwind Books Ltd., 12 Harbour St, Bristol
  3 x  hand-painted tile panel (40x40 cm)     @ 180.00 EUR   =   540.00 EUR
  1 x  installation, half day                 @ 220.00 EUR   =   220.00 EUR
Total due: 760.00 EUR, payable within 30 days (by 2 April 2025).
"""


class Party(BaseModel):
    name: str
    email: str | None = Field(default=None, description="Contact e-mail, if given")


class LineItem(BaseModel):
    description: str
    quantity: int
    unit_price: float


class Invoice(BaseModel):
    """The key facts of an invoice."""

    number: str
    issued_on: str = Field(description="ISO 8601 date")
    due_on: str | None = Field(default=None, description="ISO 8601 date, if stated")
    seller: Party
    buyer: Party
    items: list[LineItem]
    currency: str = Field(description="ISO 4217 code")
    total: float


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Runs live with EVOLINK_API_KEY set; otherwise replays cassettes/examples/.",
    )
    parser.parse_args(argv)
    with live_or_replay("structured_extraction"):
        model = ChatKimi(model="kimi-k3.1-pro", reasoning_effort="low")
        extractor = model.with_structured_output(Invoice, include_raw=True)
        result = extractor.invoke(
            [
                ("system", "Extract the invoice. Leave out what the document does not state."),
                ("user", DOCUMENT),
            ]
        )

    invoice: Invoice = result["parsed"]
    print(f"invoice {invoice.number}, issued {invoice.issued_on}, due {invoice.due_on}")
    for role, party in (("seller", invoice.seller), ("buyer", invoice.buyer)):
        print(f"{role}: {party.name} ({party.email or 'no e-mail given'})")
    for item in invoice.items:
        print(f"  {item.quantity} x {item.description} @ {item.unit_price:.2f}")
    print(f"total: {invoice.total:.2f} {invoice.currency}")

    raw = result["raw"]
    usage = raw.usage_metadata or {}
    cached = usage.get("input_token_details", {}).get("cache_read", 0)
    reasoning = usage.get("output_token_details", {}).get("reasoning", 0)
    print(
        f"usage: input {usage.get('input_tokens', 0)} (cached {cached}) · "
        f"output {usage.get('output_tokens', 0)} (reasoning {reasoning})"
    )


if __name__ == "__main__":
    main()
