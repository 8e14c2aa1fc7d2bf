"""A plan that fits the machine: before a cell group's selection round, can the sweep still decide every
model within `budget_min` at the costs this machine has shown, and if not, which configurations the
selection rounds still to come leave out. No torch.

The first group's selection round runs every configuration: it measures what a compile, a warm-up, a block and
a handoff cost here (CPUs of one size class differ 3x in a call and 2x in a compile:
benchmarks/README.md#default-report-by-machine). Before each later group's selection round the sweep's
remaining work is priced at those costs: every pending selection round with its configurations, and for every
group the rounds of the first pass it still lacks, each of eager and the contenders its race keeps (a
measured group's own count: a noisy first round that drops nothing makes every later round dear; a
pending group's eager and one contender), and on a CPU its leaders' warm compiles (one per way of
serving), timed before its first later round. When that ends past the budget, configurations leave the
pending selection rounds one at a time, those the measured groups' races ranked lowest first (failed or
beaten everywhere before leading somewhere, a lead counting only where the race told it apart: `best_ranks`;
among equals one whose speedup lies more than the margin below its group's best first: `far_behind`, then
the most elaborate, then the dearest), until the rest fits or only
each form's best-ranked configuration is left (torch.compile's, an AOTInductor package's, ONNX
Runtime's: a serving profile answers for each way to serve; a configuration that compiles nothing costs
a worker's blocks and stays). Each becomes a "skipped" row that says so and what a full run would take;
the page names it. To race them all: a larger `budget_min` (`--budget-min`) and `--retry-failed`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import statistics
from dataclasses import dataclass, field

from ..config.bench_config import BenchConfig
from ..config.configurations import BASELINE, configuration
from ..results.aggregate import cells
from ..results.race import (CONTENDER, DROPPED, FAILED, INACCURATE, RECOMMENDED, RUNNER_UP, SELECTION_ROUNDS)
from ..results.rows import timed_s
from .jobs import Round, eager_after_selection
from .plan import CPU_COMPILE_S
from .workers import uses_cuda

# how a configuration's place in a measured group's race ranks it (higher: kept longer), counting only
# what the race told apart (`best_ranks`)
LED, CONTENDED, BEATEN, BROKE = 2, 1, 0, -1
RACE_RANK = {RECOMMENDED: LED, RUNNER_UP: CONTENDED, CONTENDER: CONTENDED, DROPPED: BEATEN, INACCURATE: BROKE,
           FAILED: BROKE}
UNMEASURED = CONTENDED  # a configuration no measured group ran (it did not apply there): as a contender


@dataclass(frozen=True)
class Costs:
    """What this machine showed in the selection rounds measured so far, seconds."""

    own_s: dict  # configuration -> its worker's own time in a selection round (compiles, warm-up, timed calls)
    overhead_s: float  # per configuration and round: start, model load, handoffs, profiler, settling
    later_round_s: float  # a round of eager and one contender
    free: frozenset = frozenset()  # configurations that did not apply in any measured group: they cost nothing
    racing: dict = field(default_factory=dict)  # measured group -> workers its later rounds hold (eager and contenders)
    warm_compile_s: float = 0.0  # a CPU leader's warm compile, timed before its first later round
    eager_worker: bool = True  # eager's own worker measures the later rounds (jobs.eager_after_selection)

    def later_round(self, workers: int) -> float:
        """A later round of `workers` workers (eager's and the contenders left), seconds: each its warm-up,
        blocks and share of the handoffs (later_round_s is two of them)."""
        return self.later_round_s / 2 * max(workers, 1)

    def workers_of(self, group: tuple) -> int:
        """The workers a group's later rounds will hold: its own race's once measured (a noisy first round
        drops nothing: every later round holds every configuration), else eager's (where it measures later
        rounds) and one contender's (another group's count says little of this one's: ResNet-50 kept six
        where ViT-B/16 kept three)."""
        least = 1 + self.eager_worker
        return max(least, self.racing.get(group, least))


@dataclass
class Fit:
    """The round to measure (its configurations maybe fewer) and the configurations it leaves out."""

    round: Round
    skipped: list = field(default_factory=list)  # configuration names
    full_s: float = 0.0  # what the rest of the sweep would take with every configuration, seconds
    fitted_s: float = 0.0  # ... and with what is left


def _epoch(row) -> float:
    return dt.datetime.fromisoformat(row.started_at).timestamp()


def machine_costs(rows: list, eager_worker: bool = True) -> Costs | None:
    """Costs from the completed selection rounds among `rows` (None before the first one); `eager_worker`:
    eager's own worker measures the later rounds (jobs.eager_after_selection)."""
    selection = [row for row in rows if row.repeat < SELECTION_ROUNDS and row.started_at and row.status == "ok"]
    tried = [row for row in rows if row.repeat < SELECTION_ROUNDS and row.status != "skipped"]
    ran = {row.configuration for row in selection}
    free = frozenset(row.configuration for row in tried if row.status == "unsupported") - ran
    groups: dict[tuple, list] = {}
    for row in selection:
        groups.setdefault((row.model, row.batch_size, row.repeat), []).append(row)
    if not groups:
        return None
    own: dict[str, list[float]] = {}
    overheads, per_config_round = [], []
    for measured in groups.values():
        # a selection round's own work: its cold compile, warm-up, blocks (the leader's warm compile is
        # its first later round's)
        spent = {row.configuration: (row.compile_s or 0.0) + (row.warmup_s or 0.0) + timed_s(row)
                 for row in measured}
        for name, seconds in spent.items():
            own.setdefault(name, []).append(seconds)
        wall = max(_epoch(row) + (row.duration_s or 0.0) for row in measured) - min(_epoch(row) for row in measured)
        overheads.append(max(0.0, wall - sum(spent.values())) / len(measured))
        per_config_round.append(statistics.median((row.warmup_s or 0.0) + timed_s(row) for row in measured))
    overhead = statistics.median(overheads)
    # a round of eager and one contender: two forks' warm-up and blocks, and their share of the rest
    # (handoffs, settling); a fork compiles nothing, warm or cold
    later_round_s = 2 * (statistics.median(per_config_round) + overhead)
    racing: dict[tuple, int] = {}  # eager and each configuration still in the race
    for record in cells([row for row in rows if row.status != "skipped"]):
        if record["race_outcome"] in (RECOMMENDED, RUNNER_UP, CONTENDER) and not record["race_trailing"]:
            group = (record["model"], record["batch_size"])
            racing[group] = racing.get(group, int(eager_worker)) + 1
    return Costs({name: statistics.median(values) for name, values in own.items()}, overhead, later_round_s, free,
                 racing, _warm_compile_s(rows, selection), eager_worker)


def _warm_compile_s(rows: list, selection: list) -> float:
    """A contender's warm compile, seconds: the median of those measured so far, else the cold
    compiles' median scaled as the CPUs measured scale it (plan.CPU_COMPILE_S: warm over cold)."""
    warm = [row.compile_warm_s for row in rows if row.compile_warm_s]
    if warm:
        return statistics.median(warm)
    cold = [row.compile_s for row in selection if row.compile_s]
    low_cold, low_warm = CPU_COMPILE_S["low"]
    return statistics.median(cold) * low_warm / low_cold if cold else 0.0


def best_ranks(records: list, label: str) -> dict[str, int]:
    """Each configuration's best rank over the measured groups' races (`records`: aggregate.cells of the rows
    measured so far; RACE_RANK), as far as a race told its configurations apart: a leader whose paired interval over
    its runner-up holds 1x (the rounds cannot say which is faster) ranks as a contender, like the runner-up, and a
    contender the leader beats beyond doubt (race_trailing) as beaten. Why: where no configuration helps a model,
    its selection round's order is the noise's, and a fit that followed it kept a different configuration from one
    run to the next (benchmarks/README.md#zen3-five-pairs). Among equals the fit's own order decides (plain
    torch.compile stays last)."""
    best: dict[str, int] = {}
    for record in records:
        if record["label"] != label or record["race_outcome"] not in RACE_RANK:
            continue
        rank, low = RACE_RANK[record["race_outcome"]], record["versus_ci95_low"]
        if rank == LED and low is not None and low <= 1.0:  # no rival (NaN): the lead stands
            rank = CONTENDED
        if rank == CONTENDED and record["race_trailing"]:
            rank = BEATEN
        name = record["configuration"]
        best[name] = max(best.get(name, BROKE - 1), rank)
    return best


def far_behind(records: list, label: str, margin: float) -> set[str]:
    """The configurations whose speedup over eager (the point over their rounds, from `records` as `best_ranks`
    reads them) lies, on the geometric mean over the measured groups that ran them, more than `margin` (the
    verdict's, `worthwhile`) below their group's best: among equal ranks these leave first. Why: one noisy
    selection round often tells nothing apart (every rank a contender's), yet its points still say which
    configuration can win; ordered by cost alone, the fit left the fastest compile (a dear one) out of the
    other models' races (benchmarks/README.md#xeon207-default-report), and a configuration even with the best
    on one model but far behind on another kept its place over the one ahead on both
    (benchmarks/README.md#zen3-real-freezing-pair). Within the margin the points are the noise's, and the order
    among equals stays."""
    best: dict[tuple, float] = {}
    points: dict[str, list] = {}
    for record in records:
        if record["label"] != label or RACE_RANK.get(record["race_outcome"], BROKE) == BROKE:
            continue
        point = record["speedup"]  # over its rounds, not lowered for the pick: which can win, not by how much
        if point is None or not math.isfinite(point) or point <= 0:
            continue
        group = (record["model"], record["batch_size"])
        best[group] = max(best.get(group, 0.0), point)
        points.setdefault(record["configuration"], []).append((group, point))
    return {name for name, seen in points.items()
            if math.fsum(math.log(point / best[group]) for group, point in seen) / len(seen) < -math.log(margin)}


def remaining_s(cfg: BenchConfig, rows: list, selections: list[Round], costs: Costs) -> float:
    """The rest of the sweep at `costs`: the pending selection rounds as they are, and for every cell
    group the rounds of the first pass it lacks, each of eager and the contenders its race keeps
    (Costs.workers_of)."""
    done: dict[tuple, int] = {}
    for row in rows:
        done[(row.model, row.batch_size)] = max(done.get((row.model, row.batch_size), 0), row.repeat + 1)
    fallback = statistics.median(costs.own_s.values()) if costs.own_s else 0.0
    seconds = sum(costs.own_s.get(name, fallback) + costs.overhead_s for round_ in selections
                  for name in round_.configurations if name not in costs.free)
    pending = {round_.group for round_ in selections}
    groups = {(model, batch_size) for model in cfg.models for batch_size in cfg.batch_sizes}
    forking = not uses_cuda(cfg.device)  # a CPU leader's warm compile comes before its first later round
    forms = len({configuration(name).form for name in cfg.configurations if configuration(name).compiled})
    for group in groups:
        measured = 1 if group in pending else done.get(group, 0)
        lacking = max(0, cfg.repeats - measured)
        seconds += lacking * costs.later_round(costs.workers_of(group))
        if forking and lacking and measured <= SELECTION_ROUNDS:  # one per way of serving: adaptive.leaders
            seconds += min(costs.workers_of(group) - 1, forms) * costs.warm_compile_s
    return seconds


def fitted(cfg: BenchConfig, rows: list, round_: Round, later_selections: list[Round], elapsed_s: float,
           left_out: set[str] = frozenset()) -> Fit:
    """`round_` (a selection round about to start) without the configurations the budget cannot hold:
    `later_selections` are the selection rounds still to come after it, `left_out` what earlier groups
    left out already (they stay out)."""
    keep = tuple(name for name in round_.configurations if name not in left_out)
    skipped = [name for name in round_.configurations if name in left_out]
    costs = machine_costs(rows, eager_after_selection(cfg))
    if costs is None or cfg.budget_min <= 0 or cfg.target_halfwidth <= 0 or round_.repeat >= SELECTION_ROUNDS:
        return Fit(dataclasses.replace(round_, configurations=keep), skipped)
    budget_s = cfg.budget_min * 60.0

    def need(names: tuple) -> float:
        rounds = [dataclasses.replace(r, configurations=tuple(n for n in r.configurations if n in names))
                  for r in (round_, *later_selections)]
        return remaining_s(cfg, rows, rounds, costs)

    full_s = elapsed_s + need(round_.configurations)
    records = cells(rows)  # the measured groups' races, once: best_ranks and far_behind read them
    rank = best_ranks(records, cfg.label)
    behind = far_behind(records, cfg.label, cfg.worthwhile)
    # the first to leave: the lowest rank, then one far behind its group's best, then the most
    # elaborate, then the dearest
    order = sorted((name for name in keep if name != BASELINE and name not in costs.free),
                   key=lambda name: (rank.get(name, UNMEASURED), name not in behind, -configuration(name).elaborate,
                                     -costs.own_s.get(name, math.inf)))
    # what compiles nothing costs a worker's warm-up and blocks, and is the speed had without a compile
    # (the pay-back's alternative): it stays; so does each form's best-ranked configuration, whatever the
    # budget: a report of torch.compile races one, and a serving profile answers for each way to serve
    # the model (torch.compile, an AOTInductor package, ONNX Runtime) it lists
    order = [name for name in order if configuration(name).compiled]
    best_of_form = {configuration(name).form: name for name in order}  # `order` runs worst first: the last one wins
    order = [name for name in order if best_of_form[configuration(name).form] != name]
    while elapsed_s + need(keep) > budget_s and order:
        out = order.pop(0)
        keep = tuple(name for name in keep if name != out)
        skipped.append(out)
    return Fit(dataclasses.replace(round_, configurations=keep), skipped, full_s, elapsed_s + need(keep))
