"""How long a sweep has run, read from its rows alone: the budget's clock (sweep/adaptive.py, fit.py) and
the figure a page's advice starts from (report/verdict.py). No torch.
"""

from __future__ import annotations

import datetime as dt
import math
import time


def round_durations(rows: list) -> dict[tuple[str, int, int], float]:
    """(model, batch size, round) -> the round's wall time, seconds: its processes run side by side,
    so a round lasts as long as its longest process."""
    rounds: dict[tuple[str, int, int], float] = {}
    for row in rows:
        key = (row.model, row.batch_size, row.repeat)
        rounds[key] = max(rounds.get(key, 0.0), row.duration_s or 0.0)
    return rounds


# a gap between rows at most this long (seconds) is the sweep's own work, counted: a profiler pass after a
# row, the handoff to the next round (left out, they let a sweep end past its budget:
# benchmarks/README.md#zen3-serving-forms); a longer one is a pause between invocations
WORK_GAP_S = 30.0


def seconds_spent(rows: list, running: list[float] = (), now: float | None = None) -> float:
    """The sweep's time so far, seconds, from its rows alone: the length of the union of the rows'
    [start, start + duration] spans (a round's processes, and groups a launcher measures at once, overlap
    and count once), with the gaps between them up to WORK_GAP_S (the pauses between invocations do not
    count), plus, for the units still running,
    the part of [their start (`running`: epoch seconds), `now`] no row covers. A second invocation of a
    finished sweep reads the same clock the first one stopped on, so it adds nothing (the budget is the
    profile's, not the invocation's). Rows without a start time count as rounds one after another."""
    spans, loose = [], []
    for row in rows:
        start = epoch(row.started_at)
        if start is None:
            loose.append(row)
        else:
            spans.append((start, start + (row.duration_s or 0.0)))
    if running:
        now = time.time() if now is None else now
        spans += [(start, max(start, now)) for start in running]
    total, end = 0.0, -math.inf
    for start, stop in sorted(spans):
        if 0 < start - end <= WORK_GAP_S:  # the sweep's own work between rows: counted
            total += start - end
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total + sum(round_durations(loose).values())


def epoch(stamp: str) -> float | None:
    """An ISO 8601 start time as epoch seconds; None when absent or unreadable."""
    try:
        return dt.datetime.fromisoformat(stamp).timestamp() if stamp else None
    except (TypeError, ValueError):
        return None


RERUN_SPARE = 1.2  # a rerun's budget gives the rounds it was priced for a fifth more: rounds run 10-30% over their price


def rerun_budget_min(spent_s: float, more_s: float) -> float:
    """The budget_min (`--budget-min`) that lets a sweep whose clock stands at `spent_s` (seconds_spent)
    measure `more_s` seconds of rounds more, RERUN_SPARE of them, rounded up to half a minute: the rounds
    measured are kept, and the budget counts them."""
    return math.ceil((spent_s + RERUN_SPARE * more_s) / 30.0) / 2.0
