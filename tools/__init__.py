"""Developer tools that are not tests: `tools.authoring` writes the authored cassettes,
`tools.live` runs the suites and open questions against the live gateway (`./dev live`).

Also what the tools share with the tests: the kimiyaml cassette format, schema validation against
`spec/`, a small SSE text parser, the repository's paths and the standard suites' settings. The
tools import the package (`langchain_kimi.testing` included), never `tests/`.
"""
