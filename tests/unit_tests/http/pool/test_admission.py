"""The shared back-off of one connection pool: cool-down after 429, adaptive window, FIFO queue.

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
from langchain_kimi._http.pool.adaptive_window import DECREASE, AdaptiveWindow
from langchain_kimi._http.pool.admission import Admission, Permit
from langchain_kimi._http.pool.pacer import WINDOW, Pacer
from langchain_kimi._http.transport import Transport, TransportConfig
from tests.support.fake_transport import OK, Script, ok, post, scripted_transport

KEY = "sk-test-admission-0123456789"
PATH = "/v1/chat/completions"
BASE = "https://direct.evolink.ai"
BODY: dict[str, Any] = {"model": "kimi-k3.1-pro", "messages": [{"role": "user", "content": "hi"}]}


class Clock:
    """Fake time: `sleep` / `async_sleep` advance it and record the waits."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds

    async def async_sleep(self, seconds: float) -> None:
        self.sleep(seconds)


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
    """Transports sharing one pool: the same injected clients, the same clock."""

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
        # Kept alive: the pool of injected clients is forgotten when its last Transport is
        # collected, and a collection between two calls would reset what the pool learnt.
        self.transports.append(transport)
        return transport


def rate_limited(seconds: str) -> httpx.Response:
    return failing(429, {"retry-after": seconds})


@pytest.mark.parametrize("adaptive", [True, False])
async def test_a_429_makes_every_call_on_the_pool_wait_out_its_retry_after(
    mode: str, adaptive: bool
) -> None:
    # Not adaptive: one shared pause. Adaptive: paced at what the gateway admitted (1 request
    # per 2 s here), which for the next call is the same wait.
    clock = Clock()
    gateway = Gateway(clock, rate_limited("2"))
    pool = Pool(gateway, adaptive=adaptive)
    first, second = pool.transport(max_retries=0), pool.transport()
    with pytest.raises(KimiRateLimitError):
        await post(first, mode)  # no retries left: the 429 is raised, the cool-down remains
    assert clock.sleeps == []
    assert (await post(second, mode)).body == OK
    # The other call waited the 2 s before sending, instead of discovering the limit again.
    assert clock.sleeps == [2.0]
    assert gateway.sent_at == [1000.0, 1002.0]


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
    pool = Pool(gateway)
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
        (503, {"retry-after": "4"}, [4.0]),
        (503, {}, []),  # an overloaded gateway that names no wait: each call backs off alone
        (500, {"retry-after": "4"}, []),
        (429, {}, [0.5]),  # a 429 without Retry-After still pauses the pool briefly
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


async def test_an_exhausted_quota_neither_pauses_the_pool_nor_shrinks_its_window(
    mode: str,
) -> None:
    # Issue 11: waiting does not refill a quota, so its 429 is raised at once (not retried) and
    # must not hold back the other calls of the pool either.
    clock = Clock()
    quota = failing(429, {"retry-after": "20"}, "You exceeded your current quota")
    pool = Pool(Gateway(clock, quota))
    with pytest.raises(KimiQuotaExceededError):
        await post(pool.transport(), mode)
    assert (await post(pool.transport(), mode)).body == OK
    assert clock.sleeps == []
    assert pool.transport()._pool().admission.window is None


async def test_adaptive_window_is_inert_until_the_first_429_and_can_be_turned_off(
    mode: str,
) -> None:
    for adaptive in (True, False):
        clock = Clock()
        pool = Pool(Gateway(clock, ok(), ok(), rate_limited("1")), adaptive=adaptive)
        transport = pool.transport()
        admission = transport._pool().admission
        await post(transport, mode)
        await post(transport, mode)
        assert admission.window is None  # successes alone never start limiting
        await post(transport, mode)  # 429, then the retry succeeds
        assert (admission.window is not None) is adaptive
        assert admission.in_flight == 0


def test_chatkimi_passes_its_adaptive_flag_to_its_pool() -> None:
    on = ChatKimi(api_key=KEY, base_url="http://127.0.0.1:9")
    off = ChatKimi(api_key=KEY, base_url="http://127.0.0.1:9", adaptive_concurrency=False)
    assert on._transport()._pool().key.adaptive
    assert not off._transport()._pool().key.adaptive
    assert on._transport()._pool() is not off._transport()._pool()


# -- the admission itself (the queue and the window), sync and async ------------------------------


def admission(capacity: int = 8, *, adaptive: bool = True) -> tuple[Admission, Clock]:
    clock = Clock()
    return Admission(capacity, adaptive=adaptive, clock=clock), clock


def enter_many(gate: Admission, clock: Clock, n: int) -> list[Permit]:
    return [gate.call(30.0).enter(clock.sleep) for _ in range(n)]


def test_aimd_decreases_once_per_burst_then_grows_by_about_one_per_window() -> None:
    gate, clock = admission(capacity=100)
    permits = enter_many(gate, clock, 40)
    # A burst of 429s from requests sent together shrinks the window once, not once per 429.
    for permit in permits[:10]:
        permit.done(0.0)
    assert gate.window == pytest.approx(40 * DECREASE)
    window = gate.window
    assert window is not None
    # Requests admitted under the new window that are throttled again shrink it again.
    for permit in permits[10:]:
        permit.done("ok")
    fresh = enter_many(gate, clock, int(window))
    with pytest.raises(KimiTimeoutError, match="cool-down"):  # paced: its turn is not now
        gate.call(0.0).enter(clock.sleep)
    fresh[0].done(0.0)
    assert gate.window == pytest.approx(int(window) * DECREASE)
    for permit in fresh[1:]:
        permit.release()
    assert gate.in_flight == 0


def test_additive_increase_is_about_one_per_window_while_the_window_holds_calls_back() -> None:
    window = AdaptiveWindow(ceiling=100, limit=20.0)
    for _ in range(20):
        window.succeeded(demand=64)  # 64 calls want in, 20 may: the window is what holds them
    assert window.limit == pytest.approx(21.0, abs=0.05)
    window.succeeded(demand=5)  # the caller itself sends fewer: no growth
    assert window.limit == pytest.approx(21.0, abs=0.05)
    near = AdaptiveWindow(ceiling=10, limit=9.95)
    near.succeeded(demand=64)
    assert near.limit is None  # back at the pool's capacity: inert again
    assert near.allows(9)
    assert not near.allows(10)


def test_window_never_grows_past_what_the_caller_sends() -> None:
    gate, clock = admission(capacity=100)
    permits = enter_many(gate, clock, 20)
    permits[0].done(0.0)
    assert gate.window == pytest.approx(15.0)
    for permit in permits[1:]:
        permit.done("ok")
    window = gate.window
    # The caller's max_concurrency lets only 4 calls at a time: the window is not what holds
    # them back, so their successes do not grow it toward the pool's 100.
    for _ in range(200):
        for permit in enter_many(gate, clock, 4):
            permit.done("ok")
    assert gate.window == window


def test_window_without_adaptive_stays_inert() -> None:
    gate, clock = admission(capacity=10, adaptive=False)
    permits = enter_many(gate, clock, 10)
    permits[0].done(1.0)
    assert gate.window is None
    for permit in permits:
        permit.release()
    assert gate.in_flight == 0


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
        while len(gate._queue) < i + 1:  # each in the queue before the next starts
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
    assert len(gate._queue) == 5
    tasks[1].cancel()  # leaves the queue; the others keep their places
    holder.release()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert order == [0, 2, 3, 4]
    assert gate.in_flight == 0
    assert not gate._queue


async def test_queue_wait_is_bounded_by_the_pool_timeout() -> None:
    gate, clock = admission(capacity=1)
    holder = gate.call(30.0).enter(clock.sleep)
    with pytest.raises(KimiTimeoutError, match="free connection"):
        gate.call(0.0).enter(clock.sleep)
    with pytest.raises(KimiTimeoutError, match="free connection"):
        await gate.call(0.0).aenter(clock.async_sleep)
    assert not gate._queue
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


def test_a_burst_far_above_the_rate_shrinks_the_window_to_what_the_gateway_admitted() -> None:
    gate, clock = admission(capacity=1000)
    permits = enter_many(gate, clock, 200)
    for permit in permits[:150]:  # 150 of 200 rejected: the gateway admitted 50
        permit.done(1.0)
    assert gate.window == pytest.approx(50.0)
    assert gate._resume_at == clock.now + 1.0  # one cool-down, not one per 429
    for permit in permits[150:]:
        permit.release()


# -- pacing after a 429 (`_pacing`) ---------------------------------------------------------------


def test_pacing_is_inert_until_the_first_429() -> None:
    gate, clock = admission(capacity=1000)
    for permit in enter_many(gate, clock, 300):
        permit.done("ok")
    assert clock.sleeps == []  # no pacing, no waiting: successes alone never start it


def test_after_a_burst_the_waiting_calls_are_spread_at_the_admitted_rate() -> None:
    gate, clock = admission(capacity=1000)
    permits = enter_many(gate, clock, 200)
    for permit in permits[:150]:  # 150 of 200 rejected, Retry-After 1 s: 50 admitted per second
        permit.done(1.0)
    throttled_at = clock.now
    later = enter_many(gate, clock, 100)
    # Spread 20 ms apart, first come first served, instead of all 100 going out when the
    # cool-down ends; and nobody sits out a whole second.
    assert clock.sleeps == [pytest.approx(0.02)] * 100
    assert clock.now == pytest.approx(throttled_at + 2.0)
    for permit in permits[150:] + later:
        permit.release()
    assert gate.in_flight == 0


def test_a_paced_call_never_waits_past_its_own_timeout_and_keeps_no_turn() -> None:
    gate, clock = admission(capacity=1000)
    permits = enter_many(gate, clock, 10)
    for permit in permits[:8]:
        permit.done(4.0)  # 2 admitted per 4 s: one send every 2 s
    queued = gate.call(30.0).enter(clock.sleep)  # takes the turn 2 s from now
    assert clock.sleeps == [pytest.approx(2.0)]
    with pytest.raises(KimiTimeoutError, match="cool-down"):
        gate.call(1.0).enter(clock.sleep)  # its turn would be 2 s away: fails now, sends nothing
    assert clock.sleeps == [pytest.approx(2.0)]
    gate.call(30.0).enter(clock.sleep)  # the turn the impatient call gave up is the next one
    assert clock.sleeps == [pytest.approx(2.0)] * 2
    queued.release()


def test_a_later_429_lowers_the_rate_to_the_measured_replies_without_compounding() -> None:
    pacer = Pacer()
    pacer.throttled(admitted=50, cool_down=1.0, now=0.0)
    assert pacer.rate == pytest.approx(50.0)
    now = 10.0
    for i in range(int(40 * WINDOW)):  # 40 replies/s over the measured window
        pacer.replied(now + i / 40)
    now += WINDOW
    assert pacer.rate > 50.0  # replies probe upward
    for _ in range(5):  # five 429s in a row: the same measurement, not 5 cuts
        pacer.throttled(admitted=30, cool_down=1.0, now=now)
    assert pacer.rate == pytest.approx(40.0, rel=0.05)
    assert pacer.burst == 50  # the burst the gateway admitted at once is kept
