"""The one sweep loop: every job of a profile (its cells in rounds, then its studies) measured through
a launcher, each row appended the moment it exists. No torch here.

The loop owns resume, writing, progress, the adaptive extra rounds and the studies; a launcher
(launchers/) only starts units of work and hands their rows back (docs/architecture.md).

Rounds are spread over the run and extra rounds for precision added within the budget as
docs/method.md describes (adaptive.py); it stops on precision, never on significance. The budget's
clock is read from the rows (the time their rounds covered), so it is the profile's: a second
invocation of a finished sweep finds the budget where the first left it. A group's rounds, and a
study's jobs of one model, run one after another.
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..measure.task import CELL, Job
from ..messages import counted, terminal_text
from ..paths import reports_root
from ..results.rows import BenchResult, timed_s
from ..results.writer import ResultsWriter
from . import adaptive
from ..results.race import SELECTION_ROUNDS
from ..results.sweep_time import seconds_spent
from .fit import fitted
from .launchers import Launcher
from .jobs import (Round, SettingsMismatchError, cores_differing, done_keys, failure_row,
                   first_rounds, pending_study_jobs, read_cell_rows, retryable_failures, round_pending, rows_path,
                   study_jobs, threads_differing, threads_recorded, unit_group)


@dataclass
class SweepSummary:
    results_path: Path
    total: int  # rounds of the first pass (cell groups x repeats), plus study processes
    skipped: int = 0  # finished in an earlier run
    statuses: dict = field(default_factory=dict)  # status -> count for processes run now
    rounds: int = 0  # rounds measured now (each a process per configuration)
    study_runs: int = 0  # study processes measured now
    extra_rounds: int = 0  # of the rounds, those added for precision
    seconds: float = 0.0  # wall time of this run
    timed_s: float = 0.0  # of it, timed calls (the sum of every sample)
    cold_compile_s: float = 0.0  # of it, round 0's compiles (the first compile of a cell, usually cold)
    # processes whose row in the file did not end ok (timeout, crashed, ...) and that a re-run skips but
    # --retry-failed measures again (jobs.retryable_failures), this run's own failures among them
    not_retried: int = 0

    def line(self) -> str:
        """The sweep's closing line: what it measured (rounds), what it left out to fit the budget, what
        failed, how much of its time was timed calls; what to do next is the run's one next step (the
        report prints it after the answers)."""
        measured = (counted(self.rounds, "round") + (f" and {counted(self.study_runs, 'study process', 'study processes')}"
                                                     if self.study_runs else "")) if self.rounds or self.study_runs \
            else "nothing"
        extra = f" ({self.extra_rounds} extra for precision)" if self.extra_rounds and self.rounds else ""
        left_out = self.statuses.get("skipped", 0)
        left = f"; {counted(left_out, 'configuration')} left out to fit the budget" if left_out else ""
        failed = (f"; {self.not_retried} in the file failed: --retry-failed measures them again"
                  if self.not_retried else "")
        share = ""
        if self.timed_s and self.seconds > self.cold_compile_s:
            share = (f"; timed calls {self.timed_s / self.seconds:.0%} of {_seconds(self.seconds)} "
                     f"({self.timed_s / (self.seconds - self.cold_compile_s):.0%} without the first compiles)")
        return f"{measured} measured{extra}, {self.skipped} already done{left}{failed}{share} -> {self.results_path}"

    def count(self, rows: list) -> None:
        for row in rows:
            self.statuses[row.status] = self.statuses.get(row.status, 0) + 1
            self.timed_s += timed_s(row)
            if getattr(row, "repeat", None) == 0 and getattr(row, "compile_s", None):
                self.cold_compile_s += row.compile_s


def _seconds(value: float) -> str:
    """"0.4 s" under ten seconds ("0 s of 10 s (4%)" read as a contradiction), "212 s" above."""
    return f"{value:.1f} s" if value < 9.95 else f"{value:.0f} s"


def default_results_path(cfg: BenchConfig, root: str | Path | None = None) -> Path:
    """<root>/<label slug>/results.jsonl; root defaults to paths.reports_root()."""
    return Path(root or reports_root()) / cfg.slug() / "results.jsonl"


def unit_line(unit: Round | Job, row) -> str:
    """One line per process on the terminal."""
    if not isinstance(row, BenchResult):
        return f"{unit.name}: {row.status} {row.error[:160]}".rstrip()
    name = f"{row.model} bs={row.batch_size} {row.configuration} #{row.repeat}"
    if row.status != "ok":
        return f"{name}: {row.status.upper()} {row.error[:160]}"
    text = f"{name}: {row.latency_ms_median:.2f} ms median of {len(row.samples_s)} calls"
    if row.compile_s is not None:
        text += f" (compile {row.compile_s:.1f} s)"
    return text


class _Schedule:
    """Which unit starts next: the first pass's rounds in order, then extra rounds for precision (once
    every first round has started), then the studies' jobs (once no cell round is left); never a unit
    of a group (unit_group) already being measured."""

    def __init__(self, cfg: BenchConfig, firsts: list[Round], studies: list[Job], rows: list):
        self.cfg, self.firsts, self.studies, self.rows = cfg, list(firsts), list(studies), rows
        self.later = Counter(round_.group for round_ in firsts)  # cell group -> first-pass rounds to start
        self.extra_possible = cfg.target_halfwidth > 0 and cfg.budget_min > 0
        self.last_group = None  # the cell group of the round that ended last
        self.left_out: set[str] = set()  # configurations the budget left out of the selection rounds (fit.py)
        self.skipped_rows: list = []  # their rows, for the loop to write

    def next(self, busy: set, elapsed_s: float) -> tuple[Round | Job, bool] | None:
        """(the unit to start, whether it is an extra round), or None while nothing may start."""
        for index, round_ in enumerate(self.firsts):
            if unit_group(round_) not in busy:
                self.later[round_.group] -= 1
                del self.firsts[index]
                raced = adaptive.race_round(self.cfg, self.rows, round_)  # eager and the contenders
                if raced is not None and raced.repeat < SELECTION_ROUNDS:  # what the budget holds (fit.py)
                    raced = self._fitted(raced, elapsed_s)
                return (raced, False) if raced is not None else self.next(busy, elapsed_s)
        if self.firsts:
            return None  # the first pass's next rounds wait for their groups
        cells_busy = {group[1:] for group in busy if group[0] == "cell"}
        if self.extra_possible:
            extra = adaptive.next_round(self.cfg, self.rows, elapsed_s, self.last_group, cells_busy)
            if extra is not None:
                return extra, True
        if cells_busy:
            return None  # the studies come after every round (an extra round may still follow one)
        for index, job in enumerate(self.studies):
            if unit_group(job) not in busy:
                return self.studies.pop(index), False
        return None

    def _fitted(self, round_: Round, elapsed_s: float) -> Round:
        """The selection round without the configurations the budget cannot hold; theirs are skipped rows."""
        later = [r for r in self.firsts if r.repeat < SELECTION_ROUNDS]
        fit = fitted(self.cfg, self.rows, round_, later, elapsed_s, self.left_out)
        # words for the page, with the parameter that changes it in brackets (a reader sees "the 8.75-min
        # budget", never a bare YAML key)
        budget = (f"left out to fit the {self.cfg.budget_min:g}-min budget (budget_min) at this machine's "
                  "measured costs")
        for name in fit.skipped:  # rounded up: "would take about 14 min" beside budget_min 14 read as a contradiction
            why = (f"{budget}, as for the models measured before (each model races the same configurations)"
                   if name in self.left_out else
                   f"{budget}: racing every configuration would take about {math.ceil(fit.full_s / 60):.0f} min of sweep")
            job = Job(CELL, round_.model, round_.batch_size, name, round_.repeat)
            self.skipped_rows.append(failure_row(self.cfg, job, "skipped", why, 0.0))
        self.left_out |= set(fit.skipped)
        return fit.round

    def take_skipped(self) -> list:
        rows, self.skipped_rows = self.skipped_rows, []
        return rows

    def keep(self, round_: Round) -> bool:
        """Keep the group's workers after this round: it has first-pass rounds to come, or may get extras."""
        return self.later[round_.group] > 0 or self.extra_possible


def run_sweep(cfg: BenchConfig, results_path: str | Path | None = None, retry_failed: bool = False,
              progress: bool = True, after_round=None, launcher: Launcher | None = None, position: int = 0) -> SweepSummary:
    """Measure every pending job of `cfg` through `launcher` (default: this machine, launchers/local.py):
    its first rounds, then extra rounds for precision within the budget, then its studies; each row is
    appended to `results_path` (a study's to its own file next to it) as its unit ends.
    `after_round(round_)`, if given, runs after each round, its time left out of the budget
    (benchmarks/method_check.py interleaves an independent measurement with the rounds)."""
    from .launchers.local import LocalLauncher

    results_path = Path(results_path) if results_path else default_results_path(cfg)
    started = time.perf_counter()
    with ResultsWriter(results_path, cfg.users_folders()) as writer:
        rows = read_cell_rows(cfg, results_path)
        if launcher is None or isinstance(launcher, LocalLauncher):  # a cluster's rows are its hosts'
            _refuse_other_cores(rows, results_path)
        firsts = [round_ for round_ in first_rounds(cfg) if round_pending(cfg, round_, done_keys(rows, retry_failed))]
        studies = pending_study_jobs(cfg, results_path, retry_failed)
        total = len(first_rounds(cfg)) + len(study_jobs(cfg))
        summary = SweepSummary(results_path, total=total, skipped=total - len(firsts) - len(studies))
        schedule = _Schedule(cfg, firsts, studies, rows)
        clock = SweepClock.of(cfg, results_path, rows) if progress and (firsts or studies) else None
        bar = progress_bar(clock, progress, position)
        outside_s = 0.0  # after_round's time, not the sweep's
        launcher = launcher or LocalLauncher(cfg, results_path)
        in_flight: dict[tuple, Round | Job] = {}  # unit_group -> the unit being measured
        launched: dict[tuple, float] = {}  # unit_group -> when its unit started, epoch seconds

        def write(unit, new: list) -> None:
            """A study job's rows to its study's file, a round's to the results file."""
            if isinstance(unit, Round):
                write_cells(new)
            else:
                with ResultsWriter(rows_path(results_path, unit), cfg.users_folders()) as study_writer:
                    for row in new:
                        study_writer.append(row)

        def write_cells(new: list) -> None:
            """Cell rows to the results file; each replaces the row of its key in `rows`."""
            for row in new:
                writer.append(row)
            keys = {row.key for row in new}
            rows[:] = [row for row in rows if row.key not in keys] + new

        try:
            while True:
                while len(in_flight) < launcher.capacity:
                    # the budget's clock is the rows' (sweep_time.seconds_spent): a re-run reads where it stopped
                    elapsed_s = seconds_spent(rows, list(launched.values()))
                    chosen = schedule.next(set(in_flight), elapsed_s)
                    skipped = schedule.take_skipped()
                    write_cells(skipped)
                    summary.count(skipped)
                    if chosen is None:
                        break
                    unit, extra = chosen
                    summary.extra_rounds += extra
                    if bar is not None:
                        bar.set_description(unit.name)
                    in_flight[unit_group(unit)] = unit
                    launched[unit_group(unit)] = time.time()
                    launcher.start(unit, keep=isinstance(unit, Round) and schedule.keep(unit))
                if not in_flight:
                    break
                for unit, new in launcher.finished():
                    new = [row.finite() for row in new]  # a NaN is a failure, counted and shown as one
                    del in_flight[unit_group(unit)]
                    launched.pop(unit_group(unit), None)
                    write(unit, new)
                    summary.count(new)
                    if isinstance(unit, Round):
                        summary.rounds += 1
                    else:
                        summary.study_runs += 1
                    if isinstance(unit, Round):
                        schedule.last_group = unit.group
                        if after_round is not None:
                            aside = time.perf_counter()
                            after_round(unit)
                            outside_s += time.perf_counter() - aside
                    if bar is not None:
                        for row in new:
                            bar.write(terminal_text(unit_line(unit, row)))  # error texts: shown, never run
                        clock.show(bar, seconds_spent(rows, list(launched.values())))
                write_cells(launcher.take_ended_rows())  # earlier rows, with the exit codes of workers that ended
            if bar is not None:
                clock.show(bar, clock.total_s)  # the sweep ended: whatever the estimate, it is done
        finally:
            write_cells(launcher.close())  # the same, for the workers closed at the end
            if bar is not None:
                bar.close()
    summary.seconds = time.perf_counter() - started - outside_s
    # with --retry-failed the failed ones were measured again now: a failure left is of this run, and a
    # second --retry-failed would meet the same fault
    summary.not_retried = 0 if retry_failed else retryable_failures(cfg, rows)
    return summary


def _refuse_other_cores(rows: list, results_path: Path) -> None:
    """A resume here on another number of CPUs, or of torch threads, than the file's rows of this CPU
    had (jobs.cores_differing, jobs.threads_differing) is refused, as rows of other settings are."""
    from ..measure import environment

    cpu = environment.cpu_name()
    differing = cores_differing(rows, cpu, environment.ALLOWED_CPUS)
    if differing:
        raise SettingsMismatchError(f"{results_path} holds rows measured on another number of CPUs ({differing}: "
                                    "taskset or a cpuset); choose another --results file, or run on as many CPUs "
                                    "as it was measured on")
    if not threads_recorded(rows, cpu):  # nothing to compare: no interpreter started to ask
        return
    differing = threads_differing(rows, cpu, environment.worker_torch_threads())
    if differing:
        raise SettingsMismatchError(f"{results_path} holds rows measured with another number of torch threads "
                                    f"({differing}: OMP_NUM_THREADS or MKL_NUM_THREADS); choose another --results "
                                    "file, or set the threads it was measured with")


def run_sweeps(configs: list[BenchConfig], results_paths: list, launchers: list, retry_failed: bool = False,
               progress: bool = True) -> list[SweepSummary]:
    """Several profiles' sweeps at once, each its own loop (run_sweep) through its own launcher
    (`launchers[i]` measures `configs[i]` into `results_paths[i]`); the loops wait on their launchers
    (a Ray cluster's actors), not on this process. A profile whose results file is refused stops all
    before any runs. One SweepSummary per profile."""
    for cfg, path in zip(configs, results_paths, strict=True):
        read_cell_rows(cfg, path)

    def sweep(index: int) -> SweepSummary:
        return run_sweep(configs[index], results_paths[index], retry_failed, progress, launcher=launchers[index],
                         position=index)

    if len(configs) == 1:
        return [sweep(0)]
    with ThreadPoolExecutor(len(configs)) as pool:
        return list(pool.map(sweep, range(len(configs))))


def run_sweeps_on_ray(configs: list[BenchConfig], address: str = "auto", results_paths: list | None = None,
                      retry_failed: bool = False, progress: bool = True, cpus_per_cell: int = 1,
                      max_retries: int = 2, env: dict | None = None, round_runner=None) -> list[SweepSummary]:
    """Every profile's sweep at once on the Ray cluster at `address` (launchers/ray.py, which connects
    and places; "local:N" starts a local one). `env`: extra environment variables for the measuring
    processes; `round_runner`: rounds.run_round, or a test's stand-in."""
    from .launchers.ray import ray_launchers

    results_paths = list(results_paths) if results_paths is not None else [None] * len(configs)
    if len(results_paths) != len(configs):
        raise ValueError(f"results_paths: {len(results_paths)} paths for {len(configs)} configs; "
                         "allowed: one per config")
    paths = [Path(p) if p else default_results_path(cfg) for cfg, p in zip(configs, results_paths)]
    with ray_launchers(configs, address, paths, cpus_per_cell, max_retries, env, round_runner) as launchers:
        return run_sweeps(configs, paths, launchers, retry_failed, progress)


@dataclass(frozen=True)
class SweepClock:
    """What the progress bar counts: the sweep's seconds (the rows' clock, a resume's included: sweep_time),
    against a total fixed when the sweep starts, so the bar never grows: the longer of the budget, which
    extra rounds fill, and plan's estimate of the first pass as the budget fits it (plan.PlanFigures)."""

    total_s: float
    spent_s: float

    @classmethod
    def of(cls, cfg: BenchConfig, results_path: Path, rows: list) -> "SweepClock":
        from .plan import PlanFigures

        figures = PlanFigures.of(cfg, results_path)
        spent = seconds_spent(rows)
        first_pass = figures.cut_total if figures.cut else figures.total
        budget = cfg.budget_min * 60.0 if figures.budgeted else 0.0
        return cls(max(spent + first_pass, budget, 1.0), spent)

    def show(self, bar, spent_s: float) -> None:
        """The bar at `spent_s` seconds of sweep (never past its total)."""
        bar.n = min(round(spent_s), round(self.total_s))
        bar.refresh()


def progress_bar(clock: SweepClock | None, enabled: bool, position: int = 0):
    """The sweep's bar, in seconds of sweep against a total that does not move (SweepClock): on a terminal
    a text bar on stderr; in a notebook kernel (tqdm.auto: JupyterLab, bench_utils.race) a widget that
    stays in the cell's output, as do the lines written above it."""
    if not enabled or clock is None:
        return None
    from tqdm.auto import tqdm

    minutes = max(1, round(clock.total_s / 60))
    # shown after a second: a sweep with nothing left ends before it
    return tqdm(total=round(clock.total_s), initial=round(clock.spent_s), unit="s", file=sys.stderr,
                dynamic_ncols=True, position=position, delay=1.0,
                bar_format="{desc}{percentage:3.0f}%|{bar}| {elapsed} of about " + f"{minutes} min")
