"""What a measuring process is asked to do: a `Job` (one process's work) and the `Task` a worker is
sent for it, the job with the settings it runs under, as one typed object: the BenchConfig validated
once, where the profile was read, travels to the worker whole (pickled over its pipe, or to a Ray node),
never re-parsed. No torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..paths import inside

CELL = "cell"  # a Job's kind for one mode of a cell in one round; any other kind is a study's name
TRACES_DIR, LOGS_DIR = "traces", "logs"  # in the results folder: profiler traces, workers' output


@dataclass(frozen=True)
class Job:
    """One measuring process's work: a cell's mode in one round, or one process of a study."""

    kind: str  # CELL, or a registered study's name (results/studies.py)
    model: str
    batch_size: int
    option: str  # cell: the mode; a study: its option (serving: the dynamic setting)
    repeat: int = 0  # cell: the round

    @property
    def name(self) -> str:
        """As people read it and as its log file is named: "vit-bs1-default-r0", "serving-vit-auto"."""
        if self.kind == CELL:
            return f"{self.model}-bs{self.batch_size}-{self.option}-r{self.repeat}"
        return f"{self.kind}-{self.model}-{self.option}"


@dataclass(frozen=True)
class Task:
    """A job as a worker receives it: the profile's settings, the results file its rows belong to (its
    folder holds the logs, traces and a study's artifacts) and the runner's environment of now."""

    cfg: BenchConfig
    job: Job
    results_path: Path
    environ: dict = field(default_factory=dict)
    # the compiler cache the process compiles with, its own (TORCHINDUCTOR_CACHE_DIR; Triton's under it):
    # a study's empty one (the runner removes it), a cell's (paths.cell_cache_dir)
    cache_dir: str | None = None
    # a folder of the runner's, removed by the runner whatever ends the worker: a package's build goes in
    # it (a worker killed mid-build, by a timeout or the runner's Ctrl-C, removes nothing)
    scratch_dir: str | None = None

    def trace_path(self, repeat: int) -> Path:
        """traces/<job name>.json in the results folder: the profiler's trace of round `repeat` (inside
        the results folder: a traces/ that is a link out of it is refused)."""
        folder = Path(self.results_path).parent
        return inside(folder / TRACES_DIR / f"{replace(self.job, repeat=repeat).name}.json", folder)


@dataclass(frozen=True)
class NextRound:
    """Another round of a prepared cell, as the runner asks for it (sweep/rounds.py)."""

    repeat: int
    # on a CPU, time the compiled template's warm compile first (once per template): the runner asks it
    # of the race's leaders only, one per way of serving (sweep/jobs.Round.leaders); another contender's
    # would cost 5-15 s of a slow CPU's budget (with freezing: benchmarks/README.md#zen3-leader-warm-compiles)
    # for a figure no page shows
    time_warm_compile: bool = True


@dataclass(frozen=True)
class Block:
    """One timed block of a prepared cell, as the runner asks for it (sweep/rounds.py)."""

    after_switch: bool  # another worker ran since this one's last block: one untimed call first
    hand_over: bool  # the next turn is another worker's: give the CUDA cache back after the block


def log_path(results_path: Path, job: Job) -> Path:
    """Where a worker's output goes: logs/<first job's name>.log in the results folder (a logs/ that is
    a link out of it is refused)."""
    return inside(Path(results_path).parent / LOGS_DIR / f"{job.name}.log", Path(results_path).parent)
