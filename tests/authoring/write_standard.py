"""Write cassettes/standard/<protocol>/*.yaml: `python -m tests.authoring.write_standard`."""

from __future__ import annotations

from tests.authoring import standard_anthropic, standard_openai
from tests.authoring._kit import CASSETTE_ROOT, write_all

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


def main() -> None:
    root = CASSETTE_ROOT / "standard"
    count = write_all(root / "openai", "openai", standard_openai.table(), NOTES)
    count += write_all(root / "anthropic", "anthropic", standard_anthropic.table(), NOTES)
    print(f"wrote {count} cassettes under {root}")


if __name__ == "__main__":
    main()
