"""What ChatKimi sends for an assistant tool-call turn that carries no reasoning.

Kimi services reject such a turn while thinking is on ("thinking is enabled but reasoning_content
is missing in assistant tool call message at index N", 400; an empty string counts as missing).
ChatKimi's own replies always carry their reasoning; a turn without it came from elsewhere
(another model behind `with_fallbacks`, a multi-agent history, hand-written few-shot examples, a
history rebuilt from a store). Both protocols send this one text in its place: Chat Completions as
`reasoning_content`, Messages as an unsigned `thinking` block (no signature can be made; both
Messages schemas require only `type` and `thinking`).
"""

FOREIGN_TURN_REASONING = "(reasoning not available)"
"""The same text the live mode's open question sends (`tests/live/questions.py`), so one live run
settles whether the service accepts exactly what ChatKimi sends."""
