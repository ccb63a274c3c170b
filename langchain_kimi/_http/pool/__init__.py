"""_http/pool: see docs/internals.md."""
