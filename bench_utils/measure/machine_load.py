"""Was the machine busy with something else while we timed? No torch.

A snapshot reads the machine's CPU time (/proc/stat: busy, idle and steal jiffies of all cores) and
this process's own CPU time (every thread, from getrusage). Between two snapshots, the busy time not
spent by this process is what other processes took; steal is what the hypervisor gave to other
guests. Both are reported as a percentage of the machine's capacity over the interval (cores x
seconds). Linux only; elsewhere the figures are None.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Snapshot:
    wall_s: float
    busy_s: float  # machine-wide, all cores, seconds (None fields: not on Linux)
    steal_s: float
    own_s: float  # this process, user + system, seconds


def _proc_stat() -> tuple[float, float] | None:
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(v) for v in fields[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    # user nice system idle iowait irq softirq steal [guest guest_nice: already inside user/nice]
    user, nice, system, _idle, _iowait, irq, softirq = ticks[:7]
    steal = ticks[7] if len(ticks) > 7 else 0
    return (user + nice + system + irq + softirq) / hz, steal / hz


def snapshot() -> Snapshot | None:
    stat = _proc_stat()
    if stat is None:
        return None
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return Snapshot(time.perf_counter(), stat[0], stat[1], usage.ru_utime + usage.ru_stime)


@dataclass(frozen=True)
class Load:
    others_cpu_pct: float  # CPU time of other processes, % of the machine's capacity over the interval
    steal_pct: float  # time stolen by the hypervisor, same unit


def between(before: Snapshot | None, after: Snapshot | None, cores: int | None = None) -> Load | None:
    """The load other than ours between two snapshots; None when either is missing or no time passed."""
    if before is None or after is None:
        return None
    capacity_s = (after.wall_s - before.wall_s) * (cores or os.cpu_count() or 1)
    if capacity_s <= 0:
        return None
    others_s = (after.busy_s - before.busy_s) - (after.own_s - before.own_s)
    steal_s = after.steal_s - before.steal_s
    # jiffies are coarse (10 ms) and /proc/stat lags the clock that spans the interval: over a short
    # block the shares can round past either end (106% was read once); a share is within 0 .. 100
    return Load(_share(others_s, capacity_s), _share(steal_s, capacity_s))


def _share(seconds: float, capacity_s: float) -> float:
    return min(100.0, max(0.0, seconds / capacity_s * 100.0))
