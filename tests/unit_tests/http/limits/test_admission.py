"""The shared back-off of one connection pool: FIFO queue, pacing after a 429, cool-down.

Time is a fake clock: every sleep advances it and is recorded, so nothing really waits. Behaviour
through the Transport runs on the sync and the async path (`mode`); two transports with the same
settings (here: the same injected clients and clock) share one pool, as two ChatKimi would.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from langchain_kimi import ChatKimi
from langchain_kimi._errors import KimiQuotaExceededError, KimiRateLimitError, KimiTimeoutError
from langchain_kimi._http.limits.admission import Admission, Permit, _Waiter
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.outcome import ANSWERED, Outcome
from langchain_kimi._http.limits.pacer import Pacer
from langchain_kimi._http.limits.retry import backoff_delay
from langchain_kimi._http.transport import Transport, TransportConfig
from tests.support.fake_clock import Clock, paced_pacer
from tests.support.fake_transport import OK, Script, ok, post, scripted_transport

KEY = "sk-test-admission-0123456789"
PATH = "/v1/chat/completions"
BASE = "https://direct.evolink.ai"
BODY: dict[str, Any] = {"model": "kimi-k3.1-pro", "messages": [{"role": "user", "content": "hi"}]}


class Gateway(Script):
    """The shared `Script`, also recording when (on the fake clock) each request came."""

    def __init__(self, clock: Clock, *answers: httpx.Response) -> None:
        super().__init__(*answers, ok())  # then 200s
        self.clock = clock
        self.sent_at: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.sent_at.append(self.clock.now)
        return super().__call__(request)


def failing(status: int, headers: dict[str, str], message: str = "slow down") -> httpx.Response:
    return httpx.Response(status, json={"error": {"message": message}}, headers=headers)


class Pool:
    """Transports sharing one pool: the same injected clients, the same clock. It keeps them:
    a pool of injected clients is dropped once no live transport uses it."""

    def __init__(self, gateway: Gateway, *, adaptive: bool = True) -> None:
        mock = httpx.MockTransport(gateway)
        self.clock = gateway.clock
        self.adaptive = adaptive
        self.client = httpx.Client(transport=mock)
        self.async_client = httpx.AsyncClient(transport=mock)
        self.transports: list[Transport] = []

    def transport(self, *, timeout: float = 30.0, max_retries: int = 2) -> Transport:
        config = TransportConfig(
            base_url=BASE,
            fallback_base_url=None,
            api_key=SecretStr(KEY),
            timeout=httpx.Timeout(timeout),
            max_retries=max_retries,
            sleep=self.clock.sleep,
            async_sleep=self.clock.async_sleep,
            clock=self.clock,
            adaptive_concurrency=self.adaptive,
        )
        transport = Transport(config, http_client=self.client, http_async_client=self.async_client)
        self.transports.append(transport)
        return transport


def rate_limited(seconds: str) -> httpx.Response:
    return failing(429, {"retry-after": seconds})


@pytest.mark.parametrize(("adaptive", "waits"), [(True, []), (False, [2.0])])
async def test_a_lone_429_holds_back_every_call_only_without_pacing(
    mode: str, adaptive: bool, waits: list[float]
) -> None:
    # Not adaptive: one shared pause of the Retry-After. Adaptive: a lone call's 429 is that
    # call's own to wait (its Retry-After, as the peers' SDKs wait it) and starts no pacing: one
    # 429 alone says nothing of the rate (on main 20012a2 the next call was paced at 1/s: it
    # waited 1.0 s). A crowded pool's 429s pace it: test_pacing_starts_at_a_crowded_429.
    clock = Clock()
    gateway = Gateway(clock, rate_limited("2"))
    pool = Pool(gateway, adaptive=adaptive)
    first, second = pool.transport(max_retries=0), pool.transport()
    with pytest.raises(KimiRateLimitError):
        await post(first, mode)  # no retries left: the 429 is raised, the cool-down remains
    assert clock.sleeps == []
    assert (await post(second, mode)).body == OK
    assert clock.sleeps == waits
    assert gateway.sent_at == [1000.0, 1000.0 + sum(waits)]


async def test_own_retry_after_is_unchanged_and_not_waited_twice(mode: str) -> None:
    clock = Clock()
    gateway = Gateway(clock, rate_limited("3"))
    transport = Pool(gateway).transport()
    assert (await post(transport, mode)).body == OK
    assert clock.sleeps == [3.0]  # its own Retry-After; the shared cool-down is the same wait
    assert gateway.sent_at == [1000.0, 1003.0]


async def test_a_calls_own_timeout_wins_over_a_longer_cool_down(mode: str) -> None:
    clock = Clock()
    gateway = Gateway(clock, rate_limited("30"))
    pool = Pool(gateway, adaptive=False)
    with pytest.raises(KimiRateLimitError):
        await post(pool.transport(max_retries=0), mode)
    impatient = pool.transport(timeout=5.0)
    with pytest.raises(KimiTimeoutError, match="cool-down") as info:
        await post(impatient, mode)
    assert "pool timeout of 5s" in str(info.value)
    assert clock.sleeps == []  # failed at once: never waited beyond its own 5 s
    assert len(gateway.sent_at) == 1  # and sent nothing
    # A call whose timeout covers the cool-down waits it out.
    assert (await post(pool.transport(timeout=60.0), mode)).body == OK
    assert clock.sleeps == [30.0]


@pytest.mark.parametrize(
    ("status", "headers", "cool_down"),
    [
        # Issue 29: a busy gateway (503, or 529 `overloaded_error`) holds back only the call it
        # refused; 30 % of 503s with Retry-After: 1 used to hold the whole pool (2.5-2.8x ideal).
        (503, {"retry-after": "4"}, []),
        (529, {"retry-after": "4"}, []),
        (503, {}, []),  # an overloaded gateway that names no wait: each call backs off alone
        (500, {"retry-after": "4"}, []),
        (429, {}, []),  # a lone call's 429: its own backoff only, no pacing (was [1.0])
    ],
)
async def test_which_answers_pause_the_pool(
    mode: str, status: int, headers: dict[str, str], cool_down: list[float]
) -> None:
    clock = Clock()
    pool = Pool(Gateway(clock, failing(status, headers)))
    with pytest.raises(Exception, match=str(status)):
        await post(pool.transport(max_retries=0), mode)
    await post(pool.transport(), mode)
    assert clock.sleeps == cool_down


@pytest.mark.parametrize("status", [503, 529])
async def test_without_pacing_an_overload_with_retry_after_pauses_the_pool(
    mode: str, status: int
) -> None:
    clock = Clock()
    pool = Pool(Gateway(clock, failing(status, {"retry-after": "4"})), adaptive=False)
    with pytest.raises(Exception, match=str(status)):
        await post(pool.transport(max_retries=0), mode)
    await post(pool.transport(), mode)
    assert clock.sleeps == [4.0]


async def test_an_exhausted_quota_neither_pauses_the_pool_nor_starts_pacing(
    mode: str,
) -> None:
    # Issue 11: waiting does not refill a quota, so its 429 is raised at once (not retried) and
    # must not hold back the other calls of the pool either.
    clock = Clock()
    body = {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}
    quota = httpx.Response(429, json=body, headers={"retry-after": "20"})
    pool = Pool(Gateway(clock, quota))
    with pytest.raises(KimiQuotaExceededError):
        await post(pool.transport(), mode)
    assert (await post(pool.transport(), mode)).body == OK
    assert clock.sleeps == []
    assert pool.transport()._pool().admission.rate is None


async def test_pacing_starts_at_a_crowded_429_and_can_be_turned_off(mode: str) -> None:
    for adaptive in (True, False):
        clock = Clock()
        gateway = Gateway(clock, ok(), ok(), rate_limited("1"), ok(), rate_limited("1"))
        pool = Pool(gateway, adaptive=adaptive)
        transport = pool.transport()
        admission = transport._pool().admission
        await post(transport, mode)
        await post(transport, mode)
        assert admission.rate is None  # successes alone never start limiting
        await post(transport, mode)  # a lone call's 429, then its retry succeeds
        assert admission.rate is None  # one 429 alone says nothing of the rate
        other = admission.call(30.0).enter(clock.sleep)  # another call of the pool in flight
        await post(transport, mode)  # a crowded 429, then the retry succeeds
        assert (admission.rate is not None) is adaptive
        other.release()
        assert admission.in_flight == 0


def test_chatkimi_passes_its_adaptive_flag_to_its_pool() -> None:
    on = ChatKimi(api_key=KEY, base_url="http://127.0.0.1:9")
    off = ChatKimi(api_key=KEY, base_url="http://127.0.0.1:9", adaptive_concurrency=False)
    assert on._transport()._pool().key.adaptive
    assert not off._transport()._pool().key.adaptive
    assert on._transport()._pool() is not off._transport()._pool()


async def test_a_429_without_retry_after_or_with_zero_is_backed_off_not_spun(mode: str) -> None:
    # Issue 20: "Retry-After: 0" (or negative, or absent) is still a limit: a lone call's
    # retries never go back to back. They back off (0.5 s, 1 s, 2 s, jittered) as the peers'
    # SDKs do (on main 20012a2 they waited the pacer's turns at 1/s instead).
    clock = Clock()
    gateway = Gateway(clock, rate_limited("0"), rate_limited("-3"), failing(429, {}))
    assert (await post(Pool(gateway).transport(max_retries=3), mode)).body == OK
    gaps = [b - a for a, b in zip(gateway.sent_at, gateway.sent_at[1:], strict=False)]
    least = [backoff_delay(retry, jitter=lambda low, high: low) for retry in range(3)]
    assert len(gaps) == 3
    assert all(gap >= shortest > 0 for gap, shortest in zip(gaps, least, strict=True))


async def test_a_call_requeued_while_the_pool_is_served_spends_no_retry(mode: str) -> None:
    # Issue 20: a 429 storm never exhausts the retries of calls that only waited for a turn
    # among others (issue 28 item 4: a call alone spends them, test_max_retries.py).
    clock = Clock()
    gateway = Gateway(clock, ok(), *[rate_limited("0")] * 3)
    pool = Pool(gateway)
    await post(pool.transport(), mode)  # the gateway serves the pool
    admission = pool.transports[0]._pool().admission
    other = admission.call(30.0).enter(clock.sleep)  # another call of the pool is in flight
    assert (await post(pool.transport(max_retries=1), mode)).body == OK
    other.release()
    assert len(gateway.sent_at) == 5


async def test_without_pacing_a_429_spends_a_retry_even_while_the_pool_is_served(
    mode: str,
) -> None:
    # `adaptive_concurrency=False`: no turn is kept for anyone, so every 429 costs a retry, as it
    # did before pacing existed; the same storm as above reaches the caller after one resend.
    clock = Clock()
    gateway = Gateway(clock, ok(), *[rate_limited("0")] * 3)
    pool = Pool(gateway, adaptive=False)
    await post(pool.transport(), mode)  # the gateway serves the pool
    admission = pool.transports[0]._pool().admission
    other = admission.call(30.0).enter(clock.sleep)  # another call of the pool is in flight
    with pytest.raises(KimiRateLimitError):
        await post(pool.transport(max_retries=1), mode)
    other.release()
    assert len(gateway.sent_at) == 3


async def test_max_retries_0_never_resends_not_even_a_requeued_call(mode: str) -> None:
    # `max_retries=0` is the caller's "send each request once" (as with ChatOpenAI): a 429 reaches
    # the caller even while the gateway serves the pool's other calls (FakeKimiGateway's scripted
    # errors rely on it).
    clock = Clock()
    gateway = Gateway(clock, ok(), rate_limited("0"), ok())
    pool = Pool(gateway)
    await post(pool.transport(), mode)  # the gateway serves the pool
    with pytest.raises(KimiRateLimitError):
        await post(pool.transport(max_retries=0), mode)
    assert len(gateway.sent_at) == 2


async def test_a_lone_429_loop_still_spends_retries(mode: str) -> None:
    # Nothing admitted on this pool lately: a 429 is not just a lost turn, it spends a retry.
    clock = Clock()
    gateway = Gateway(clock, *[rate_limited("0")] * 10)
    with pytest.raises(KimiRateLimitError):
        await post(Pool(gateway).transport(max_retries=2), mode)
    assert len(gateway.sent_at) == 3


# -- the admission itself (the queue and the pacer), sync and async -------------------------------


def admission(
    capacity: int = 8, *, adaptive: bool = True, warm: bool = False
) -> tuple[Admission, Clock]:
    """`warm`: a pool whose slow start is over (it ran at full speed: its window is open)."""
    clock = Clock()
    gate = Admission(capacity, adaptive=adaptive, clock=clock)
    if warm:
        gate.controller.slow_start.window = capacity
    return gate, clock


def enter_many(gate: Admission, clock: Clock, n: int) -> list[Permit]:
    return [gate.call(30.0).enter(clock.sleep) for _ in range(n)]


THROTTLED = Outcome("throttled", 1.0)


def test_queue_is_fifo_across_threads() -> None:
    gate, clock = admission(capacity=1)
    holder = gate.call(30.0).enter(clock.sleep)
    order: list[int] = []
    done = threading.Event()

    def caller(i: int) -> None:
        permit = gate.call(30.0).enter(clock.sleep)
        order.append(i)
        permit.release()
        if i == 4:
            done.set()

    threads = []
    for i in range(5):
        thread = threading.Thread(target=caller, args=(i,))
        thread.start()
        threads.append(thread)
        while gate.queued < i + 1:  # each in the queue before the next starts
            threading.Event().wait(0.001)
    holder.release()
    assert done.wait(10)
    for thread in threads:
        thread.join(10)
    assert order == [0, 1, 2, 3, 4]
    assert gate.in_flight == 0


async def test_queue_is_fifo_across_tasks_and_cancellation_hands_the_slot_on() -> None:
    gate, clock = admission(capacity=1)
    holder = await gate.call(30.0).aenter(clock.async_sleep)
    order: list[int] = []

    async def caller(i: int) -> None:
        permit = await gate.call(30.0).aenter(clock.async_sleep)
        order.append(i)
        permit.release()

    tasks = [asyncio.create_task(caller(i)) for i in range(5)]
    await asyncio.sleep(0)
    assert gate.queued == 5
    tasks[1].cancel()  # leaves the queue; the others keep their places
    holder.release()
    # Woken by each release, not by their (30 s) timeouts: the whole queue drains at once.
    await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 10.0)
    assert order == [0, 2, 3, 4]
    assert gate.in_flight == 0
    assert gate.queued == 0


async def test_queue_wait_is_bounded_by_the_pool_timeout() -> None:
    gate, clock = admission(capacity=1)
    holder = gate.call(30.0).enter(clock.sleep)
    with pytest.raises(KimiTimeoutError, match="free connection"):
        gate.call(0.0).enter(clock.sleep)
    with pytest.raises(KimiTimeoutError, match="free connection"):
        await gate.call(0.0).aenter(clock.async_sleep)
    assert gate.queued == 0
    holder.release()
    assert gate.in_flight == 0


async def test_stream_holds_its_slot_until_closed(mode: str) -> None:
    clock = Clock()
    sse = b'data: {"choices":[]}\n\ndata: [DONE]\n\n'
    events = httpx.Response(200, content=sse, headers={"content-type": "text/event-stream"})
    transport, _ = scripted_transport(Script(events), base_url=BASE, key=KEY, clock=clock)
    gate = transport._pool().admission
    if mode == "sync":
        with transport.stream_events(PATH, BODY) as events:
            assert gate.in_flight == 1
            list(events)
    else:
        async with transport.astream_events(PATH, BODY) as aevents:
            assert gate.in_flight == 1
            [event async for event in aevents]
    assert gate.in_flight == 0


def test_a_requeued_call_keeps_its_place_in_the_queue() -> None:
    gate, clock = admission(capacity=1)
    first, second = gate.call(30.0), gate.call(30.0)
    permit = first.enter(clock.sleep)
    waiter = _Waiter(999, None)
    later = gate.call(30.0)._turns(waiter)
    next(later)  # a later call queues behind the slot
    permit.done(ANSWERED)  # ...and takes it
    assert waiter.granted
    second_turns = second._turns(_Waiter(1, None))
    next(second_turns)
    retry_turns = first._turns(_Waiter(0, None))  # the first call's next attempt
    next(retry_turns)
    assert [w.ticket for w in gate._queue] == [0, 1]  # ahead of the second call, as it came first
    retry_turns.close()
    second_turns.close()
    assert gate.queued == 0


# -- pacing after a 429 (`pacer`) -----------------------------------------------------------------


def test_pacing_is_inert_until_the_first_429() -> None:
    gate, clock = admission(capacity=1000)
    for _ in range(300):
        gate.call(30.0).enter(clock.sleep).done(ANSWERED)
    assert clock.sleeps == []  # no pacing, no waiting: successes alone never start it
    assert gate.rate is None


def test_after_a_burst_the_waiting_calls_are_spread_at_the_admitted_rate() -> None:
    gate, clock = admission(capacity=1000, warm=True)
    permits = enter_many(gate, clock, 200)  # spread by the slow start: 1,000 per 0.25 s
    for permit in permits[:150]:  # 150 of 200 rejected at once: the gateway admitted 50
        permit.done(THROTTLED)
    assert gate.rate == pytest.approx(50.0)
    clock.sleeps.clear()
    later = enter_many(gate, clock, 20)
    # Spread 20 ms apart, first come first served, instead of all going out together; after a
    # step (0.25 s) in which calls waited and none met a 429, the pace probes upward: doubles,
    # as no step has measured the gateway yet (the first wave's estimate may be far below).
    assert clock.sleeps[:12] == [pytest.approx(0.02)] * 12
    assert clock.sleeps[13:] == [pytest.approx(0.01)] * (len(clock.sleeps) - 13)
    for permit in permits[150:] + later:
        permit.release()
    assert gate.in_flight == 0


def test_a_paced_call_never_waits_past_its_own_timeout_and_keeps_no_turn() -> None:
    gate, clock = admission(capacity=1000)
    permits = enter_many(gate, clock, 3)
    for permit in permits[:2]:
        permit.done(THROTTLED)  # one admitted in the last second: 1 request/s
    with pytest.raises(KimiTimeoutError, match="rate limit"):
        gate.call(0.5).enter(clock.sleep)  # its turn is 1 s away: fails now, sends nothing
    assert clock.sleeps == []
    assert gate.queued == 0
    gate.call(30.0).enter(clock.sleep)  # the turn the impatient call gave up is the next one
    assert clock.sleeps == [pytest.approx(1.0)]


async def test_calls_cancelled_while_paced_free_their_turns_at_once() -> None:
    # Issue 20: after cancelling an abatch of 300 at 5/s, a later call waited 26-58 s.
    gate, clock = admission(capacity=1000)
    permits = enter_many(gate, clock, 10)
    for permit in permits[:5]:
        permit.done(THROTTLED)  # 5 admitted: 5 requests/s
    for permit in permits:
        permit.release()
    never = asyncio.Event()

    async def paced_sleep(seconds: float) -> None:
        await never.wait()  # the head sleeps its turn until cancelled

    tasks = [asyncio.create_task(gate.call(300.0).aenter(paced_sleep)) for _ in range(300)]
    await asyncio.sleep(0)
    assert gate.queued == 300
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert gate.queued == 0
    assert gate.in_flight == 0
    gate.call(30.0).enter(clock.sleep)  # the next call waits one turn at most, not 300
    assert sum(clock.sleeps) <= 0.2 + 1e-9


def test_only_the_head_sleeps_on_a_time_so_no_wait_is_stale() -> None:
    # Issue 20: a wait fixed during a momentary low rate was never shortened. Only the head of
    # the queue sleeps on a time, at most one turn long; the others wait to be woken.
    gate, clock = admission(capacity=1000)
    permits = enter_many(gate, clock, 3)
    for permit in permits[:2]:
        permit.done(THROTTLED)  # 1 request/s
    waiters = [_Waiter(i, None) for i in range(5)]
    turns = [gate.call(60.0)._turns(waiter) for waiter in waiters]
    waits = [next(t) for t in turns]
    assert waits[0].timed
    assert waits[0].seconds == pytest.approx(1.0)
    assert [w.timed for w in waits[1:]] == [False] * 4
    gate.controller.pacer.rate = 4.0  # the rate rises: the head's next wait follows it at once
    clock.now += 0.1
    head_wait = gate._poll(waiters[0])
    assert not isinstance(head_wait, Permit)
    assert head_wait.seconds == pytest.approx(0.15)
    for t in turns:
        t.close()
    assert gate.queued == 0


def test_pacing_returns_to_inert_within_heal_seconds_of_clean_replies() -> None:
    # Issue 20: after a 429 storm, 200 calls to an unlimited gateway took 24.8 s instead of 1.35.
    gate, clock = admission(capacity=1000, warm=True)
    permits = enter_many(gate, clock, 60)
    for permit in permits[:10]:
        permit.done(THROTTLED)
    assert gate.rate is not None
    for permit in permits[10:]:
        permit.done(ANSWERED)
    clock.now += KNOBS.heal
    assert gate.rate is None
    clock.sleeps.clear()
    started = clock.now
    enter_many(gate, clock, 100)
    # Full speed again: the slow start's spacing only (at the pace, 50/s, it would take 2 s).
    assert clock.now - started < 0.1


def test_a_throttled_step_sets_the_rate_to_what_the_gateway_admitted() -> None:
    pacer = Pacer()
    pacer.sent(0.0)
    pacer.throttled(sent_at=0.0, now=0.0)  # a lone 429: one request per second to start
    assert pacer.rate == 1.0
    pacer.rate = 100.0
    for i in range(1, 100):  # sends at 100/s; the gateway refuses one in four (75/s)
        now = i / 100
        pacer.delay(now)
        if pacer.rate != 100.0:
            break
        pacer.sent(now)
        if i % 4 == 0:
            pacer.throttled(sent_at=now, now=now)
    # The first step that measured enough (0.25 s: 24 sends, 6 refused) set the rate to what
    # was admitted in it.
    assert now == pytest.approx(0.25)
    assert pacer.rate == pytest.approx(KNOBS.margin * 18 / 0.25)


def test_clean_steps_probe_upward_by_doubling_raises() -> None:
    pacer = paced_pacer(10.0, at=0.0)  # mid-episode: a step has measured the gateway
    rates = []
    now = 0.0
    for _ in range(4):  # four clean steps in which calls waited for their turn
        for _ in range(10):
            now += 0.03
            pacer.delay(now)
            pacer._waited_until = now + 0.01
            pacer.sent(now)
        rates.append(round(pacer.current(now) or 0.0, 6))
    raises = [b - a for a, b in zip([10.0, *rates], rates, strict=False)]
    assert raises[0] == pytest.approx(KNOBS.probe)
    assert raises[1] == pytest.approx(2 * KNOBS.probe)
    assert raises[2] == pytest.approx(4 * KNOBS.probe)


# -- sync and async waits are one logic (issue 19: twins that drifted) ----------------------------


class _Interrupting(threading.Event):
    """An Event whose wait runs `before` (e.g. frees a slot) and then raises KeyboardInterrupt,
    as Ctrl-C does in a blocked `Event.wait`."""

    before: Any = None

    def wait(self, timeout: float | None = None) -> bool:
        if _Interrupting.before is not None:
            _Interrupting.before()
        raise KeyboardInterrupt


@pytest.mark.parametrize("granted_first", [False, True])
def test_a_keyboard_interrupt_in_the_sync_wait_leaves_nothing_behind(
    monkeypatch: pytest.MonkeyPatch, granted_first: bool
) -> None:
    # Issue 19: after Ctrl-C while queued, in_flight stayed 1 and the next call timed out.
    gate, clock = admission(capacity=1)
    holder = gate.call(30.0).enter(clock.sleep)
    monkeypatch.setattr(threading, "Event", _Interrupting)
    monkeypatch.setattr(_Interrupting, "before", holder.release if granted_first else None)
    with pytest.raises(KeyboardInterrupt):
        gate.call(30.0).enter(clock.sleep)
    monkeypatch.undo()
    if not granted_first:
        holder.release()
    assert gate.in_flight == 0
    assert gate.queued == 0
    gate.call(0.0).enter(clock.sleep).release()  # the next call gets the slot at once


def test_an_interrupted_sync_wait_leaves_the_queue_while_its_traceback_is_still_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A notebook keeps the last traceback (`sys.last_traceback`) and with it the frames of the
    # interrupted wait: leaving the queue must not wait for the garbage collector.
    gate, clock = admission(capacity=1)
    holder = gate.call(30.0).enter(clock.sleep)
    monkeypatch.setattr(threading, "Event", _Interrupting)
    monkeypatch.setattr(_Interrupting, "before", None)
    with pytest.raises(KeyboardInterrupt) as interrupted:
        gate.call(30.0).enter(clock.sleep)
    monkeypatch.undo()
    assert interrupted.tb is not None  # the traceback is still held here
    assert gate.queued == 0
    holder.release()
    assert gate.in_flight == 0


async def test_a_cancelled_async_wait_leaves_the_queue_while_its_task_is_still_kept() -> None:
    gate, clock = admission(capacity=1)
    holder = gate.call(30.0).enter(clock.sleep)
    task = asyncio.create_task(gate.call(30.0).aenter(clock.async_sleep))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as cancelled:
        await task
    assert cancelled.tb is not None
    assert gate.queued == 0
    holder.release()
    assert gate.in_flight == 0


async def test_a_cancellation_after_the_slot_was_granted_hands_it_on() -> None:
    gate, clock = admission(capacity=1)
    holder = await gate.call(30.0).aenter(clock.async_sleep)
    task = asyncio.create_task(gate.call(30.0).aenter(clock.async_sleep))
    await asyncio.sleep(0)
    holder.release()  # granted to the queued task...
    task.cancel()  # ...which is cancelled before it runs again
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gate.in_flight == 0
    assert gate.queued == 0


@pytest.mark.parametrize("mode_", ["sync", "async"])
async def test_a_slot_granted_as_the_wait_times_out_is_used_by_both_halves(
    monkeypatch: pytest.MonkeyPatch, mode_: str
) -> None:
    # Issue 19: sync kept such a slot, async gave it back. Both now take it: it was granted.
    gate, clock = admission(capacity=1)
    holder = gate.call(30.0).enter(clock.sleep)

    class Releasing(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            clock.now += timeout or 0.0  # the whole budget passes...
            holder.release()  # ...and the slot frees at that moment
            return False

    if mode_ == "sync":
        monkeypatch.setattr(threading, "Event", Releasing)
        permit = gate.call(5.0).enter(clock.sleep)
        monkeypatch.undo()
    else:
        task = asyncio.create_task(gate.call(5.0).aenter(clock.async_sleep))
        await asyncio.sleep(0)
        clock.now += 5.0
        holder.release()
        permit = await task
    assert gate.in_flight == 1
    permit.release()
    assert gate.in_flight == 0
    assert gate.queued == 0


def test_a_pace_nobody_used_is_not_raised() -> None:
    # Calls waited (they slept their own back-off), yet only 4 sends went out in a step that
    # allowed 25: the step says nothing about the gateway, the rate stays.
    pacer = paced_pacer(100.0)
    for i in range(4):
        now = 2.0 + 0.05 * (i + 1)
        pacer._waited_until = now  # a call waited for its turn
        pacer.sent(now)
    assert pacer.current(2.3) == 100.0


def test_a_step_whose_sends_were_all_refused_halves_the_rate() -> None:
    pacer = paced_pacer(100.0)
    for i in range(4):
        now = 2.0 + 0.05 * (i + 1)
        pacer.sent(now)
        pacer.throttled(sent_at=now, now=now)
    assert pacer.current(2.3) == 50.0
