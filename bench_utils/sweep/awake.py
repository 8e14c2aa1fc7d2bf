"""The runner's clock for its workers' deadlines: seconds it was awake, without the time it was stopped.

A runner stopped (Ctrl-Z, SIGSTOP) past `timeout_s` and then continued found every deadline passed:
its workers, which had only waited on it for their next block, were killed and recorded as
`timeout`, and their later rounds never ran. A daemon thread ticks every TICK_S; a tick later than
STOPPED_S means the process (or the machine) was stopped, and that gap does not count. A busy
machine delays a tick by far less: where it delays one more, a deadline only grows by the delay.
"""

from __future__ import annotations

import os
import threading
import time

TICK_S = 0.25
STOPPED_S = 5.0  # a tick this late: the runner was stopped or the machine suspended, not merely busy

_lock = threading.Lock()
_stopped_s = 0.0  # seconds the runner was stopped, summed
_last_tick: float | None = None
_ticking_pid: int | None = None  # the process whose thread ticks: a fork has none until it asks


def _gap_stopped(now: float) -> float:
    """Of the time since the last tick, what was a stop (0 when the tick came about on time)."""
    gap = now - _last_tick
    return gap - TICK_S if gap > STOPPED_S else 0.0


def _tick() -> None:
    global _stopped_s, _last_tick
    while True:
        time.sleep(TICK_S)
        with _lock:
            now = time.monotonic()
            _stopped_s += _gap_stopped(now)
            _last_tick = now


def now() -> float:
    """Seconds on a monotonic clock that stands still while this process is stopped (a stop not yet seen
    by the ticking thread, the moment after SIGCONT, is taken off too)."""
    global _last_tick, _ticking_pid
    with _lock:
        current = time.monotonic()
        if _ticking_pid != os.getpid():  # the first call (in this process) starts the ticking thread
            _last_tick, _ticking_pid = current, os.getpid()
            threading.Thread(target=_tick, name="awake-clock", daemon=True).start()
        return current - _stopped_s - _gap_stopped(current)
