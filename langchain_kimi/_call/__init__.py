"""_call: see docs/internals.md."""
