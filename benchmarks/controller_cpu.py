"""CPU of the rate controller per request, at a low and a high rate side by side: do the linear
scans of its memory (`Pacer._counts`, `InFlightCap.refused`, over the last seconds of sends)
cost anything that matters?

`Paced` (the shipped controller) is driven directly, sans-I/O, by a synthetic trace on simulated
time: `rate` sends per second for `seconds`, each counted at an in-flight count cycling 1..60;
the sends counted above `start_window` are refused every other time (429 after `--refusal`
seconds, 5 ms by default), the rest
answered after 200 ms: a rate limit refusing at whatever count its bucket runs dry, so no
in-flight cap is ever learnt and every 429 scans the cap's two seconds of sends. The memory
holds about `rate` x 2 s of sends, so a cost per request that grows with the rate is the scans'.
CPU is `time.process_time()` of the driving loop only (the trace is built beforehand); the rates
are interleaved within each repetition, and the median of the repetitions is reported.

    python -m benchmarks.controller_cpu [--runs 5] [--seconds 6] [--rates 10 100 1000]
                                        [--refusal 0.005]
"""

from __future__ import annotations

import argparse
import heapq
import statistics
import time
from dataclasses import dataclass

from langchain_kimi._http.limits.controller import Paced
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.outcome import ANSWERED, Outcome

THROTTLED = Outcome("throttled", 0.0)
ANSWER = 0.2  # s: an admitted request is answered later


@dataclass(eq=False)
class Request:
    """What the controller reads of a request (admission's `Permit`)."""

    sent_at: float
    in_flight: int
    crowded: bool = True


def trace(
    rate: float, seconds: float, refusal: float
) -> list[tuple[float, int, Request, Outcome | None]]:
    """(time, order, request, outcome) in time order: None for the send, else its outcome."""
    events: list[tuple[float, int, Request, Outcome | None]] = []
    refuse = False
    for number in range(int(rate * seconds)):
        at = number / rate
        request = Request(at, in_flight=number % 60 + 1)
        events.append((at, len(events), request, None))
        if request.in_flight > KNOBS.start_window:
            refuse = not refuse
        if request.in_flight > KNOBS.start_window and refuse:
            events.append((at + refusal, len(events), request, THROTTLED))
        else:
            events.append((at + ANSWER, len(events), request, ANSWERED))
    heapq.heapify(events)
    return [heapq.heappop(events) for _ in range(len(events))]


def cpu_per_request(rate: float, seconds: float, refusal: float) -> tuple[float, int]:
    """Microseconds of CPU per request, and the 429s of the trace."""
    events = trace(rate, seconds, refusal)
    controller = Paced(max_window=4_000, can_fall_back=False)
    start = time.process_time()
    for now, _, request, outcome in events:
        if outcome is None:
            controller.delay(now)
            controller.limit(now, request.in_flight)
            controller.sent(request, now)
        else:
            controller.record(request, outcome, now)
            controller.record(request, None, now)
    spent = time.process_time() - start
    sends = sum(outcome is None for _, _, _, outcome in events)
    refusals = sum(outcome is THROTTLED for _, _, _, outcome in events)
    return spent / sends * 1e6, refusals


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--rates", type=float, nargs="+", default=[10.0, 100.0, 1000.0])
    parser.add_argument("--refusal", type=float, default=0.005, help="seconds a 429 takes")
    args = parser.parse_args(argv)
    samples: dict[float, list[float]] = {rate: [] for rate in args.rates}
    refusals: dict[float, int] = {}
    for _ in range(args.runs):
        for rate in args.rates:  # interleaved: drift spreads over every rate alike
            micros, refusals[rate] = cpu_per_request(rate, args.seconds, args.refusal)
            samples[rate].append(micros)
    low = statistics.median(samples[args.rates[0]])
    print(f"{'rate/s':>8} {'429s':>6} {'median us/request':>18} {'x lowest rate':>14}  runs")
    for rate in args.rates:
        median = statistics.median(samples[rate])
        runs = ", ".join(f"{sample:.1f}" for sample in samples[rate])
        print(f"{rate:>8g} {refusals[rate]:>6} {median:>18.1f} {median / low:>14.2f}  {runs}")


if __name__ == "__main__":
    main()
