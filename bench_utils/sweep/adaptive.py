"""Which cell gets the next round: spend the budget where the answer is least sure. No torch.

A round holds eager and the group's configurations still in the race (results/race.py; `race_round`).
The rule is docs/method.md's "Measure until the interval is tight, within a budget": after the first
`repeats` rounds, each cell group whose widest contender's interval is above `target_halfwidth` is
offered a round in its current pair of workers and one in a fresh pair, each worth the narrowing it
would bring (stats.halfwidth_with_round) per second it would take (round_seconds); the best offer goes
next, a group wider than the verdict's margin (`worthwhile`: +-10% at 1.10) before every other: such an
interval can hold both "no worthwhile gain" and a worthwhile speedup, so narrowing it can change an
answer, narrowing one within the margin only refines a figure. The rule looks at the intervals' widths only, never at whether a speedup is significant:
stopping when a result looks significant would bias it.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..config.configurations import BASELINE, configuration
from ..results.aggregate import cells
from ..results.race import CONTENDER, RECOMMENDED, RUNNER_UP, SELECTION_ROUNDS
from ..results.rows import NOT_FAILED
from ..results.stats import FEW_ROUNDS, halfwidth_with_round
from ..results.sweep_time import round_durations
from .jobs import (Round, cell_groups, done_keys, eager_after_selection, first_rounds, later_round_configurations,
                   needs_fresh_workers, read_cell_rows, round_pending)

# A group within the target stops only with this many rounds: a spread estimated from fewer is itself
# too uncertain to stop on (a run stopped SegFormer-B0 on three rounds that agreed to +-1.5% by chance,
# outside the next run's interval). Until then it gets rounds the wide groups leave room for.
MIN_ROUNDS_TO_STOP = FEW_ROUNDS


def round_seconds(rows: list, group: tuple[str, int], fresh: bool = True, workers: int | None = None) -> float:
    """What the group's next round will take, seconds: the median of its earlier rounds of the same
    kind after the first (the first may compile cold): rounds that started fresh workers (`fresh`:
    build and warm compile) or rounds of workers already prepared (on a CPU each forked from them:
    BenchResult.prepared_round); else of any round after the first, else the first's. With `workers`
    (the next round's), a later round's time per worker, less a CPU template's warm compile (once per
    contender, before its first later round), times them: a round that stopped timing two contenders
    out of reach costs three workers' time, not the five its earlier rounds held."""
    mine = [row for row in rows if (row.model, row.batch_size) == group]
    per_round = {repeat: seconds for (model, batch_size, repeat), seconds in round_durations(mine).items()}
    started = {row.repeat: row.prepared_round == row.repeat for row in mine}
    if workers:
        held: dict[int, int] = {}
        warm: dict[int, float] = {}
        for row in mine:
            held[row.repeat] = held.get(row.repeat, 0) + 1
            warm[row.repeat] = warm.get(row.repeat, 0.0) + (row.compile_warm_s or 0.0)
        per_round = {repeat: max(seconds - warm[repeat], 0.0) / held[repeat] * workers if repeat > 0 else seconds
                     for repeat, seconds in per_round.items()}
    later = [seconds for repeat, seconds in per_round.items() if repeat > 0]
    alike = [seconds for repeat, seconds in per_round.items() if repeat > 0 and started.get(repeat) == fresh]
    return statistics.median(alike or later) if later else max(per_round.values(), default=0.0)


def next_is_fresh(cfg: BenchConfig, rows: list, group: tuple[str, int]) -> bool:
    """Will the group's next round need fresh workers? By jobs.needs_fresh_workers, or when its last
    round failed (the runner then ends its workers)."""
    mine = [row for row in rows if (row.model, row.batch_size) == group]
    last = max(row.repeat for row in mine)
    last_rows = [row for row in mine if row.repeat == last]
    first = min((row.prepared_round for row in last_rows if row.prepared_round is not None), default=last)
    return any(row.status not in NOT_FAILED for row in last_rows) or needs_fresh_workers(cfg, last + 1, first,
                                                                                                 group[1])


CONTENDING = (RECOMMENDED, RUNNER_UP, CONTENDER)


def contenders(cfg: BenchConfig, rows: list) -> dict[tuple[str, int], list[dict]]:
    """Per cell group, the cells of the configurations still in its race (results/race.py): the
    others (dropped, inaccurate, unsupported, failed) are not chased, nor a contender the leader beats
    beyond doubt over the rounds both ran (race_trailing: it can change no answer, and each round of it
    costs a fork, its warm-up and its blocks)."""
    out: dict[tuple[str, int], list[dict]] = {}
    for record in cells(rows):
        if record["race_outcome"] in CONTENDING and not record["race_trailing"] and record["label"] == cfg.label:
            out.setdefault((record["model"], record["batch_size"]), []).append(record)
    return out


def leaders(records: list[dict]) -> tuple[str, ...]:
    """Among a group's contenders' records, the one its race recommends now and, per other way of
    serving the model (Configuration.form: an AOTInductor package, ONNX Runtime), its fastest: the
    configurations whose start-up cost (a warm compile, a package's load) a page shows."""
    def rank(record: dict) -> tuple:
        speed = record["race_speedup"]
        return record["race_outcome"] == RECOMMENDED, -math.inf if speed is None or math.isnan(speed) else speed

    best: dict[str, dict] = {}
    for record in records:
        form = configuration(record["configuration"]).form
        if form not in best or rank(record) > rank(best[form]):
            best[form] = record
    return tuple(record["configuration"] for record in best.values())


def race_round(cfg: BenchConfig, rows: list, round_: Round) -> Round | None:
    """`round_` with the group's contenders only after the selection round (and eager, where its worker
    measures later rounds: jobs.eager_after_selection), and its leaders named (`leaders`), or None when
    the profile races configurations and none of the group's is left (an eager-only profile keeps its
    rounds)."""
    if round_.repeat < SELECTION_ROUNDS or round_.configurations == (BASELINE,):
        return round_
    records = contenders(cfg, rows).get(round_.group, [])
    left = {record["configuration"] for record in records}
    if not left:
        return None
    return dataclasses.replace(round_, configurations=later_round_configurations(cfg, left), leaders=leaders(records))


def first_pass_left(cfg: BenchConfig, rows: list) -> int:
    """Rounds of the first pass the rows lack and the sweep would still run (a later round of a group
    whose selection rounds left no contender is not run: race_round). Only a sweep stopped before its
    first pass ended (interrupted, killed) leaves any: the budget never cuts the first pass (it leaves
    configurations out of selection rounds, as skipped rows, and extra rounds come after it)."""
    done = done_keys(rows)
    pending = [round_ for round_ in first_rounds(cfg) if round_pending(cfg, round_, done)]
    unselected = {round_.group for round_ in pending if round_.repeat < SELECTION_ROUNDS}  # no race yet
    return sum(1 for round_ in pending if round_.group in unselected or race_round(cfg, rows, round_) is not None)


def first_pass_state(cfg: BenchConfig, results_path) -> tuple[int, int] | None:
    """(first-pass rounds left, first-pass rounds) of `cfg` in a results file, for the page and the index
    to say that a sweep stopped early (first_pass_left); None when the file holds another run's rows (the
    count would be of another profile: the page says why the file was refused elsewhere)."""
    try:
        rows = read_cell_rows(cfg, Path(results_path))
    except ValueError:  # another run's rows (SettingsMismatchError), a file refused (ConfigError)
        return None
    return first_pass_left(cfg, rows), len(first_rounds(cfg))


def widest_halfwidth(records: list[dict]) -> float:
    """The widest relative half-width of a group's contenders' race figures (inf while one has no
    interval yet)."""
    widths = [record["race_halfwidth"] for record in records]
    return max(math.inf if width is None or math.isnan(width) else width for width in widths)


def halfwidth_after(records: list[dict], fresh: bool) -> float:
    """The group's widest half-width after one more round, in a fresh pair of workers or in the pair
    that measured its last round (stats.halfwidth_with_round: a projection)."""
    def after(record: dict) -> float:  # the rounds of its race figure
        kept = [i for i, r in enumerate(record["round_ids"]) if r in record["race_round_ids"]]
        logs, labels = [record["round_logs"][i] for i in kept], [record["round_workers"][i] for i in kept]
        joins = ("fresh",) if fresh or not labels else labels[-1]
        return halfwidth_with_round(logs, labels, joins)

    return max(after(record) for record in records)


def next_round(cfg: BenchConfig, rows: list, elapsed_s: float, last: tuple[str, int] | None = None,
               busy: set = frozenset()) -> Round | None:
    """The extra round to measure next, or None: precision reached, `max_repeats`, or no budget. The
    best offer per second (module docstring) goes first; the group `last` measured goes after the
    others that want a round: two rounds of a group back to back would see one stretch of the machine
    twice. Groups in `busy` (a launcher measuring several units at once is measuring them now) wait."""
    if cfg.target_halfwidth <= 0 or cfg.budget_min <= 0:
        return None
    rounds = {}
    for row in rows:
        group = (row.model, row.batch_size)
        rounds[group] = max(rounds.get(group, -1), row.repeat)
    offers = []
    racing = contenders(cfg, rows)
    eager_worker = int(eager_after_selection(cfg))
    for group, records in racing.items():
        width = widest_halfwidth(records)
        within = width <= cfg.target_halfwidth
        if (group not in cell_groups(cfg) or group in busy or rounds[group] + 1 >= cfg.max_repeats
                or (within and rounds[group] + 1 >= MIN_ROUNDS_TO_STOP)):
            continue
        forced = next_is_fresh(cfg, rows, group)  # its workers end anyway: only a fresh pair is on offer
        for fresh in (True,) if forced else (False, True):
            seconds = round_seconds(rows, group, fresh, workers=eager_worker + len(records))  # eager and the chased
            if elapsed_s + seconds > cfg.budget_min * 60.0:
                continue
            after = halfwidth_after(records, fresh)
            if within:  # a round to check the spread, worth nothing to the width: after every wide group's
                gain = 0.0
            elif math.isinf(width) or math.isinf(after):
                gain = math.inf
            else:
                gain = width - max(after, cfg.target_halfwidth)
            wider_than_margin = width > cfg.worthwhile - 1.0
            offers.append(((group == last, not wider_than_margin, -gain / max(seconds, 1e-3), seconds), group,
                           fresh and not forced))
    if not offers:
        return None
    _, group, new_workers = min(offers, key=lambda offer: offer[0])
    configurations = later_round_configurations(cfg, [record["configuration"] for record in racing[group]])
    return Round(group[0], group[1], rounds[group] + 1, configurations, new_workers=new_workers,
                 leaders=leaders(racing[group]))


