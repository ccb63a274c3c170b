# Generated from _async/__init__.py by tools/unasync.py: do not edit.
"""The drivers of one call: `_async/` is the source, `_sync/` is generated from it
(`tools/unasync.py`)."""
