"""HTTP only: transport, config, replies, retry, reading, event stream, SSE; no LangChain, no
protocol (layer order and module map: docs/internals.md)."""
