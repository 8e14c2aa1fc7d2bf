"""What a profile asks to measure, as jobs, and which of them a results file still lacks. No torch.

A job (measure/task.py) is one measuring process's work: a cell's configuration in one round, or one
process of a study. The cell jobs of one round (one per configuration of a model and batch size) run
together, each in a worker of its own, taking turns timing blocks (sweep/rounds.py): a `Round`; after
round 0 a round holds eager and the configurations still in the race (results/race.py). A worker measures up to
`rounds_per_process` rounds of its cell. A study's jobs come from the study itself (results/studies.py):
nothing here knows a study's kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..config.configurations import BASELINE, configuration
from ..measure.task import CELL, Job
from ..results.race import SELECTION_ROUNDS
from ..results.rows import NOT_FAILED, BenchResult, Row, cell_fields, read_results, run_key
from ..results.studies import study, studies
from .workers import uses_cuda


class SettingsMismatchError(ValueError):
    """The results file holds rows measured with other settings."""


@dataclass(frozen=True)
class Round:
    """The cell jobs of one model, batch size and round: one per configuration, measured together."""

    model: str
    batch_size: int
    repeat: int
    configurations: tuple[str, ...]
    # fresh workers although the group's could measure it (needs_fresh_workers): an extra round that
    # a new pair makes worth more (sweep/adaptive.py)
    new_workers: bool = False
    # the configurations the group's race leads with when the round starts, one per way of serving the
    # model (adaptive.leaders): on a CPU only their templates time a warm compile (measure/task.NextRound);
    # None: every compiled one does
    leaders: tuple[str, ...] | None = None

    @property
    def jobs(self) -> list[Job]:
        return [Job(CELL, self.model, self.batch_size, name, self.repeat) for name in self.configurations]

    @property
    def group(self) -> tuple[str, int]:
        return self.model, self.batch_size

    @property
    def name(self) -> str:
        return f"{self.model}-bs{self.batch_size}-r{self.repeat}"

    def times_warm_compile(self, configuration: str) -> bool:
        """Does `configuration`'s template time its warm compile before this round, if it has not yet?"""
        return self.leaders is None or configuration in self.leaders


def cell_groups(cfg: BenchConfig) -> list[tuple[str, int]]:
    """(model, batch size) of every cell group, in run order."""
    return [(model, batch_size) for model in cfg.models for batch_size in cfg.batch_sizes]


def first_rounds(cfg: BenchConfig) -> list[Round]:
    """The rounds every cell gets (`repeats`), in chunks of `live_groups` cell groups (whose workers
    live together), round-major within a chunk: round r of every group of the chunk before round
    r + 1, so a cell's rounds are spread over minutes and their disagreement includes the drift."""
    groups = cell_groups(cfg)
    chunks = [groups[i:i + cfg.live_groups] for i in range(0, len(groups), cfg.live_groups)]
    return [Round(model, batch_size, repeat, cfg.configurations) for chunk in chunks for repeat in range(cfg.repeats)
            for model, batch_size in chunk]


def eager_after_selection(cfg: BenchConfig) -> bool:
    """Does eager's own worker measure the rounds after the selection rounds? Not where every configuration
    the profile races times eager beside its own blocks (eager_in_process, Configuration.eager_beside: on
    a GPU by default): each later round's speedups are over those calls, and eager's worker, which gives
    the eager row (its latency, memory and profile), measures the selection round alone. A later round
    is then its contenders' workers only: on the guide's A100 matrix a third of its timing, and its
    fresh pairs' eager starts and warm-ups (`plan`)."""
    device = "cuda" if uses_cuda(cfg.device) else "cpu"
    raced = [name for name in cfg.configurations if name != BASELINE]
    return not (raced and cfg.times_eager_beside(device) and all(configuration(name).eager_beside for name in raced))


def later_round_configurations(cfg: BenchConfig, contenders) -> tuple[str, ...]:
    """A round's configurations after the selection rounds: eager's (eager_after_selection) and the
    `contenders` the race keeps (eager among them or not), in the profile's order."""
    keep = (set(contenders) - {BASELINE}) | ({BASELINE} if eager_after_selection(cfg) else set())
    return tuple(name for name in cfg.configurations if name in keep)


def profiled(cfg: BenchConfig, batch_size: int, repeat: int, name: str) -> bool:
    """Does the process of configuration `name` in round `repeat` get the profiler's pass? With
    `profiler`, the first round after the selection rounds (eager and the configurations the race kept;
    round 0 when there is no later round) at each model's smallest batch size: one pass explains a
    model's speedup; profiling every configuration a selection round tries cost 4-13 s per model on a 2-core
    CPU (benchmarks/README.md#plan-constants), the other batch sizes would repeat it. Eager's worker, where it
    measures the selection round alone (eager_after_selection), gets its pass in round 0."""
    round_ = SELECTION_ROUNDS if cfg.repeats > SELECTION_ROUNDS else 0
    if name == BASELINE and not eager_after_selection(cfg):
        round_ = 0
    return cfg.profiler and repeat == round_ and batch_size == cfg.smallest_batch_size


def needs_fresh_workers(cfg: BenchConfig, repeat: int, first_round: int | None, batch_size: int) -> bool:
    """Does round `repeat` of a cell group at `batch_size` start fresh workers,
    when its current ones started in round `first_round` (None: it has none)? After `rounds_per_process`
    rounds; on a GPU also at the last round of the first pass: every cell then has two pairs of workers at
    least (results/stats.design_effect can weigh their disagreement) and a warm compile (a fresh worker's,
    from the cache round 0 filled). Where eager is timed beside each configuration (no eager worker in the
    later rounds: eager_after_selection) only at each model's smallest batch size: every speedup is then
    paired within one process, and a warm compile does not depend on the batch size (the same seconds at
    batch 1 and 16: benchmarks/README.md#gpu-h200-probe), so the other batch sizes'
    fresh workers would cost the guide's A100 matrix 4 minutes for figures a model's first already gives.
    On a CPU every round is a process of its own already and the warm compile is measured in a fork
    of the prepared one (measure/forked.py): a fresh start at the first pass's end would only cost."""
    if first_round is None:
        return True
    smallest = batch_size == cfg.smallest_batch_size or eager_after_selection(cfg)
    first_pass_end = repeat == cfg.repeats - 1 and first_round < repeat and uses_cuda(cfg.device) and smallest
    return repeat - first_round >= cfg.rounds_per_process or first_pass_end


def pair_start(cfg: BenchConfig, repeat: int, batch_size: int) -> int:
    """The round in which the workers of round `repeat` of the first pass (at `batch_size`) started."""
    first = None
    for r in range(repeat + 1):
        if needs_fresh_workers(cfg, r, first, batch_size):
            first = r
    return first


def study_jobs(cfg: BenchConfig) -> list[Job]:
    """Every study process of `cfg`, in run order (each study's own order: the compile-time study's
    whole-model compile first, it leaves the artifacts a later job loads)."""
    return [Job(each.name, model, batch_size, option) for each in studies()
            for model, batch_size, option in each.jobs(cfg)]


def read_cell_rows(cfg: BenchConfig, results_path: Path) -> list:
    """The results file's rows (none if it does not exist); refuses rows of other settings."""
    if not results_path.exists():
        return []
    rows = read_results(results_path).rows
    labels = sorted({row.label for row in rows} - {cfg.label})
    if labels:  # e.g. "A100" and "a100!" share the folder a100/: one label's rows are not the other's
        raise SettingsMismatchError(f"{results_path} holds rows of the label {labels[0]!r}, not {cfg.label!r}; "
                                    "choose another label or --results file")
    others = [row for row in rows if row.settings != cfg.settings_fingerprint()]
    if others:
        raise SettingsMismatchError(f"{results_path} holds rows measured with other settings "
                                    f"({settings_differing(cfg, others)}); choose another --results file, or the "
                                    "settings it was measured with")
    return rows


def cores_differing(rows: list, cpu: str, cores: int | None) -> str:
    """Rows of this CPU model measured with another number of CPUs than `cores` (a run under taskset, or
    a container's cpuset), said as "1 core there, 2 cores here"; "" when none. Their rounds would join this
    run's in the same cells (a cell is the label, settings, CPU model and torch: results/aggregate.py),
    so a speedup would pair a one-core round with a two-core one. Rows of another CPU model are cells of
    their own; a row without the fields (a failure before its process recorded them) says nothing."""
    return _differing({row.env.get("cpu_count") for row in rows if row.env.get("cpu") == cpu}, cores, "core")


def threads_recorded(rows: list, cpu: str) -> set:
    """The torch threads (torch.get_num_threads()) the CPU rows of this CPU model were measured with."""
    return {row.env.get("torch_threads") for row in rows
            if row.device == "cpu" and row.env.get("cpu") == cpu} - {None}


def threads_differing(rows: list, cpu: str, threads: int | None) -> str:
    """As cores_differing, for torch's threads in a CPU worker (OMP_NUM_THREADS, MKL_NUM_THREADS): a
    resume under another OMP_NUM_THREADS blended one-thread rounds with two-thread ones in one cell.
    A GPU row's threads are the worker's own choice (launch_thread.GPU_WORKER_THREADS): not compared."""
    return _differing(threads_recorded(rows, cpu), threads, "thread")


def _differing(theirs: set, ours: int | None, word: str) -> str:
    theirs = sorted(theirs - {None, ours})
    if ours is None or not theirs:
        return ""
    unit = lambda n: f"{n} {word}{'' if n == 1 else 's'}"  # noqa: E731
    return f"{', '.join(unit(n) for n in theirs)} there, {unit(ours)} here"


# the settings a row records beside its fingerprint (BenchResult fields of the same name): the others are in the
# fingerprint alone
RECORDED_SETTINGS = ("size", "device", "fullgraph", "warmup", "iterations", "min_time_s")


def settings_differing(cfg: BenchConfig, rows: list) -> str:
    """Which settings of `cfg` the `rows` (of another fingerprint) were not measured with, as far as their
    fields tell: "iterations 9 there, 8 here", or the settings a row keeps in its fingerprint only."""
    ours = cfg.to_dict()
    differing, same = [], set()
    for name in RECORDED_SETTINGS:
        if name == "device" and ours[name] == "auto":  # a row holds the device auto resolved to: not comparable
            continue
        theirs = sorted({getattr(row, name) for row in rows} - {ours[name]}, key=str)
        if theirs:
            differing.append(f"{name} {', '.join(map(str, theirs))} there, {ours[name]} here")
        elif name != "device":  # rows of `device: auto` hold what it resolved to: equal values prove nothing
            same.add(name)
    if differing:
        return "; ".join(differing)
    unknown = [name for name in cfg.fingerprinted() if name not in same]
    return f"one of {', '.join(unknown)} differs: rows keep those in a fingerprint only"


def done_keys(rows: list, retry_failed: bool = False) -> set:
    """Keys of the processes a results file holds (only its ok ones, with retry_failed)."""
    return {row.key for row in rows if row.status == "ok" or not retry_failed}


def round_pending(cfg: BenchConfig, round_: Round, done: set) -> bool:
    """Does the results file lack a row of this round? The selection round needs every configuration's;
    a later round holds only the race's contenders (decided by the rows): it ran when a contender's row
    is there, and eager's where eager's worker measures later rounds (eager_after_selection; eager's
    alone: the sweep stopped between the two, and the round is measured again; its new eager row
    replaces the old)."""
    def has(name: str) -> bool:
        return run_key(cfg, (round_.model, round_.batch_size, name, round_.repeat)) in done

    if round_.repeat < SELECTION_ROUNDS:
        return not all(has(name) for name in round_.configurations)
    others = [name for name in round_.configurations if name != BASELINE]
    if not others:  # an eager-only profile: eager's row is the round
        return not has(BASELINE)
    return (eager_after_selection(cfg) and not has(BASELINE)) or not any(has(name) for name in others)


def retryable_failures(cfg: BenchConfig, rows: list) -> int:
    """The rows of `rows` (one per process) that did not end ok and that --retry-failed would measure again:
    those of first-pass rounds a plain re-run skips but a retry reopens. A failed extra round, a failed
    contender beside one that ended ok in a later round, or a row of a model the profile no longer names
    is not among them: no re-run measures those again."""
    plain, retry = done_keys(rows), done_keys(rows, retry_failed=True)
    reopened = {(r.model, r.batch_size, r.repeat) for r in first_rounds(cfg)
                if round_pending(cfg, r, retry) and not round_pending(cfg, r, plain)}
    return sum(row.status not in NOT_FAILED and (row.model, row.batch_size, row.repeat) in reopened for row in rows)


def job_row(cfg: BenchConfig, job: Job) -> tuple[type[Row], dict]:
    """The row type a job of `cfg` writes, and that row's identity fields (its key among them)."""
    if job.kind == CELL:
        return BenchResult, cell_fields(cfg, job.model, job.batch_size, job.option, cfg.device, job.repeat)
    each = study(job.kind)
    return each.row, each.identity(cfg, job.model, job.option, cfg.device)


def failure_row(cfg: BenchConfig, job: Job, status: str, error: str, duration_s: float) -> Row:
    """The row of a job (a cell's mode or a study process) whose worker or task was lost."""
    row_type, identity = job_row(cfg, job)
    return row_type.failed(identity, status, error, duration_s)


def rows_path(results_path: Path, job: Job) -> Path:
    """The file a job's row goes to: the results file, or its study's file next to it."""
    return Path(results_path) if job.kind == CELL else study(job.kind).path(results_path)


def pending_study_jobs(cfg: BenchConfig, results_path: Path, retry_failed: bool = False) -> list[Job]:
    """The study jobs of `cfg` whose rows (of these settings) its study files do not hold yet."""
    done = set()
    for each in studies():
        rows = [row for row in each.read(results_path) if row.settings == cfg.settings_fingerprint()]
        done |= {(each.name, key) for key in done_keys(rows, retry_failed)}
    return [job for job in study_jobs(cfg) if (job.kind, _key(cfg, job)) not in done]


def _key(cfg: BenchConfig, job: Job) -> tuple:
    """The key of the row a job writes."""
    row_type, identity = job_row(cfg, job)
    return row_type(**identity, status="crashed").key


def unit_group(unit: Round | Job) -> tuple:
    """What a unit must not run beside: a round its cell group's other rounds (the same workers), a
    study job its study's other jobs of the same model (the compile-time study's whole-model compile
    leaves the artifacts its cache-artifacts job loads)."""
    return ("cell", *unit.group) if isinstance(unit, Round) else (unit.kind, unit.model)
