"""What the tests share that is not a fixture: fake gateways and transports, loopback servers,
stream decoding helpers, secret forms, the pool simulation.

No module here is a test module; fixtures live in the `conftest.py` of the folder that uses them.
What the tests share with the tools (cassette format, schema validation, SSE text, the
repository's paths, the standard suites' settings) is in `tools/`: the tests import the tools,
never the reverse. The Kimi replies the fake gateways here write themselves are built with
`langchain_kimi.testing` (a test may still hand one any body it needs).
"""
