"""_request: see docs/internals.md."""
