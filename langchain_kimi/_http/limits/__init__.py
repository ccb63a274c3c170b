"""The rate policy in front of the connections: admission, the controller and its parts (slow
start, pacer, cool-down), one retry decision per failure, the `Retry-After` forms
(docs/internals.md, which also gives the words "pool", "turn", "window" and "span" their one
sense here)."""
