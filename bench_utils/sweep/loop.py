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
from .jobs import (Round, SettingsMismatchError, cores_differing, done_keys, eager_after_selection, failure_row,
                   first_rounds, pending_study_jobs, read_cell_rows, retryable_failures, round_pending, rows_path,
                   study_jobs, threads_differing, threads_recorded, unit_group)


@dataclass
class SweepSummary:
    results_path: Path
    total: int  # jobs: rounds of the first pass (cell groups x repeats), plus study processes
    skipped: int = 0  # finished in an earlier run
    statuses: dict = field(default_factory=dict)  # status -> count for processes run now
    extra_rounds: int = 0  # rounds added for precision
    seconds: float = 0.0  # wall time of this run
    timed_s: float = 0.0  # of it, timed calls (the sum of every sample)
    cold_compile_s: float = 0.0  # of it, round 0's compiles (the first compile of a cell, usually cold)
    target_halfwidth: float = 0.0  # the profile's precision target (relative half-width; 0: none)
    halfwidths: dict = field(default_factory=dict)  # cell group -> its widest contender's half-width at the end
    to_target: adaptive.ToTarget | None = None  # what narrowing them to the target would take (adaptive.rounds_to_target)
    max_repeats: int = 0  # the profile's rounds per cell at most
    margin: float = 0.0  # the verdict's margin as a half-width (worthwhile - 1), where wider than the target
    to_margin: adaptive.ToTarget | None = None  # ... and what narrowing them to it would take
    # processes whose row in the file did not end ok (timeout, crashed, ...) and that a re-run skips but
    # --retry-failed measures again (jobs.retryable_failures), this run's own failures among them
    not_retried: int = 0

    def line(self) -> str:
        # a job is a round of a cell group (a process per configuration) or a study's process: the
        # statuses count processes, so they are said as processes, and the budget's left-out
        # configurations (rows no process measured) apart from them
        measured = {status: n for status, n in self.statuses.items() if status != "skipped"}
        processes = sum(measured.values())
        done = (f"; {counted(processes, 'process', 'processes')} measured: "
                + ", ".join(f"{n} {status}" for status, n in sorted(measured.items())) if processes else
                ", nothing new")
        extra = (f"; {counted(self.extra_rounds, 'extra round')} for precision among them"
                 if self.extra_rounds and processes else "")
        left_out = self.statuses.get("skipped", 0)
        left = (f"; {counted(left_out, 'configuration')} left out of a round to fit the budget (budget_min)"
                if left_out else "")
        share = ""
        if self.timed_s and self.seconds > self.cold_compile_s:
            share = (f"; timed calls {_seconds(self.timed_s)} of {_seconds(self.seconds)} "
                     f"({self.timed_s / self.seconds:.0%}; "
                     f"{self.timed_s / (self.seconds - self.cold_compile_s):.0%} without the first compiles)")
        short = self._short()
        failed = (f"; {counted(self.not_retried, 'measuring process', 'measuring processes')} in the file did not "
                  "end ok: --retry-failed measures them again" if self.not_retried else "")
        return (f"{counted(self.total, 'job')}: {self.skipped} already done{done}{extra}{left}{share}{short}{failed}"
                f" -> {self.results_path}")

    def _short(self) -> str:
        """The groups the sweep left wider than its precision target (the budget or max_repeats ended
        them): a decided verdict can rest on them, but a re-run with more budget narrows them."""
        wide = sorted(width for width in self.halfwidths.values() if width > self.target_halfwidth)
        if not self.target_halfwidth or not wide:
            return ""
        widest = f"±{wide[-1]:.1%}" if wide[-1] < float("inf") else "no interval"
        return (f"; {len(wide)} of {counted(len(self.halfwidths), 'cell group')} left wider than the "
                f"±{self.target_halfwidth:.0%} target (widest {widest}): {self._narrowing()}")

    def _narrowing(self) -> str:
        """What narrows them: the rounds their spread asks for, in minutes of this machine, and the budget."""
        more = self.to_target
        if more is None:
            return "raise budget_min or max_repeats and run again to narrow them"
        if not math.isfinite(more.rounds):  # a spread past MAX_REPEATS rounds, or a group of one round
            return ("their rounds spread too widely for more of them to narrow every one to it (or too few to "
                    "tell): raise budget_min or max_repeats and run again, or run on a quieter machine")
        reruns = [more]
        text = f"at the spread of their rounds about {self._rerun(more)} would narrow them to it"
        margin = self.to_margin
        if margin is not None and math.isfinite(margin.rounds) and margin.rounds < more.rounds:
            # the margin's width: an interval no wider cannot hold both a worthwhile gain and none
            text += f"; to ±{self.margin:.0%}, the margin's width, about {self._rerun(margin)}"
            reruns.append(margin)
        where = (" (max_repeats is set in the parameters file)"
                 if any(r.max_repeats > self.max_repeats for r in reruns) else "")
        return f"{text}; a rerun keeps the rounds measured{where}"

    def _rerun(self, more: adaptive.ToTarget) -> str:
        repeats = f", max_repeats: {more.max_repeats}" if more.max_repeats > self.max_repeats else ""
        return (f"{counted(round(more.rounds), 'more round')} (about {max(1, round(more.seconds / 60))} min; --budget-min "
                f"{more.budget_min:g}{repeats})")

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
        bar = progress_bar(len(firsts) + len(studies), progress, position)
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
                        grow(bar, extra)
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
                        schedule.last_group = unit.group
                        if after_round is not None:
                            aside = time.perf_counter()
                            after_round(unit)
                            outside_s += time.perf_counter() - aside
                    if bar is not None:
                        for row in new:
                            bar.write(terminal_text(unit_line(unit, row)))  # error texts: shown, never run
                        bar.update(1)
                write_cells(launcher.take_ended_rows())  # earlier rows, with the exit codes of workers that ended
        finally:
            write_cells(launcher.close())  # the same, for the workers closed at the end
            if bar is not None:
                bar.close()
    summary.seconds = time.perf_counter() - started - outside_s
    summary.target_halfwidth = cfg.target_halfwidth
    # with --retry-failed the failed ones were measured again now: a failure left is of this run, and a
    # second --retry-failed would meet the same fault
    summary.not_retried = 0 if retry_failed else retryable_failures(cfg, rows)
    racing = adaptive.contenders(cfg, rows)  # the races, once: the widths and both prices read them
    summary.halfwidths = {group: adaptive.widest_halfwidth(records) for group, records in racing.items()}
    eager_worker = eager_after_selection(cfg)  # in each later round: its price counts it
    summary.to_target = adaptive.rounds_to_target(rows, racing, cfg.target_halfwidth, eager_worker)
    summary.max_repeats = cfg.max_repeats
    margin = round(cfg.worthwhile - 1.0, 9)  # 1.10 - 1 is 0.10000000000000009
    if margin > cfg.target_halfwidth > 0:
        summary.margin, summary.to_margin = margin, adaptive.rounds_to_target(rows, racing, margin, eager_worker)
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


def progress_bar(total: int, enabled: bool, position: int = 0):
    """The sweep's bar: on a terminal a text bar on stderr; in a notebook kernel (tqdm.auto: JupyterLab,
    bench_utils.race) a widget that stays in the cell's output, as do the lines written above it."""
    if not enabled:
        return None
    from tqdm.auto import tqdm

    # shown after a second: a sweep with nothing left ends before it, with no "0job [00:00, ?job/s]" line
    return tqdm(total=total, unit="job", file=sys.stderr, dynamic_ncols=True, position=position, delay=1.0)


def grow(bar, extra: int) -> None:
    """`extra` more jobs on the bar (extra rounds for precision): a notebook's widget is told its new
    maximum too (tqdm.notebook sets it only when made)."""
    if extra:
        bar.total += extra
        widget = getattr(bar, "container", None)
        if widget is not None:
            widget.children[1].max = bar.total
