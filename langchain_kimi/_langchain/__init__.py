"""The LangChain-facing helpers of ChatKimi: structured output, strict schemas, the content-block
translator, the token estimate, constructor arguments (docs/internals.md)."""
