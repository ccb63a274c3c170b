"""The loopback gateway's kinds of limit (`benchmarks/limits.py`, issue 29) on given times, and the
options `benchmarks.rates` hands the gateway for each kind: what each admits and refuses, and the
wait its 429 names. No socket, no clock, no timing assertion."""

from __future__ import annotations

import random

import pytest

from benchmarks import gateway, limits, rates


def _admitted(limit: limits.Limit, times: list[float], tokens: float = 0.0) -> list[bool]:
    return [limit.take(now, tokens) == 0 for now in times]


def test_a_token_bucket_admits_its_burst_then_its_rate() -> None:
    bucket = limits.TokenBucket(10, burst=1.0)
    assert _admitted(bucket, [0.0] * 11) == [True] * 10 + [False]
    assert bucket.take(0.0) == pytest.approx(0.1)  # one token is a tenth of a second away
    assert _admitted(bucket, [0.1, 0.1]) == [True, False]


def test_a_token_bucket_whose_limit_falls_refills_at_the_new_rate() -> None:
    bucket = limits.TokenBucket(100, burst=1.0, moves_at=2.0, moved_rate=10, start=5.0)
    assert _admitted(bucket, [5.0] * 100) == [True] * 100
    assert _admitted(bucket, [6.9]) == [True]  # before the move: 100/s
    # Its full bucket shrinks to one second of the new rate: 10 at once, then 10/s.
    assert sum(_admitted(bucket, [7.0 + i / 1000 for i in range(1000)])) == 19
    assert bucket.capacity == 10


def test_a_limit_that_rises_admits_more() -> None:
    bucket = limits.TokenBucket(10, burst=1.0, moves_at=3.0, moved_rate=50)
    assert sum(_admitted(bucket, [2.9] * 20)) == 10  # drained just before the rise
    times = [3.0 + i / 100 for i in range(100)]  # 100/s for a second after the rise
    assert 50 <= sum(_admitted(bucket, times)) <= 56  # about 50/s, not 10/s


def test_a_concurrency_limit_counts_what_is_in_flight() -> None:
    limit = limits.ConcurrencyLimit(2)
    for answered_at in (1.0, 1.5):
        assert limit.take(0.0) == 0
        limit.admitted(0.0, answered_at)
    assert limit.take(0.5) == pytest.approx(0.5)  # full: the first is answered at 1.0
    assert limit.take(1.0) == 0  # the first answer freed a place


def test_a_tokens_per_minute_limit_spends_each_prompt() -> None:
    limit = limits.TokensPerMinute(60_000, start=0.0)  # 1,000 tokens/s
    assert limit.take(0.0, 50_000) == 0
    assert limit.take(0.0, 20_000) == pytest.approx(10.0)  # 10,000 left: 10 s to refill
    assert limit.take(10.0, 20_000) == 0


def test_a_sliding_window_admits_its_rate_in_any_trailing_second() -> None:
    window = limits.SlidingWindow(3)
    assert _admitted(window, [0.0, 0.4, 0.8, 0.9]) == [True, True, True, False]
    assert window.take(0.9) == pytest.approx(0.1)  # the send at 0.0 leaves the window at 1.0
    assert _admitted(window, [1.0, 1.1]) == [True, False]


def test_a_fixed_window_resets_on_every_whole_second() -> None:
    window = limits.FixedWindow(2, start=10.0)
    assert _admitted(window, [10.1, 10.2, 10.9]) == [True, True, False]
    assert window.take(10.9) == pytest.approx(0.1)
    assert _admitted(window, [11.0, 11.0, 11.0]) == [True, True, False]


def test_a_fixed_window_of_a_minute_admits_its_minutes_count_then_says_when_it_reopens() -> None:
    # 1 a second counted per minute (60 a minute, Kong's `minute: 60`): all 60 at once.
    window = limits.limit_for("fixed", rate=1, window=60.0)
    assert _admitted(window, [0.5] * 60 + [0.5]) == [True] * 60 + [False]
    assert window.take(20.0) == pytest.approx(40.0)  # the minute's end, 40 s away
    assert _admitted(window, [60.0]) == [True]
    assert limits.ideal_seconds(
        "fixed", calls=150, answer=1.0, rate=1, burst=1.0, window=60.0
    ) == pytest.approx(121.0)  # the 121st to 150th go when the third minute opens


def test_an_overload_refuses_its_share_only_while_it_lasts() -> None:
    overload = limits.Overload(share=0.3, seconds=10.0, status=529)
    draw = random.Random(0)
    refused = sum(overload.refuses(5.0, draw) for _ in range(10_000))
    assert 2_700 < refused < 3_300
    assert not any(overload.refuses(10.0, draw) for _ in range(1_000))


def test_every_kind_is_built_by_name() -> None:
    built = {kind: type(limits.limit_for(kind, rate=50)) for kind in limits.KINDS}
    assert built == {
        "bucket": limits.TokenBucket,
        "concurrency": limits.ConcurrencyLimit,
        "tokens": limits.TokensPerMinute,
        "sliding": limits.SlidingWindow,
        "fixed": limits.FixedWindow,
    }
    with pytest.raises(ValueError, match="unknown limit kind"):
        limits.limit_for("leaky", rate=1)


def test_the_overload_bodies_name_their_kind() -> None:
    assert b'"overloaded_error"' in gateway._OVERLOADED[("anthropic", 529)]
    assert b'"api_error"' in gateway._OVERLOADED[("openai", 503)]


@pytest.mark.parametrize("cell", rates.OTHER_KINDS, ids=lambda cell: cell.name)
def test_each_new_cell_hands_the_gateway_its_kind(cell: rates.Cell) -> None:
    options = rates._gateway_options(cell)
    args = gateway.options().parse_args(options)
    assert args.limit == cell.limit
    assert (args.overload_share > 0) == (cell.overload is not None)
    if cell.overload is not None:
        assert args.overload_status == cell.overload[2]
        assert args.overload_no_retry_after == (not cell.overload[3])
    if cell.moves is not None:
        assert (args.moves_at, args.moved_rate) == cell.moves
    assert args.window == cell.window
    assert cell.limited
    assert cell.ideal > 0


def test_the_window_of_a_minute_cell_counts_whole_minutes() -> None:
    cell = next(c for c in rates.OTHER_KINDS if c.window == 60.0)
    # 150 calls at 60 a minute: the last 30 go when the third minute opens, at 120 s.
    assert cell.ideal == pytest.approx(120.0 + sum(cell.answer) / 2)
    gate = gateway.Gateway(gateway.options().parse_args(rates._gateway_options(cell)))
    assert gate.limit is not None
    admitted = [gate.limit.take(gate.started + 1.0) == 0 for _ in range(61)]
    assert admitted == [True] * 60 + [False]


def test_a_529_cell_runs_the_clients_that_speak_messages() -> None:
    cell = next(c for c in rates.OTHER_KINDS if c.overload and c.overload[2] == 529)
    assert set(rates.clients_for(cell, 3, 3)) == {
        rates.KIMI_MESSAGES,
        rates.CHAT_ANTHROPIC,
        rates.CAREFUL_ANTHROPIC,
    }


def test_the_matrix_names_known_cells_once() -> None:
    known = {cell.name for cell in (*rates.FULL, *rates.OTHER_KINDS)}
    assert set(rates.MATRIX_NAMES) <= known
    assert len(set(rates.MATRIX_NAMES)) == len(rates.MATRIX_NAMES)


def test_a_concurrency_cell_of_several_processes_counts_all_their_calls_in_flight() -> None:
    # 16 processes of 16 calls at a time fill a limit of 20: the ideal is the limit's throughput
    # (320 calls x 3 s / 20), not one process's 16 in flight.
    cell = rates.Cell(
        "16 behind 20",
        0,
        answer=(1.0, 5.0),
        calls=320,
        concurrency=16,
        processes=16,
        limit="concurrency",
        concurrency_limit=20,
    )
    assert cell.ideal == pytest.approx(320 * 3.0 / 20)


def test_the_shared_limit_cells_run_several_processes_behind_one_gateway_limit() -> None:
    shared = [c for c in rates.OTHER_KINDS if "behind a concurrency limit" in c.name]
    assert [(c.processes, c.concurrency_limit) for c in shared] == [(4, 10), (16, 20)]
    for cell in shared:
        args = gateway.options().parse_args(rates._gateway_options(cell))
        assert (args.limit, args.concurrency_limit) == ("concurrency", cell.concurrency_limit)
        assert cell.concurrency * cell.processes > cell.concurrency_limit  # crowded
        assert cell.calls % cell.processes == 0  # every process sends its share
        assert cell.ideal <= 120  # one client's run within about 2 minutes


def test_a_client_filter_keeps_only_the_clients_named() -> None:
    cell = rates.OTHER_KINDS[0]
    assert rates.clients_for(cell, 3, 1, only=(rates.KIMI_DEFAULT,)) == {rates.KIMI_DEFAULT: 3}
    assert set(rates.clients_for(cell, 3, 1)) == {
        rates.KIMI_DEFAULT,
        rates.CHAT_ANTHROPIC,
        rates.CHAT_OPENAI,
        rates.CAREFUL_ANTHROPIC,
        rates.CAREFUL_OPENAI,
    }


def test_a_careful_peer_is_given_the_gateways_rate_per_process() -> None:
    cell = rates.Cell("50/s, 2 processes", 50, processes=2)
    assert cell.admitted_rate == 50
    concurrency = rates.Cell("limit 20", 0, answer=(0.1, 0.3), limit="concurrency")
    assert concurrency.admitted_rate == pytest.approx(100.0)  # 20 in flight of 0.2 s answers
    tokens = rates.Cell("tpm", 0, limit="tokens", tokens_per_minute=600_000)
    assert tokens.admitted_rate == pytest.approx(1.0)  # 10,000 tokens a minute-second


def test_a_worker_notes_how_many_of_its_calls_were_unfinished_when_one_failed() -> None:
    seen = rates._Failures(3)
    seen.on_llm_end()
    seen.on_llm_error(RuntimeError("429"))
    seen.on_llm_error(RuntimeError("429"))
    assert [failure["unfinished"] for failure in seen.seen] == [2, 1]  # the last one was alone
