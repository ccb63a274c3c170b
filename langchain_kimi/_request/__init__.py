"""What one request asks for, protocol-neutral: capabilities, options, their resolution, tool
specs (docs/internals.md)."""
