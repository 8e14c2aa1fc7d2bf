"""The thread that launches a measuring process's calls, and what moves it. No torch.

A launch-bound call on a GPU (eager at batch 1, a default-mode call of many small kernels) runs as fast
as its host launches kernels: such calls moved 1.6-2x between processes and between stretches seconds
apart in one process, pinned or not, while CUDA-graph replays stayed within 0.3-1%
(benchmarks/README.md#gpu-h100-clocks). What the harness can remove it removes, once a GPU worker is
prepared (measure/cell.py): its launching thread stays on the CPU it runs on (`pin`: no migration
between blocks; the compile workers, forked before, keep every CPU; the profiler's pass, whose threads
would inherit the one CPU, runs `unpinned`), and torch's intra-op threads are
one (`GPU_WORKER_THREADS`: an idle worker's OpenMP pool then has no threads to spin beside the worker
that times). What it cannot remove it records per block (`BlockHost`): the CPU the thread was on, and
the GPU's SM clock where NVML is installed (environment.sm_clock_mhz: pynvml, nvidia-ml-py); the other
processes' CPU share is machine_load's. The speedups stay paired where the host's state is shared:
eager timed beside each configuration in its own process (eager_in_process).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import threading
from dataclasses import dataclass

GPU_WORKER_THREADS = 1  # torch's intra-op threads in a GPU worker once prepared (its model runs on the GPU)
UNKNOWN_CPU = -1  # sched_getcpu failed or is missing (not Linux)


@functools.cache
def _libc():
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def current_cpu() -> int:
    """The CPU the calling thread runs on now (sched_getcpu), UNKNOWN_CPU where it cannot be read."""
    libc = _libc()
    getcpu = getattr(libc, "sched_getcpu", None) if libc is not None else None
    if getcpu is None:
        return UNKNOWN_CPU
    cpu = getcpu()
    return cpu if cpu >= 0 else UNKNOWN_CPU


_thread = threading.local()  # .cpus_before_pin: the CPUs the thread could use before `pin` (a thread's own)


def pin() -> int | None:
    """Keep the calling thread on the CPU it runs on now (sched_setaffinity of the thread alone: on
    Linux pid 0 is the calling thread); that CPU, or None where it cannot (not Linux, a CPU unknown,
    or not allowed to this process)."""
    cpu = current_cpu()
    if cpu == UNKNOWN_CPU or not hasattr(os, "sched_setaffinity"):
        return None
    try:
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {cpu})
    except OSError:
        return None
    if not hasattr(_thread, "cpus_before_pin"):
        _thread.cpus_before_pin = before
    return cpu


@contextlib.contextmanager
def unpinned():
    """The calling thread on the CPUs it had before `pin`, then back on its one: a thread or process it
    starts inherits its CPUs (the profiler's, a compile's), and must not share the launching one."""
    before, pinned = getattr(_thread, "cpus_before_pin", None), None  # never pinned (a CPU worker): nothing to do
    if before is not None:
        try:
            pinned = os.sched_getaffinity(0)
            os.sched_setaffinity(0, before)
        except OSError:  # a CPU taken from the process meanwhile: the pass runs pinned, not failed
            pinned = None
    try:
        yield
    finally:
        if pinned is not None:
            os.sched_setaffinity(0, pinned)


@dataclass(frozen=True)
class BlockHost:
    """The host's state at a timed block's end: the CPU the launching thread ran on, the SM clock (MHz,
    None: not read)."""

    cpu: int
    sm_clock_mhz: float | None

    @classmethod
    def now(cls, clock=None) -> "BlockHost":
        """`clock()`: the GPU's SM clock, MHz, or None (environment.sm_clock_mhz); None: a CPU run."""
        return cls(current_cpu(), clock() if clock is not None else None)
