"""_langchain: see docs/internals.md."""
