"""_http: see docs/internals.md."""
