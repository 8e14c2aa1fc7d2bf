"""Run a profile: its cells in rounds, then its studies, every job in a measuring process of its own,
each row appended the moment it exists. No torch import here.

A round measures one model and batch size once per mode: a worker per mode (none ever runs another
mode), prepared in the group's first round (built, compiled, warmed up: nothing is timed then; side
by side on a GPU, one at a time on a CPU, jobs.prepares_one_at_a_time) and kept for
`rounds_per_process` rounds (sessions.py), taking turns timing blocks in ABBA order (eager, compiled,
compiled, eager, ...) with `settle_s` of quiet before each handoff, so each mode's block i is timed
moments from the others'. Rounds are spread over the run (round r of every group of a chunk of
`live_groups` groups before round r + 1), and a cell's interval is taken over its rounds
(results/stats.py): the change of the machine's state between stretches stays inside it.

With `target_halfwidth` and `budget_min`, after the first `repeats` rounds the sweep keeps adding a
round to the cell whose speedup interval is widest, until every cell is within its target, reaches
`max_repeats`, or the budget would be passed (adaptive.py). It stops on precision, never on
significance. Re-running resumes: rounds with rows in the results file are not measured again.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..paths import inside, reports_root
from ..results.rows import BenchResult, Row
from ..results.writer import ResultsWriter
from . import adaptive
from .jobs import (STUDY_KINDS, Job, Round, SettingsMismatchError, done_keys, first_rounds, job_row,
                   needs_fresh_workers, pending_study_jobs, prepares_one_at_a_time, read_cell_rows, round_pending,
                   study_jobs)
from .sessions import Sessions, log_path
from .workers import Worker, WorkerLost

__all__ = ["SettingsMismatchError", "run_profile", "run_sweep", "run_round", "default_results_path"]
TRACES_DIR = "traces"


@dataclass
class SweepSummary:
    results_path: Path
    total: int  # rounds of the first pass (cells x repeats), plus study processes
    skipped: int = 0  # finished in an earlier run
    statuses: dict = field(default_factory=dict)  # status -> count for processes run now
    extra_rounds: int = 0  # rounds added for precision
    seconds: float = 0.0  # wall time of this run
    timed_s: float = 0.0  # of it, timed calls (the sum of every sample)
    cold_compile_s: float = 0.0  # of it, round 0's compiles (the first compile of a cell, usually cold)

    def line(self) -> str:
        done = ", ".join(f"{n} {s}" for s, n in sorted(self.statuses.items())) or "nothing new"
        extra = f", {self.extra_rounds} extra round(s) for precision" if self.extra_rounds else ""
        share = ""
        if self.timed_s and self.seconds > self.cold_compile_s:
            share = (f"; timed calls {self.timed_s:.0f} s of {self.seconds:.0f} s ({self.timed_s / self.seconds:.0%}; "
                     f"{self.timed_s / (self.seconds - self.cold_compile_s):.0%} without the first compiles)")
        return f"{self.total} jobs: {self.skipped} already done, {done}{extra}{share} -> {self.results_path}"

    def count(self, rows: list) -> None:
        for row in rows:
            self.statuses[row.status] = self.statuses.get(row.status, 0) + 1
            self.timed_s += sum(getattr(row, "samples_s", None) or [])
            if getattr(row, "repeat", None) == 0 and getattr(row, "compile_s", None):
                self.cold_compile_s += row.compile_s


def default_results_path(cfg: BenchConfig, root: str | Path | None = None) -> Path:
    """<root>/<label slug>/results.jsonl; root defaults to paths.reports_root()."""
    return Path(root or reports_root()) / cfg.slug() / "results.jsonl"


def trace_path(results_dir: Path, job: Job) -> Path:
    """Where a process's profiler trace goes (profile: true): traces/<job name>.json in the results folder."""
    return inside(results_dir / TRACES_DIR / f"{job.name}.json", results_dir / TRACES_DIR)


def failure_row(cfg: BenchConfig, job: Job, status: str, error: str, duration_s: float) -> Row:
    """The row of a job (a cell's mode or a study process) whose worker or task was lost."""
    row_type, identity = job_row(cfg, job)
    return row_type.failed(identity, status, error, duration_s)


def _cell_payload(cfg: BenchConfig, job: Job, results_dir: Path) -> dict:
    return {"config": cfg.to_dict(), "model": job.model, "batch_size": job.batch_size, "mode": job.option,
            "repeat": job.repeat, "trace": str(trace_path(results_dir, job)), "environ": dict(os.environ)}


def run_round(cfg: BenchConfig, round_: Round, results_dir: Path, sessions: Sessions | None = None,
              keep: bool = False) -> list[BenchResult]:
    """Measure one round; a row per mode, always (a failure or a lost worker is its row's status).
    With `sessions` and `keep`, the group's workers stay alive for its next round (sessions.py);
    without, the round's workers are its own and end with it."""
    own = sessions is None
    sessions = Sessions(cfg, results_dir) if own else sessions
    session, fresh = sessions.open(round_)
    jobs = round_.jobs
    workers = {job: session.workers[job.option] for job in jobs}
    rows: dict[Job, BenchResult] = {}

    def reply(job: Job, answer: tuple) -> bool:
        """True while the job goes on; its row when it ended."""
        kind, value = answer
        if kind in ("failed", "row"):
            rows[job] = BenchResult.from_dict(json.loads(value))
            return False
        return True

    def answered(job: Job, answer) -> bool:
        """`answer()` (the worker's reply) through `reply`; a lost worker is its row."""
        try:
            return reply(job, answer())
        except WorkerLost as lost:
            rows[job] = failure_row(cfg, job, lost.status, lost.error, workers[job].seconds)
            return False

    def ask(job: Job, command: str, payload=None) -> bool:
        return answered(job, lambda: workers[job].ask(command, payload))

    try:
        # building and compiling are not timed; fresh workers prepare one at a time on a CPU
        waves = [[job] for job in jobs] if fresh and prepares_one_at_a_time(cfg) else [jobs]
        ready = set()
        for wave in waves:
            for job in wave:
                if len(waves) > 1:
                    workers[job].new_deadline()  # its timeout_s counts from its own turn to prepare
                if fresh:
                    workers[job].send("cell", _cell_payload(cfg, job, results_dir))
                else:
                    workers[job].send("round", {"repeat": job.repeat, "trace": str(trace_path(results_dir, job))})
            ready |= {job for job in wave if answered(job, workers[job].receive)}
        live = [job for job in jobs if job in ready]
        previous = None
        for block in range(cfg.blocks):
            for job in (live if block % 2 == 0 else live[::-1]):  # ABBA: drift cancels in each pair
                if job in rows:
                    continue
                switched = previous is not job
                if switched:
                    time.sleep(cfg.settle_s)  # the last worker's OpenMP threads stop spinning
                previous = job
                ask(job, "block", {"after_switch": switched})
        for job in live:
            if job not in rows:
                ask(job, "finish")
        for job in live:  # after every row is safe: a crash in the profiler's pass costs only the profile
            if cfg.profiled(round_.batch_size, round_.repeat) and rows[job].status == "ok":
                rows[job] = _with_profile(rows[job], workers[job])
    except BaseException:
        sessions.close(round_.group)
        raise
    measured = [rows[job] for job in jobs]
    if (own or not keep or needs_fresh_workers(cfg, round_.repeat + 1, session.first_round)
            or any(r.status != "ok" for r in measured)):
        sessions.close(round_.group)
        return [dataclasses.replace(row, exit_code=session.workers[row.mode].exit_code) for row in measured]
    session.last_rows = measured
    return measured


def _with_profile(row: BenchResult, worker: Worker) -> BenchResult:
    """The row with its profiler pass (profile: round 0), or with the reason the pass gave none."""
    try:
        kind, fields = worker.ask("profile")
    except WorkerLost as lost:
        return dataclasses.replace(row, profile_error=f"the worker died in the profiler's pass: {lost.error}")
    return dataclasses.replace(row, **fields) if kind == "profile" else row


def run_study(cfg: BenchConfig, job: Job, results_path: Path):
    """One study process in a worker of its own, with an empty compiler cache of its own (what it
    compiles is what a first start costs); always a row."""
    import tempfile

    row_type = STUDY_KINDS[job.kind][0]
    worker = Worker(log_path(results_path.parent, job), cfg.timeout_s)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-study-") as tmp:
            kind, value = worker.ask("study", {"config": cfg.to_dict(), "kind": job.kind, "model": job.model,
                                               "option": job.option, "results": str(results_path),
                                               "cache_dir": str(Path(tmp) / "inductor-cache"),
                                               "environ": dict(os.environ)})
            return row_type.from_dict(json.loads(value))
    except WorkerLost as lost:
        return failure_row(cfg, job, lost.status, lost.error, worker.seconds)
    finally:
        worker.close()


def cell_line(row: BenchResult) -> str:
    name = f"{row.model} bs={row.batch_size} {row.mode} #{row.repeat}"
    if row.status != "ok":
        return f"{name}: {row.status.upper()} {row.error[:160]}"
    text = f"{name}: {row.latency_ms_median:.2f} ms median of {len(row.samples_s)} calls"
    if row.mode != "eager" and row.compile_s is not None:
        text += f" (compile {row.compile_s:.1f} s)"
    return text


def run_sweep(cfg: BenchConfig, results_path: str | Path | None = None, retry_failed: bool = False,
              progress: bool = True, after_round=None) -> SweepSummary:
    """Measure every pending round of `cfg` (then extra rounds for precision, within the budget),
    appending each row to `results_path` as its round ends. `after_round(round_)`, if given, runs
    after each round, its time left out of the budget (benchmarks/method_check.py interleaves an
    independent measurement with the rounds)."""
    results_path = Path(results_path) if results_path else default_results_path(cfg)
    started = time.perf_counter()
    with ResultsWriter(results_path) as writer:
        rows = read_cell_rows(cfg, results_path)
        done = done_keys(rows, retry_failed)
        todo = [round_ for round_ in first_rounds(cfg) if round_pending(cfg, round_, done)]
        summary = SweepSummary(results_path, total=len(first_rounds(cfg)), skipped=len(first_rounds(cfg)) - len(todo))
        spent_before_s = adaptive.seconds_spent(rows)
        bar = progress_bar(len(todo), progress, "round")
        later = {}  # group -> its rounds still to come in the first pass
        for round_ in todo:
            later[round_.group] = later.get(round_.group, 0) + 1
        extra_possible = cfg.target_halfwidth > 0 and cfg.budget_min > 0
        last = [None]  # the group of the round measured last
        outside = [0.0]  # seconds spent in after_round: not the sweep's

        def write(new: list) -> None:
            for row in new:
                writer.append(row)
            rows[:] = [row for row in rows if row.key not in {r.key for r in new}] + new

        def measure(round_: Round, sessions: Sessions) -> None:
            if bar is not None:
                bar.set_description(round_.name)
            later[round_.group] = later.get(round_.group, 1) - 1
            last[0] = round_.group
            new = run_round(cfg, round_, results_path.parent, sessions,
                            keep=later[round_.group] > 0 or extra_possible)
            write(new + sessions.take_ended_rows())
            summary.count(new)
            if after_round is not None:
                aside = time.perf_counter()
                after_round(round_)
                outside[0] += time.perf_counter() - aside
            if bar is not None:
                for row in new:
                    bar.write(cell_line(row))
                bar.update(1)

        with Sessions(cfg, results_path.parent) as sessions:
            for round_ in todo:
                measure(round_, sessions)
            while True:
                elapsed_s = spent_before_s + time.perf_counter() - started - outside[0]
                round_ = adaptive.next_round(cfg, rows, elapsed_s, last=last[0])
                if round_ is None:
                    break
                if bar is not None:
                    bar.total += 1
                summary.extra_rounds += 1
                measure(round_, sessions)
        write(sessions.take_ended_rows())  # workers that died when they were closed at the end
        if bar is not None:
            bar.close()
    summary.seconds = time.perf_counter() - started - outside[0]
    return summary


def run_studies(cfg: BenchConfig, results_path: Path, progress: bool = True) -> SweepSummary:
    """Run every pending study process of `cfg`; nothing to do without serving_batch_sizes or
    compile_strategies."""
    todo = pending_study_jobs(cfg, results_path)
    summary = SweepSummary(results_path, total=len(study_jobs(cfg)), skipped=len(study_jobs(cfg)) - len(todo))
    bar = progress_bar(len(todo), progress, "study")
    for job in todo:
        if bar is not None:
            bar.set_description(job.name)
        row = run_study(cfg, job, results_path)
        with ResultsWriter(STUDY_KINDS[job.kind][1](results_path)) as writer:
            writer.append(row)
        summary.count([row])
        if bar is not None:
            bar.update(1)
            bar.write(f"{job.name}: {row.status} {row.error[:160]}".rstrip())
    if bar is not None:
        bar.close()
    return summary


def run_profile(cfg: BenchConfig, results_path: str | Path | None = None, retry_failed: bool = False,
                progress: bool = True) -> list[SweepSummary]:
    """Everything a profile asks for, in order: its cells, then its studies (if any)."""
    results_path = Path(results_path) if results_path else default_results_path(cfg)
    summaries = [run_sweep(cfg, results_path, retry_failed, progress)]
    if study_jobs(cfg):
        summaries.append(run_studies(cfg, results_path, progress))
    return summaries


def progress_bar(total: int, enabled: bool, unit: str):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, file=sys.stderr, dynamic_ncols=True)
