"""What the tests share that is not a fixture: fake gateways and transports, loopback servers,
the cassette format, schema validation, SSE helpers and the repository's paths.

No module here is a test module; fixtures live in the `conftest.py` of the folder that uses them.
"""
