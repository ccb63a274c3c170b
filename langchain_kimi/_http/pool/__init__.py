"""Connections: one set per gateway settings, shared by every Transport, spread over small
httpcore pools, drained within bounds (docs/internals.md)."""
