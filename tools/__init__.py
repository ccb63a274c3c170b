"""Developer tools that are not tests: `tools.authoring` writes the authored cassettes,
`tools.live` runs the suites and open questions against the live gateway (`./dev live`)."""
