"""One call, protocol-neutral: its plans and stop emulation (sans-I/O), and the drivers that carry
a plan out (`_async/`, and `_sync/` generated from it); docs/internals.md."""
