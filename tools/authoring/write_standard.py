"""Write cassettes/standard/<protocol>/*.yaml: `python -m tools.authoring.write_standard`.

The request bodies are written out by hand in `standard_openai.py` and `standard_anthropic.py`
(authored from spec/*.yaml); this module only names the files and adds the notes.
"""

from __future__ import annotations

from tools.authoring import _kit, standard_anthropic, standard_openai
from tools.authoring._kit import Cassettes, interaction, render

NOTES = {
    "test_structured_few_shot_examples": (
        "The suite's few-shot example gets a random uuid4 tool call id; the test module pins\n"
        "langchain_core.utils.function_calling's uuid4 to a counter, so the id is fixed here."
    ),
    "test_image_inputs": (
        "The suite downloads a PNG from GitHub; the test module serves a 1x1 PNG instead\n"
        "(no network), so the base64 data below is that PNG."
    ),
    "test_stream_time": "pytest-benchmark replays this stream several times (allow_playback_repeats).",
}


def cassettes() -> Cassettes:
    files: Cassettes = {}
    for protocol, table in (
        ("openai", standard_openai.table()),
        ("anthropic", standard_anthropic.table()),
    ):
        for name, pairs in table.items():
            items = [interaction(protocol, body, reply) for body, reply in pairs]
            files[f"standard/{protocol}/{name}.yaml"] = render(items, NOTES.get(name, ""))
    return files


if __name__ == "__main__":
    _kit.main(cassettes())
