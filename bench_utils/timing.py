"""Clock reads for one callable: raw per-call samples in seconds, nothing summarized here.

The CUDA-or-CPU branch lives once, in `_Clock`: on CUDA each call is bracketed by CUDA events
(device time, no host sync inside the loop); on CPU by `time.perf_counter`.
"""

from __future__ import annotations

import time
from typing import Callable

import torch


class _Clock:
    def __init__(self, device: str, iterations: int):
        self.cuda = device == "cuda"
        if self.cuda:
            self.starts = [torch.cuda.Event(enable_timing=True) for _ in range(iterations)]
            self.ends = [torch.cuda.Event(enable_timing=True) for _ in range(iterations)]
        else:
            self.starts = [0.0] * iterations
            self.ends = [0.0] * iterations

    def start(self, i: int) -> None:
        if self.cuda:
            self.starts[i].record()
        else:
            self.starts[i] = time.perf_counter()

    def stop(self, i: int) -> None:
        if self.cuda:
            self.ends[i].record()
        else:
            self.ends[i] = time.perf_counter()

    def samples_s(self) -> list[float]:
        if self.cuda:
            torch.cuda.synchronize()  # events are complete only after the device caught up
            return [s.elapsed_time(e) / 1000.0 for s, e in zip(self.starts, self.ends)]  # ms -> s
        return [e - s for s, e in zip(self.starts, self.ends)]


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def warm_up(fn: Callable[[], object], calls: int, device: str) -> None:
    """Untimed calls: caches, allocator, autotuning and CUDA-graph capture settle here."""
    if calls < 0:
        raise ValueError(f"calls: {calls} is not allowed; allowed: >= 0")
    for _ in range(calls):
        fn()
    synchronize(device)


def time_calls(fn: Callable[[], object], iterations: int, device: str) -> list[float]:
    """Per-call latency of `fn`, seconds, for `iterations` back-to-back calls."""
    if iterations < 1:
        raise ValueError(f"iterations: {iterations} is not allowed; allowed: >= 1")
    clock = _Clock(device, iterations)
    synchronize(device)  # nothing queued from before may leak into the first sample
    for i in range(iterations):
        clock.start(i)
        fn()
        clock.stop(i)
    return clock.samples_s()


def time_once(fn: Callable[[], object], device: str) -> float:
    """Wall time of one call including everything it triggers (e.g. compilation), seconds."""
    synchronize(device)
    start = time.perf_counter()
    fn()
    synchronize(device)
    return time.perf_counter() - start
