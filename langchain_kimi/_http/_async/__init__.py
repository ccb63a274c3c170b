"""The transport's I/O loops: `_async/` is the source, `_sync/` is generated from it
(`tools/unasync.py`)."""
