"""What a profile asks to measure, as jobs, and which of them a results file still lacks. No torch.

A job is one measuring process's work: a cell's mode in one round ("cell"), or one process of a study
("serving", "compile-cost"). The cell jobs of one round (one per mode of a model and batch size) run
together, each in a worker of its own, taking turns timing blocks (runner.run_round): a `Round`.
A worker measures up to `rounds_per_process` rounds of its cell (sweep/sessions.py).
Adding a kind of measurement means a kind here, its measure module, and its branch in the worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..results.rows import BenchResult, Row, cell_fields, read_results, read_rows, run_key
from ..results.study_results import (SERVING_SETTINGS, CompileCostResult, ServingResult, compile_cost_fields,
                                     compile_cost_path, serving_fields, serving_path)

STUDY_KINDS = {  # kind -> (row type, its file next to results.jsonl, its identity fields)
    "serving": (ServingResult, serving_path, serving_fields),
    "compile-cost": (CompileCostResult, compile_cost_path, compile_cost_fields),
}


class SettingsMismatchError(ValueError):
    """The results file holds rows measured with other settings."""


@dataclass(frozen=True)
class Job:
    kind: str  # "cell", or a study: "serving", "compile-cost"
    model: str
    batch_size: int
    option: str  # cell: the mode; serving: the dynamic setting; compile-cost: the strategy
    repeat: int = 0  # cell: the round

    @property
    def name(self) -> str:
        """As people read it and as its log file is named: "vit-bs1-default-r0", "serving-vit-auto"."""
        if self.kind == "cell":
            return f"{self.model}-bs{self.batch_size}-{self.option}-r{self.repeat}"
        return f"{self.kind}-{self.model}-{self.option}"


@dataclass(frozen=True)
class Round:
    """The cell jobs of one model, batch size and round: one per mode, measured together."""

    model: str
    batch_size: int
    repeat: int
    modes: tuple[str, ...]
    # fresh workers although the group's could measure it (needs_fresh_workers): an extra round that
    # a new pair makes worth more (sweep/adaptive.py)
    new_workers: bool = False

    @property
    def jobs(self) -> list[Job]:
        return [Job("cell", self.model, self.batch_size, mode, self.repeat) for mode in self.modes]

    @property
    def group(self) -> tuple[str, int]:
        return self.model, self.batch_size

    @property
    def name(self) -> str:
        return f"{self.model}-bs{self.batch_size}-r{self.repeat}"


def cell_groups(cfg: BenchConfig) -> list[tuple[str, int]]:
    """(model, batch size) of every cell group, in run order."""
    return [(model, batch_size) for model in cfg.models for batch_size in cfg.batch_sizes]


def first_rounds(cfg: BenchConfig) -> list[Round]:
    """The rounds every cell gets (`repeats`), in chunks of `live_groups` cell groups (whose workers
    live together), round-major within a chunk: round r of every group of the chunk before round
    r + 1, so a cell's rounds are spread over minutes and their disagreement includes the drift."""
    groups = cell_groups(cfg)
    chunks = [groups[i:i + cfg.live_groups] for i in range(0, len(groups), cfg.live_groups)]
    return [Round(model, batch_size, repeat, cfg.modes) for chunk in chunks for repeat in range(cfg.repeats)
            for model, batch_size in chunk]


def needs_fresh_workers(cfg: BenchConfig, repeat: int, first_round: int | None) -> bool:
    """Does round `repeat` of a cell group start fresh workers, when its current ones started in round
    `first_round` (None: it has none)? After `rounds_per_process` rounds, and at the last round of the
    first pass: every cell then has two pairs of workers at least (results/stats.design_effect can
    weigh their disagreement) and a warm compile (a fresh worker's, from the cache round 0 filled)."""
    if first_round is None:
        return True
    return repeat - first_round >= cfg.rounds_per_process or (repeat == cfg.repeats - 1 and first_round < repeat)


def prepares_one_at_a_time(cfg: BenchConfig) -> bool:
    """Do a round's fresh workers prepare one after another rather than side by side? On a CPU: the
    workers share the cores the models run on, and a worker warming up beside another's compile is
    starved (its OpenMP threads descheduled: three eager ResNet-50 calls took 5.5-6.4 s beside a
    warm compile, 0.1 s each alone), so its warm-up measures nothing and slows the compile it waits
    on. On a GPU the compile's host threads and the eager worker's device work overlap: side by
    side."""
    return cfg.device == "cpu"


def pair_start(cfg: BenchConfig, repeat: int) -> int:
    """The round in which the workers of round `repeat` of the first pass started."""
    first = None
    for r in range(repeat + 1):
        if needs_fresh_workers(cfg, r, first):
            first = r
    return first


def study_jobs(cfg: BenchConfig) -> list[Job]:
    """Every study process of `cfg`, in run order. The whole-model compile runs before
    "cache-artifacts": it leaves the artifacts that one loads."""
    jobs = []
    if cfg.serving_batch_sizes:
        jobs += [Job("serving", model, cfg.serving_batch_sizes[0], setting) for model in cfg.models
                 for setting in SERVING_SETTINGS]
    if cfg.compile_strategies:
        jobs += [Job("compile-cost", model, cfg.batch_sizes[0], strategy) for model in cfg.models
                 for strategy in ("whole", *cfg.compile_strategies)]
    return jobs


def read_cell_rows(cfg: BenchConfig, results_path: Path) -> list:
    """The results file's rows (none if it does not exist); refuses rows of other settings."""
    if not results_path.exists():
        return []
    rows = read_results(results_path).rows
    labels = sorted({row.label for row in rows} - {cfg.label})
    if labels:  # e.g. "A100" and "a100!" share the folder a100/: one label's rows are not the other's
        raise SettingsMismatchError(f"{results_path} holds rows of the label {labels[0]!r}, not {cfg.label!r}; "
                                    "choose another label or --results file")
    if {row.settings for row in rows} - {cfg.settings_fingerprint()}:
        raise SettingsMismatchError(
            f"{results_path} holds rows measured with other settings (size, dtype, weights, warmup, "
            f"iterations, blocks, image or device differ); choose another --results file")
    return rows


def done_keys(rows: list, retry_failed: bool = False) -> set:
    """Keys of the processes a results file holds (only its ok ones, with retry_failed)."""
    return {row.key for row in rows if row.status == "ok" or not retry_failed}


def round_pending(cfg: BenchConfig, round_: Round, done: set) -> bool:
    return any(run_key(cfg, (job.model, job.batch_size, job.option, job.repeat)) not in done
               for job in round_.jobs)


def job_row(cfg: BenchConfig, job: Job) -> tuple[type[Row], dict]:
    """The row type a job of `cfg` writes, and that row's identity fields (its key among them)."""
    if job.kind == "cell":
        return BenchResult, cell_fields(cfg, job.model, job.batch_size, job.option, cfg.device, job.repeat)
    row_type, _, fields = STUDY_KINDS[job.kind]
    return row_type, fields(cfg, job.model, job.option, cfg.device)


def study_key(cfg: BenchConfig, job: Job) -> tuple:
    row_type, identity = job_row(cfg, job)
    return row_type, row_type(**identity, status="crashed").key


def pending_study_jobs(cfg: BenchConfig, results_path: Path) -> list[Job]:
    done = set()
    for row_type, path_of, _ in STUDY_KINDS.values():
        done |= {(row_type, row.key) for row in read_rows(path_of(results_path), row_type).rows
                 if row.settings == cfg.settings_fingerprint()}
    return [job for job in study_jobs(cfg) if study_key(cfg, job) not in done]
