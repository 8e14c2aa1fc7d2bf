"""Clock reads for one callable: raw per-call samples in seconds, nothing summarized here.

The CUDA-or-CPU branch lives once, in `_Clock`: on CUDA each call is bracketed by CUDA events
(device time, no host sync inside the loop); on CPU by `time.perf_counter`. When to stop warming up
and timing is decided by the pure rules of `schedule`.

Samples are back-to-back calls: on CUDA the host queues call n+1 while the device runs call n, so a
sample is the device time of one call in a busy pipeline (throughput per call), not the latency of
a lone request that includes its launch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import torch

from . import schedule


class _Clock:
    def __init__(self, device: str):
        self.cuda = device == "cuda"
        self.starts: list = []
        self.ends: list = []

    def _mark(self, marks: list) -> None:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            marks.append(event)
        else:
            marks.append(time.perf_counter())

    def start(self) -> None:
        self._mark(self.starts)

    def stop(self) -> None:
        self._mark(self.ends)

    def samples_s(self) -> list[float]:
        if self.cuda:
            torch.cuda.synchronize()  # events are complete only after the device caught up
            return [s.elapsed_time(e) / 1000.0 for s, e in zip(self.starts, self.ends)]  # ms -> s
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
                      max_s: float) -> WarmupRecord:
    """Untimed calls until the latency settles (schedule.warmup_done): caches, allocator, autotuning
    and CUDA-graph capture settle here."""
    if min_calls < 0 or window_s <= 0 or max_s < 0:
        raise ValueError(f"min_calls, window_s, max_s: {min_calls}, {window_s}, {max_s} are not allowed; "
                         "allowed: >= 0, > 0, >= 0")
    started = time.perf_counter()
    medians: list[float] = []
    calls, per_call_s, steady = 0, 0.0, False
    while True:
        stop, steady = schedule.warmup_done(medians, calls, time.perf_counter() - started, min_calls, max_s)
        if stop or (calls == 0 and min_calls == 0 and max_s == 0):
            break
        count = schedule.window_calls(per_call_s, window_s)
        samples = time_calls(fn, device, count, min_time_s=0.0)  # exactly `count` calls
        calls += count
        ordered = sorted(samples)
        per_call_s = ordered[len(ordered) // 2]
        medians.append(per_call_s)
    synchronize(device)
    return WarmupRecord(calls, time.perf_counter() - started, steady)


def time_calls(fn: Callable[[], object], device: str, min_calls: int, min_time_s: float) -> list[float]:
    """Per-call latency of `fn`, seconds: at least `min_calls` back-to-back calls and at least
    `min_time_s` seconds of them (schedule.timing_done). On CUDA the elapsed time is read on the host,
    which runs ahead of the device by at most the launch queue: the rule may stop a few calls early
    in device time, never with fewer than `min_calls` samples."""
    if min_calls < 1:
        raise ValueError(f"min_calls: {min_calls} is not allowed; allowed: >= 1")
    clock = _Clock(device)
    started = time.perf_counter()
    calls = 0
    while not schedule.timing_done(calls, time.perf_counter() - started, min_calls, min_time_s):
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
