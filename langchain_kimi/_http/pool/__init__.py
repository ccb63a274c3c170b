"""Connections: the httpx clients of each gateway (`clients`), shared by every key, and what the
models of a process share (`registry`)."""
