"""Clock reads for one callable: raw per-call samples in seconds, nothing summarized here.

A sample is the latency a caller waits: from calling the model to having its output, one call after
another, host work included. On CPU that is `time.perf_counter` around the call. On CUDA the device
is synchronized before the call (it starts idle, as a lone request finds it) and after it (the output
is there), and the host's clock reads the time between: a CUDA-graph replay's host work (dynamo's
guards, the CUDA-graph tree's bookkeeping, the replay's launch) and every kernel launch count, as
they do for a caller. CUDA events around calls queued back to back read only the device's part, the
host preparing call n+1 while the device runs call n: 0.60 ms for a reduce-overhead call where a caller
waits 0.84-0.98 ms (benchmarks/README.md#gpu-h100-clocks). When to stop warming up and
timing is decided by the pure rules of `schedule`, on the time the calls have taken.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable

import torch

from . import schedule


class _Clock:
    """A mark before and after each call, and the time the calls so far have taken (`elapsed_s`). The
    CUDA-or-CPU branch lives here once: on CUDA each mark waits for the device first."""

    def __init__(self, device: str):
        self.cuda = device == "cuda"
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.began = time.perf_counter()

    def _mark(self, marks: list) -> None:
        if self.cuda:
            torch.cuda.synchronize()
        marks.append(time.perf_counter())

    def start(self) -> None:
        self._mark(self.starts)

    def stop(self) -> None:
        self._mark(self.ends)

    def elapsed_s(self) -> float:
        """Seconds since the first call began (the calls and the marks between them)."""
        return time.perf_counter() - self.began

    def samples_s(self) -> list[float]:
        return [e - s for s, e in zip(self.starts, self.ends)]


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


@dataclass(frozen=True)
class WarmupRecord:
    calls: int  # untimed calls made
    seconds: float  # wall time they took
    steady: bool  # the stopping rule was met (False: stopped at max_s)


def warm_until_steady(fn: Callable[[], object], device: str, min_calls: int, window_s: float,
                      max_s: float, steady_s: float | None = None) -> WarmupRecord:
    """Untimed calls until the latency settles (schedule.warmup_done): caches, allocator, autotuning
    and CUDA-graph capture settle here. `steady_s`: a latency per call already known to be steady (the
    process this one was forked from reached it): the first window that agrees with it is steady."""
    if min_calls < 0 or window_s <= 0 or max_s < 0 or (steady_s is not None and not steady_s > 0):
        raise ValueError(f"min_calls, window_s, max_s, steady_s: {min_calls}, {window_s}, {max_s}, {steady_s} "
                         "are not allowed; allowed: >= 0, > 0, >= 0, > 0 or None")
    started = time.perf_counter()
    medians: list[float] = [] if steady_s is None else [steady_s]
    calls, per_call_s, steady = 0, steady_s or 0.0, False
    while True:
        stop, steady = schedule.warmup_done(medians, calls, time.perf_counter() - started, min_calls, max_s)
        if stop or (calls == 0 and min_calls == 0 and max_s == 0):
            break
        count = schedule.window_calls(per_call_s, window_s)
        samples = time_calls(fn, device, count, min_time_s=0.0)  # exactly `count` calls
        calls += count
        per_call_s = statistics.median_high(samples)
        medians.append(per_call_s)
    synchronize(device)
    return WarmupRecord(calls, time.perf_counter() - started, steady)


def time_calls(fn: Callable[[], object], device: str, min_calls: int, min_time_s: float) -> list[float]:
    """Per-call latency of `fn`, seconds: at least `min_calls` calls one after another and at least
    `min_time_s` seconds of them (schedule.timing_done), each from its call to its output (_Clock)."""
    if min_calls < 1:
        raise ValueError(f"min_calls: {min_calls} is not allowed; allowed: >= 1")
    clock = _Clock(device)
    calls = 0
    while not schedule.timing_done(calls, clock.elapsed_s(), min_calls, min_time_s):
        clock.start()
        fn()
        clock.stop()
        calls += 1
    return clock.samples_s()


def time_once(fn: Callable[[], object], device: str) -> float:
    """Wall time of one call including everything it triggers (e.g. compilation), seconds."""
    synchronize(device)
    start = time.perf_counter()
    fn()
    synchronize(device)
    return time.perf_counter() - start
