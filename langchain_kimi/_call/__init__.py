"""One call, protocol-neutral and sans-I/O: its plans and stop emulation (docs/internals.md)."""
