"""The drivers of one call: `_async/` is the source, `_sync/` is generated from it
(`tools/unasync.py`)."""
