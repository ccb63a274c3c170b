"""`max_retries` as ChatOpenAI and ChatAnthropic users read it (issue 28 item 4): `max_retries=2`
is three attempts for a call alone, whatever the gateway said before, unless the pool's
requests sent together were refused lately (issue 29: the call shares their rate).

A free re-queue (a 429 that spends no retry) is for a call that waited behind others for its
turn, or went alone while the pool shares a rate (a batch's last call); a lone call spends its
retries, and even a crowded call is re-queued free only for its
pool timeout after its first lost turn (`knobs.patience` without one). Fake clock, no waiting;
the sync and async paths.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from pydantic import SecretStr

from langchain_kimi._errors import KimiAPIError, KimiRateLimitError
from langchain_kimi._http import exchange
from langchain_kimi._http.limits import controller as controller_module
from langchain_kimi._http.limits import slow_start as slow_start_module
from langchain_kimi._http.limits.admission import Admission
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.outcome import ANSWERED, Outcome
from langchain_kimi._http.limits.retry import Failure, RetryPlan
from langchain_kimi._http.transport import Transport, TransportConfig
from tests.support.fake_clock import Clock
from tests.support.fake_transport import BODY, OK, PATH, Script, ok, post
from tests.support.peer_retries import Jitter, peer_waits

KEY = "sk-test-max-retries-0123456789"
BASE = "https://direct.evolink.ai"
THROTTLED = Outcome("throttled", 0.0)
REFUSED = Failure(KimiRateLimitError("slow down", status_code=429), True, False, 0.0)


class Gateway(Script):
    """One served call (unless not `served`), then 429 forever (with the given headers); counts
    every request."""

    def __init__(self, headers: dict[str, str], *, served: bool = True) -> None:
        refusal = httpx.Response(429, json={"error": {"message": "slow down"}}, headers=headers)
        super().__init__(*([ok()] if served else []), refusal)


def transport(gateway: Gateway | Sequence, clock: Clock, max_retries: int) -> Transport:
    mock = httpx.MockTransport(gateway)
    config = TransportConfig(
        base_url=BASE,
        fallback_base_url=None,
        api_key=SecretStr(KEY),
        timeout=httpx.Timeout(30.0, pool=900.0),
        max_retries=max_retries,
        sleep=clock.sleep,
        async_sleep=clock.async_sleep,
        clock=clock,
    )
    return Transport(
        config,
        http_client=httpx.Client(transport=mock),
        http_async_client=httpx.AsyncClient(transport=mock),
    )


@pytest.mark.parametrize("max_retries", [0, 1, 2, 5])
@pytest.mark.parametrize(
    "headers", [{"retry-after": "0"}, {}, {"retry-after": "1"}], ids=["zero", "absent", "one"]
)
async def test_a_lone_call_after_a_served_one_makes_max_retries_plus_one_attempts(
    mode: str, max_retries: int, headers: dict[str, str]
) -> None:
    # On main 7308379: 10 attempts with Retry-After: 0 and 18 without it, for max_retries=2 (the
    # served call made every 429 of the next 10 s a free re-queue).
    clock = Clock()
    gateway = Gateway(headers)
    model = transport(gateway, clock, max_retries)
    assert (await post(model, mode)).body == OK
    with pytest.raises(KimiRateLimitError):
        await post(model, mode)
    assert len(gateway.requests) - 1 == max_retries + 1


async def test_the_lone_calls_waits_are_its_retries_backoff_or_the_gateways(mode: str) -> None:
    clock = Clock()
    gateway = Gateway({"retry-after": "2"})
    model = transport(gateway, clock, max_retries=2)
    await post(model, mode)
    with pytest.raises(KimiRateLimitError):
        await post(model, mode)
    assert clock.sleeps == [2.0, 2.0]  # two retries, each after the gateway's Retry-After


REFUSALS = {
    "0.01 s": {"retry-after": "0.01"},
    "0.5 s": {"retry-after": "0.5"},
    "1 s": {"retry-after": "1"},
    "2 s": {"retry-after": "2"},
    "0": {"retry-after": "0"},
    "negative": {"retry-after": "-1"},
    "absent": {},
    "300 ms": {"retry-after-ms": "300"},
    "0 ms": {"retry-after-ms": "0"},
}
"""The 429s' headers a lone call is retried after, by how long they ask it to wait."""


@pytest.mark.parametrize("jitter", ["none", "most"])
@pytest.mark.parametrize(
    "gap",
    [None, 0.0, 20.0],
    ids=["fresh pool", "after a served call", "20 s after a served call"],
)
@pytest.mark.parametrize("headers", REFUSALS.values(), ids=REFUSALS)
async def test_a_lone_calls_429s_wait_what_the_peers_sdks_wait(
    mode: str,
    headers: dict[str, str],
    gap: float | None,
    jitter: Jitter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The gateway's wait when it names one (> 0), else the backoff (0.5 s, then 1 s), as the
    # openai and anthropic SDKs wait. On main 20012a2 the pacer's first turn came on top: with
    # Retry-After: 0.01 the waits were [0.01, 0.99, 0.01, 0.99, 0.99] (1 s, then 2 s), and with
    # Retry-After: 0, [1.0, 1.0, 1.0] instead of the backoff.
    peers = {
        sdk: peer_waits(sdk, headers, max_retries=2, jitter=jitter, monkeypatch=monkeypatch)
        for sdk in ("openai", "anthropic")
    }
    theirs = peers["openai"]
    assert peers["anthropic"] == theirs
    # Our jitter's draw pinned to the same end: the top of its range, or the bottom.
    pinned = functools.partial(
        RetryPlan, jitter=lambda low, high: high if jitter == "none" else low
    )
    monkeypatch.setattr(exchange, "RetryPlan", pinned)
    clock = Clock()
    served = gap is not None
    gateway = Gateway(headers, served=served)
    model = transport(gateway, clock, max_retries=2)
    if gap is not None:
        assert (await post(model, mode)).body == OK
        clock.now += gap  # past the serving window: the pool is neither served nor starting
    clock.sleeps.clear()
    with pytest.raises(KimiRateLimitError):
        await post(model, mode)
    assert clock.sleeps == pytest.approx(theirs)
    assert len(gateway.requests) - served == 3


@pytest.mark.parametrize("budget", [30.0, None])
def test_a_crowded_call_loses_turns_for_at_most_its_pool_timeout_then_spends_retries(
    budget: float | None,
) -> None:
    # A call that lost its turn again and again among others spends its retries once its pool
    # timeout has passed since its first lost turn: it cannot circle the queue for ever.
    patience = KNOBS.patience if budget is None else budget
    clock = Clock()
    admission = Admission(8, adaptive=True, clock=clock)
    admission.call(30.0).enter(clock.sleep).done(ANSWERED)  # the gateway serves the pool
    holder = admission.call(30.0).enter(clock.sleep)  # another call in flight: crowded
    call = admission.call(budget)
    refused = REFUSED
    free: list[bool] = []
    refused_at: list[float] = []
    for _ in range(12):
        call.enter(clock.sleep).done(THROTTLED)
        refused_at.append(clock.now)
        free.append(call.requeues(refused))
        admission.call(30.0).enter(clock.sleep).done(ANSWERED)  # still serving the pool
        clock.now += patience / 8
    holder.release()
    assert free == [at - refused_at[0] < patience for at in refused_at]
    assert free[0]
    assert not free[-1]


def _pool_refused_with_others(clock: Clock) -> Admission:
    """A pool two of whose calls went together: one answered, the other refused with a 429 (the
    pacer starts), both done; nothing is left in flight or waiting."""
    admission = Admission(8, adaptive=True, clock=clock)
    first, second = admission.call(30.0), admission.call(30.0)
    answered, refused = first.enter(clock.sleep), second.enter(clock.sleep)
    assert refused.crowded
    refused.done(THROTTLED)
    answered.done(ANSWERED)
    assert admission.controller.rate(clock.now) is not None
    return admission


@pytest.mark.parametrize("later", [0.0, KNOBS.heal + 1.0], ids=["paced", "healed"])
def test_a_batchs_last_call_refused_while_the_pool_shares_a_rate_loses_turns_not_retries(
    later: float,
) -> None:
    # The last call of a process whose others are done goes alone, but the 429s of the pool's
    # calls sent together a moment ago say the key's rate is shared (other processes on the
    # key): its 429 is that rate's, a lost turn as theirs were. On main 90acbbe it spent its
    # retries: 3 processes on a 6/s key lost a call in 2 of 2 seeds, 8 processes on 3/s 10 calls
    # in 4 seeds, and the shared concurrency-limit grid 17 of 248,320 (docs/benchmarks.md).
    clock = Clock()
    admission = _pool_refused_with_others(clock)
    clock.now += later  # the pacer heals after `heal` s without a 429 or a waiting call
    last = admission.call(30.0)
    permit = last.enter(clock.sleep)
    assert permit.crowded
    permit.done(THROTTLED)
    assert last.requeues(REFUSED)


def test_a_lone_call_a_sharing_span_after_the_pools_last_429_spends_its_retries() -> None:
    # The shared rate is the recent past's: a call alone later, on a pool still served, is a call
    # alone again (`max_retries` as the peers' users read it).
    clock = Clock()
    admission = _pool_refused_with_others(clock)
    clock.now += KNOBS.sharing_span - 1.0
    admission.call(30.0).enter(clock.sleep).done(ANSWERED)  # served since, alone
    clock.now += 1.0  # the sharing window since the pool's 429 has passed, not since its answer
    lone = admission.call(30.0)
    permit = lone.enter(clock.sleep)
    assert not permit.crowded
    permit.done(THROTTLED)
    assert not lone.requeues(REFUSED)


def test_a_pool_shares_a_rate_for_its_own_window_not_the_serving_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Three spans of "lately" with three jobs (`knobs.py`): since the pool's last counted 429
    # (`sharing_span`), since the gateway last admitted one of its requests
    # (`serving_span`), since its start (`starting_span`). One knob held all three.
    short = dataclasses.replace(KNOBS, sharing_span=3.0, serving_span=20.0, starting_span=20.0)
    monkeypatch.setattr(controller_module, "KNOBS", short)
    monkeypatch.setattr(slow_start_module, "KNOBS", short)
    clock = Clock()
    admission = _pool_refused_with_others(clock)
    clock.now += 3.0 - 1 / 64
    assert admission.controller.sharing(clock.now)
    clock.now += 1 / 64
    assert admission.controller.serving(clock.now)  # still served, no longer sharing
    assert not admission.controller.sharing(clock.now)


def test_a_lone_call_on_a_pool_the_gateway_no_longer_serves_spends_its_retries() -> None:
    # Refused with others, then nothing admitted for a serving window: not a shared rate the
    # pool holds a share of (a key refused for good; `starved.py` is for calls that went with
    # others).
    clock = Clock()
    admission = Admission(8, adaptive=True, clock=clock)
    admission.call(30.0).enter(clock.sleep).done(Outcome("other"))  # its start: proves nothing
    clock.now += KNOBS.serving_span
    first, second = admission.call(30.0), admission.call(30.0)
    one, two = first.enter(clock.sleep), second.enter(clock.sleep)
    one.done(THROTTLED)
    two.done(THROTTLED)
    clock.now += 1.0
    lone = admission.call(30.0)
    permit = lone.enter(clock.sleep)
    assert not permit.crowded
    permit.done(THROTTLED)
    assert not lone.requeues(REFUSED)


class Sequence:
    """Answers by the order requests arrive: `refused` lists the request numbers (from 1)
    answered 429 `Retry-After: 1`; the others are answered. The first request is held until the
    second has arrived, so that the two go together (async only)."""

    def __init__(self, refused: set[int]) -> None:
        self.refused = refused
        self.second = asyncio.Event()
        self.requests: list[httpx.Request] = []

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        number = len(self.requests)
        if number == 1:
            await self.second.wait()
        elif number == 2:
            self.second.set()
        return self.reply(number)

    def reply(self, number: int) -> httpx.Response:
        if number in self.refused:
            return httpx.Response(
                429, json={"error": {"message": "slow down"}}, headers={"retry-after": "1"}
            )
        return ok()


async def test_after_a_batch_a_lone_call_loses_turns_to_the_rate_it_shared_not_retries() -> None:
    # Through the transport: two calls together, the second refused (the pool is paced); then a
    # call alone, refused four times while the key's other users hold the rate, then admitted.
    # With `max_retries=2` it failed on main 90acbbe after its third attempt.
    clock = Clock()
    start = clock.now
    gateway = Sequence(refused={2, 4, 5, 6, 7})
    model = transport(gateway, clock, max_retries=2)
    first, second = await asyncio.gather(post(model, "async"), post(model, "async"))
    assert first.body == second.body == OK
    assert len(gateway.requests) == 3
    assert (await post(model, "async")).body == OK
    assert len(gateway.requests) == 8
    assert clock.now - start < KNOBS.serving_span  # the four waits of Retry-After: 1


async def test_a_lone_call_on_a_pool_whose_429s_all_went_alone_still_spends_its_retries() -> None:
    # The same gateway, the batch's two calls one after the other: no 429 to requests sent
    # together, so no shared rate; the lone call fails after max_retries + 1 attempts.
    clock = Clock()
    gateway = Sequence(refused={2, 4, 5, 6, 7})
    gateway.second.set()  # the first request is not held: the calls go one at a time
    model = transport(gateway, clock, max_retries=2)
    assert (await post(model, "async")).body == OK
    assert (await post(model, "async")).body == OK  # its 429 alone, then its retry
    with pytest.raises(KimiRateLimitError):
        await post(model, "async")
    assert len(gateway.requests) == 6


class SyncSequence(Sequence):
    """`Sequence` for the sync client, the two first requests from two threads (a sync batch)."""

    def __init__(self, refused: set[int]) -> None:
        super().__init__(refused)
        self.arrived = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:  # type: ignore[override]
        request.read()
        with self.lock:
            self.requests.append(request)
            number = len(self.requests)
        if number == 1:
            assert self.arrived.wait(5.0), "the second request never came"
        elif number == 2:
            self.arrived.set()
        return self.reply(number)


def test_after_a_sync_batch_a_lone_call_loses_turns_to_the_rate_it_shared_not_retries() -> None:
    # The same as the async test, the batch's two calls from two threads (`ChatKimi.batch`).
    clock = Clock()
    gateway = SyncSequence(refused={2, 4, 5, 6, 7})
    model = transport(gateway, clock, max_retries=2)
    with ThreadPoolExecutor(2) as pool:
        replies = list(pool.map(lambda _: model.post_json(PATH, BODY), range(2)))
    assert [reply.body for reply in replies] == [OK, OK]
    assert len(gateway.requests) == 3
    assert model.post_json(PATH, BODY).body == OK
    assert len(gateway.requests) == 8


# A call sleeping between two attempts (its Retry-After, or a backoff) is still one of the pool's
# calls: a sibling refused meanwhile went with it, though nothing else was in flight or queued.
# A batch of 4 concurrent calls against a gateway refusing 30 % with `503, Retry-After: 1` saw
# each call alone at its refusals (the other three asleep), and lost calls after three attempts
# (on main 78f1707: 2-119 calls over 4 seeds on each of `OVERLOADED_WHILE_SIBLINGS_REST` in
# test_rate_profiles.py).
OVERLOADED = Outcome("overloaded", 1.0)
BUSY = Failure(KimiAPIError("overloaded", status_code=503), True, True, 1.0)


def _served(clock: Clock) -> Admission:
    """A pool whose one call was answered a moment ago (the gateway serves it)."""
    admission = Admission(8, adaptive=True, clock=clock)
    admission.call(30.0).enter(clock.sleep).done(ANSWERED)
    return admission


@pytest.mark.parametrize(("refused", "failure"), [(OVERLOADED, BUSY), (THROTTLED, REFUSED)])
def test_a_call_refused_while_a_sibling_rests_between_attempts_went_with_others(
    refused: Outcome, failure: Failure
) -> None:
    clock = Clock()
    admission = _served(clock)
    resting, sibling = admission.call(30.0), admission.call(30.0)
    resting.enter(clock.sleep).done(refused)
    assert not resting.requeues(failure)  # alone at its send and its refusal: a retry spent
    with resting.resting():  # it sleeps its Retry-After
        permit = sibling.enter(clock.sleep)
        assert permit.crowded
        permit.done(refused)
        assert sibling.requeues(failure)
    with sibling.resting():  # now the sibling sleeps, and the first call is back
        resting.enter(clock.sleep).done(refused)
        assert resting.requeues(failure)


def test_a_call_alone_once_its_sibling_is_done_resting_spends_its_retries() -> None:
    # The rest ends when the sleep does, however it ends (a retry follows, or the call is
    # cancelled asleep): a call alone afterwards is alone.
    clock = Clock()
    admission = _served(clock)
    resting = admission.call(30.0)
    with pytest.raises(asyncio.CancelledError), resting.resting():
        raise asyncio.CancelledError  # cancelled in its sleep
    lone = admission.call(30.0)
    permit = lone.enter(clock.sleep)
    assert not permit.crowded
    permit.done(OVERLOADED)
    assert not lone.requeues(BUSY)


def test_a_call_coming_back_from_its_rest_does_not_count_as_its_own_company() -> None:
    clock = Clock()
    admission = _served(clock)
    call = admission.call(30.0)
    with call.resting():
        pass
    permit = call.enter(clock.sleep)
    assert not permit.crowded
    permit.done(OVERLOADED)
    assert not call.requeues(BUSY)


class HookedClock(Clock):
    """A fake clock that runs `during` once, inside the first sleep (while a call rests)."""

    def __init__(self) -> None:
        super().__init__()
        self.during: list[Callable[[], None]] = []

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        while self.during:
            self.during.pop()()


async def test_through_the_transport_a_call_asleep_on_its_retry_after_keeps_its_siblings_company(
    mode: str,
) -> None:
    # The transport tells admission that its call rests between attempts: a sibling refused
    # during that sleep (nothing in flight, nothing queued) went with others and loses its
    # turn, not a retry.
    clock = HookedClock()
    busy = httpx.Response(503, json={"error": {"message": "busy"}}, headers={"retry-after": "1"})
    gateway = Script(ok(), busy, ok())
    model = transport(gateway, clock, max_retries=2)
    assert (await post(model, mode)).body == OK  # the gateway serves the pool
    admission = model._pool().admission
    verdicts: list[bool] = []

    def sibling_refused() -> None:
        sibling = admission.call(30.0)
        permit = sibling.enter(lambda seconds: None)
        permit.done(OVERLOADED)
        verdicts.append(sibling.requeues(BUSY))

    clock.during.append(sibling_refused)
    assert (await post(model, mode)).body == OK  # 503 Retry-After: 1, then answered
    assert clock.sleeps == [1.0]
    assert verdicts == [True]


def test_a_call_that_arrived_among_others_is_one_of_them_though_sent_alone() -> None:
    # It waited behind the others (here: it arrived while one was in flight) and went once they
    # were done: one of a batch, whose 429 is the rate the batch shares. On main 57762ed it
    # spent its retries: processes on a key of tokens per minute lost their batches' last calls
    # (`A_BATCHS_LAST_CALLS_ON_TOKENS_PER_MINUTE` in test_rate_profiles.py).
    clock = Clock()
    admission = _served(clock)
    first = admission.call(30.0).enter(clock.sleep)
    late = admission.call(30.0)  # arrives while the first is out
    first.done(ANSWERED)
    permit = late.enter(clock.sleep)
    assert permit.crowded
    permit.done(THROTTLED)
    assert late.requeues(REFUSED)


def test_a_call_that_arrived_at_an_idle_pool_is_alone_though_others_came_after_it() -> None:
    # Company that arrives later and is gone by its refusal does not make a lone call crowded.
    clock = Clock()
    admission = _served(clock)
    lone = admission.call(30.0)
    permit = lone.enter(clock.sleep)
    later = admission.call(30.0)
    later_permit = later.enter(clock.sleep)
    assert later_permit.crowded  # it went while the lone call was in flight
    later_permit.done(ANSWERED)
    assert not permit.crowded
    permit.done(THROTTLED)
    assert not lone.requeues(REFUSED)


def test_two_calls_asleep_at_once_each_keep_company_until_its_own_rest_ends() -> None:
    clock = Clock()
    admission = _served(clock)
    first, second = admission.call(30.0), admission.call(30.0)
    with first.resting():
        with second.resting():
            pass  # the second is back first
        permit = admission.call(30.0).enter(clock.sleep)
        assert permit.crowded  # the first still sleeps
        permit.done(ANSWERED)
    permit = admission.call(30.0).enter(clock.sleep)
    assert not permit.crowded  # both are back (and gone)
