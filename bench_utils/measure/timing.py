"""Clock reads for one callable: raw per-call samples in seconds, nothing summarized here.

The CUDA-or-CPU branch lives once, in `_Clock`: on CUDA each call is bracketed by CUDA events
(device time); on CPU by `time.perf_counter`. When to stop warming up and timing is decided by the
pure rules of `schedule`, on the time the calls have taken: on CUDA the device time of the calls
that completed, never the host's clock, which runs ahead of the device.

Samples are back-to-back calls: on CUDA the host queues call n+1 while the device runs call n, so a
sample is the device time of one call in a busy pipeline (throughput per call), not the latency of
a lone request that includes its launch. The host queues at most IN_FLIGHT_CALLS calls ahead of the
device: neither a CUDA-graph replay nor a kernel launch waits for the device (cudagraph_trees.py,
CUDAGraphNode.run: graph.replay(), no synchronize unless triton.force_cudagraph_sync, False by
default), so without a bound a fast host queues hundreds of calls of a slow model and a block runs
seconds past its `block_s` on the device while its turn has ended on the host.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable

import torch

from . import schedule

IN_FLIGHT_CALLS = 4  # CUDA: calls queued ahead of the device at most (the device never waits on the host for fewer)


def _cuda_event():
    return torch.cuda.Event(enable_timing=True)


class _Clock:
    """A mark before and after each call, and the time the calls so far have taken (`elapsed_s`)."""

    def __init__(self, device: str):
        self.cuda = device == "cuda"
        self.starts: list = []
        self.ends: list = []
        self.completed = 0  # CUDA: calls whose end event the device has passed
        self.began = time.perf_counter()

    def _mark(self, marks: list) -> None:
        if self.cuda:
            event = _cuda_event()
            event.record()
            marks.append(event)
        else:
            marks.append(time.perf_counter())

    def start(self) -> None:
        self._mark(self.starts)

    def stop(self) -> None:
        self._mark(self.ends)
        if self.cuda:
            self._catch_up()

    def _catch_up(self) -> None:
        """Wait for the call IN_FLIGHT_CALLS back (Event.synchronize: cudaEventSynchronize, torch/cuda/
        streams.py), then count every later call whose end event has completed (Event.query). One
        stream: events complete in the order they were recorded."""
        behind = len(self.ends) - IN_FLIGHT_CALLS
        if behind > self.completed:
            self.ends[behind - 1].synchronize()
            self.completed = behind
        while self.completed < len(self.ends) and self.ends[self.completed].query():
            self.completed += 1

    def elapsed_s(self) -> float:
        """Seconds the calls have taken so far: on CUDA the device time from the first call's start to
        the end of the last completed call (Event.elapsed_time, milliseconds); on CPU the host's."""
        if not self.cuda:
            return time.perf_counter() - self.began
        if not self.completed:
            return 0.0
        return self.starts[0].elapsed_time(self.ends[self.completed - 1]) / 1000.0

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
    """Per-call latency of `fn`, seconds: at least `min_calls` back-to-back calls and at least
    `min_time_s` seconds of them (schedule.timing_done), seconds the calls took (_Clock.elapsed_s: on
    CUDA completed device time). On CUDA the calls still queued when the rule is met run too: a block
    lasts at most IN_FLIGHT_CALLS calls longer than the rule asks, never less; returns once the device
    has finished them."""
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
