"""Benchmarks of ChatKimi against its peers; run `python -m benchmarks.run`."""
