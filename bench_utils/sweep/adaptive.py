"""Which cell gets the next round: spend the budget where the answer is least sure. No torch.

After the first `repeats` rounds of every cell, the next round goes to the cell group (model, batch
size) whose widest compiled-mode speedup interval is furthest above `target_halfwidth`; a group stops
when all its intervals are within the target or it has `max_repeats` rounds, and the sweep stops
when the next round would end after `budget_min`. The rule looks at the interval's width only, never
at whether the speedup is significant: stopping when a result looks significant would bias it.
"""

from __future__ import annotations

import math
import statistics

from ..config.bench_config import BenchConfig
from ..results.aggregate import cells
from .jobs import Round, cell_groups, needs_fresh_workers


def round_durations(rows: list) -> dict[tuple[str, int, int], float]:
    """(model, batch size, round) -> the round's wall time, seconds: its processes run side by side,
    so a round lasts as long as its longest process."""
    rounds: dict[tuple[str, int, int], float] = {}
    for row in rows:
        key = (row.model, row.batch_size, row.repeat)
        rounds[key] = max(rounds.get(key, 0.0), row.duration_s or 0.0)
    return rounds


def seconds_spent(rows: list) -> float:
    """Wall time the rounds in `rows` took, seconds (rounds run one after another)."""
    return sum(round_durations(rows).values())


def round_seconds(rows: list, group: tuple[str, int], fresh: bool = True) -> float:
    """What the group's next round will take, seconds: the median of its earlier rounds of the same
    kind after the first (the first may compile cold): rounds that started fresh workers (`fresh`:
    build and warm compile) or rounds of workers already prepared; else of any round after the first,
    else the first's."""
    per_round = {repeat: seconds for (model, batch_size, repeat), seconds in round_durations(rows).items()
                 if (model, batch_size) == group}
    started = {row.repeat: row.process_round in (None, row.repeat) for row in rows
               if (row.model, row.batch_size) == group}
    later = [seconds for repeat, seconds in per_round.items() if repeat > 0]
    alike = [seconds for repeat, seconds in per_round.items() if repeat > 0 and started.get(repeat) == fresh]
    return statistics.median(alike or later) if later else max(per_round.values(), default=0.0)


def next_is_fresh(cfg: BenchConfig, rows: list, group: tuple[str, int]) -> bool:
    """Will the group's next round need fresh workers? By jobs.needs_fresh_workers, or when its last
    round failed (the runner then ends its workers)."""
    mine = [row for row in rows if (row.model, row.batch_size) == group]
    last = max(row.repeat for row in mine)
    last_rows = [row for row in mine if row.repeat == last]
    first = min((row.process_round for row in last_rows if row.process_round is not None), default=last)
    return any(row.status != "ok" for row in last_rows) or needs_fresh_workers(cfg, last + 1, first)


def halfwidths(cfg: BenchConfig, rows: list) -> dict[tuple[str, int], float]:
    """Per cell group, the widest relative half-width of its compiled modes' speedups (inf while a
    compiled mode has no interval yet: a failed cell is not chased, it has no row that is ok)."""
    widest: dict[tuple[str, int], float] = {}
    for record in cells(rows):
        if record["mode"] == "eager" or record["status"] != "ok" or record["label"] != cfg.label:
            continue
        group = (record["model"], record["batch_size"])
        width = record["speedup_halfwidth"]
        width = math.inf if width is None or math.isnan(width) else width
        widest[group] = max(widest.get(group, 0.0), width)
    return widest


def next_round(cfg: BenchConfig, rows: list, elapsed_s: float, last: tuple[str, int] | None = None) -> Round | None:
    """The extra round to measure next, or None: precision reached, `max_repeats`, or no budget. The
    group `last` measured goes after the others that want a round: two rounds of a group back to back
    would see one stretch of the machine twice."""
    if cfg.target_halfwidth <= 0 or cfg.budget_min <= 0:
        return None
    rounds = {}
    for row in rows:
        group = (row.model, row.batch_size)
        rounds[group] = max(rounds.get(group, -1), row.repeat)
    widths = halfwidths(cfg, rows)
    wanted = [(width, group) for group, width in widths.items()
              if group in cell_groups(cfg) and width > cfg.target_halfwidth and rounds[group] + 1 < cfg.max_repeats]
    for width, group in sorted(wanted, key=lambda item: (item[1] == last, -item[0])):
        if elapsed_s + round_seconds(rows, group, next_is_fresh(cfg, rows, group)) <= cfg.budget_min * 60.0:
            return Round(group[0], group[1], rounds[group] + 1, cfg.modes)
    return None
