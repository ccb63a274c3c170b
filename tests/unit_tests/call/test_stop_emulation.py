"""Client-side stop emulation: truncate_at_stop and the streaming StopStreamFilter."""

from __future__ import annotations

import random

import pytest

from langchain_kimi._call.stop import StopStreamFilter, truncate_at_stop


@pytest.mark.parametrize(
    ("text", "stops", "expected"),
    [
        ("hello END world", ["END"], ("hello ", "END")),
        ("no match here", ["END"], ("no match here", None)),
        ("a STOP b END c", ["END", "STOP"], ("a ", "STOP")),
        ("xxABCyy", ["ABC", "AB"], ("xx", "ABC")),  # same start: the longer stop is reported
        ("END at start", ["END"], ("", "END")),
        ("ends with END", ["END"], ("ends with ", "END")),
        ("empty stops", [], ("empty stops", None)),
        ("ignores empty string", [""], ("ignores empty string", None)),
        ("naïve café → stop☕ here", ["☕"], ("naïve café → stop", "☕")),
        ("emoji 👋🏽 wave", ["👋🏽"], ("emoji ", "👋🏽")),
        ("line1\n\nline2", ["\n\n"], ("line1", "\n\n")),
    ],
)
def test_truncate_at_stop(text: str, stops: list[str], expected: tuple[str, str | None]) -> None:
    assert truncate_at_stop(text, stops) == expected


def run(deltas: list[str], stops: list[str]) -> tuple[str, StopStreamFilter, list[str]]:
    filt = StopStreamFilter(stops)
    emitted = [filt.push(d) for d in deltas]
    emitted.append(filt.flush())
    return "".join(emitted), filt, emitted


def test_match_split_across_deltas() -> None:
    text, filt, emitted = run(["Hello EN", "D world"], ["END"])
    assert text == "Hello "
    assert filt.stopped
    assert filt.matched == "END"
    assert emitted[0] == "Hello "  # "EN" held back: it could begin "END"


def test_match_split_over_many_single_char_deltas() -> None:
    text, filt, _ = run(list("abc<|stop|>def"), ["<|stop|>"])
    assert text == "abc"
    assert filt.matched == "<|stop|>"


def test_false_start_is_released() -> None:
    filt = StopStreamFilter(["END"])
    assert filt.push("the EN") == "the "
    assert filt.push("TRY") == "ENTRY"
    assert filt.push(" E") == " "
    assert filt.flush() == "E"
    assert not filt.stopped
    assert filt.matched is None


def test_holds_back_at_most_longest_stop_minus_one() -> None:
    filt = StopStreamFilter(["ABCDE", "XY"])
    emitted = filt.push("zzzABCD")
    assert emitted == "zzz"
    assert len("zzzABCD") - len(emitted) <= len("ABCDE") - 1


def test_nothing_after_match() -> None:
    filt = StopStreamFilter(["STOP"])
    assert filt.push("keep STOP drop") == "keep "
    assert filt.push("more text") == ""
    assert filt.flush() == ""


def test_earliest_match_wins_across_stops() -> None:
    text, filt, _ = run(["aaa TW", "O bbb ONE ccc"], ["ONE", "TWO"])
    assert text == "aaa "
    assert filt.matched == "TWO"


def test_overlapping_prefixes() -> None:
    # "aab" must be found although the buffer first looks like a run of "a"s.
    text, filt, _ = run(["xa", "a", "a", "b!"], ["aab"])
    assert text == "xa"
    assert filt.matched == "aab"


def test_unicode_split_points() -> None:
    text, filt, _ = run(["日本", "語の", "終わ", "り。続き"], ["終わり"])
    assert text == "日本語の"
    assert filt.matched == "終わり"


def test_no_stops_passes_through() -> None:
    filt = StopStreamFilter([])
    assert filt.push("abc") == "abc"
    assert filt.flush() == ""


@pytest.mark.parametrize("seed", range(30))
def test_stream_equals_one_shot_truncation(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = "ab☕ \n"
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
    stops = [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4)))
        for _ in range(rng.randint(1, 3))
    ]
    cuts = sorted(rng.sample(range(len(text) + 1), k=min(len(text) + 1, rng.randint(0, 10))))
    deltas = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    streamed, filt, _ = run(deltas, stops)
    expected_text, expected_stop = truncate_at_stop(text, stops)
    assert streamed == expected_text
    assert filt.stopped == (expected_stop is not None)
    assert filt.matched == expected_stop


def test_earlier_longer_candidate_wins_over_shorter_complete_match() -> None:
    # "bc" completes first, but "abcd" starts earlier: the one-shot cut is before "a".
    text, filt, _ = run(["xab", "c", "d tail"], ["abcd", "bc"])
    assert text == "x"
    assert filt.matched == "abcd"
    text, filt, _ = run(["xab", "c", "X tail"], ["abcd", "bc"])
    assert text == "xa"
    assert filt.matched == "bc"


def test_same_start_prefers_longer_stop_even_at_stream_end() -> None:
    text, filt, _ = run(["xAB"], ["AB", "ABC"])
    assert (text, filt.matched) == ("x", "AB")
    text, filt, _ = run(["xAB", "C"], ["AB", "ABC"])
    assert (text, filt.matched) == ("x", "ABC")
