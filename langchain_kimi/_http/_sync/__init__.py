# Generated from _async/__init__.py by tools/unasync.py: do not edit.
"""The transport's I/O loops: `_async/` is the source, `_sync/` is generated from it
(`tools/unasync.py`)."""
