"""Measure one unit of a sweep in worker processes on this machine: a round (a cell group's
configurations, taking turns) or a study job. Both launchers use it: the local one in this process,
the Ray one in an actor on the node it placed. No torch here.

A round gives each configuration a worker of its own, prepared in the group's first round (nothing
timed then) and kept for `rounds_per_process` rounds (`Sessions`), the workers taking turns timing
blocks in ABBA order (`turns`) with `settle_s` of quiet before each handoff; fresh workers replace
them where jobs.needs_fresh_workers or Round.new_workers says. At most `live_groups` groups hold
workers at once (each a CUDA context on a GPU); the least recently used group's are closed first.
Why, and what it reached: docs/method.md ("A worker measures several rounds"). Memory on a shared
GPU (only the worker whose turn it is holds cached memory: Block.hand_over; a failed or lost worker
is closed at once): docs/gpu.md, item 1.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..config.configurations import configuration
from ..measure.forked import RELEASE, forks
from ..measure.task import LOGS_DIR, Block, Job, NextRound, Task, log_path
from ..paths import cell_cache_dir, emptied, inside
from ..results.rows import NOT_FAILED, BenchResult, Row
from .jobs import Round, failure_row, needs_fresh_workers, profiled
from .workers import Spares, Worker, WorkerLost, uses_cuda


@dataclass
class Session:
    """A cell group's workers (mode -> Worker) since `first_round`; `last_rows` are the rows of the last
    round they measured, given their exit codes when the workers end."""

    first_round: int
    workers: dict[str, Worker]
    last_rows: list = field(default_factory=list)
    closed: set = field(default_factory=set)  # modes whose worker was closed already (it failed)

    def close_worker(self, mode: str) -> None:
        if mode not in self.closed:
            self.closed.add(mode)
            self.workers[mode].close()


class Sessions:
    """The live sessions of a sweep on this machine, by cell group, least recently used first; with
    `spares` (default: where workers are spawned, a GPU), workers started ahead (workers.Spares)."""

    def __init__(self, cfg: BenchConfig, results_path: Path, spares: bool | None = None):
        self.cfg, self.results_path = cfg, Path(results_path)
        self.live: dict[tuple[str, int], Session] = {}
        self.ended_rows: list = []  # rows given exit codes by `close`, for the loop to write again
        self._scratch: str | None = None  # the workers' scratch folder (Task.scratch_dir), made on first use
        ahead = uses_cuda(cfg.device) if spares is None else spares
        folder = inside(self.results_path.parent / LOGS_DIR, self.results_path.parent)
        self.spares = Spares(folder, self._new_worker, f"-{os.getpid()}") if ahead else None

    def _new_worker(self, path: Path, timeout_s: float) -> Worker:
        return Worker(path, timeout_s, self.cfg.device)

    def worker(self, job: Job) -> Worker:
        """A worker for `job`: a spare started ahead where there is one, else a new one."""
        path = log_path(self.results_path, job)
        spare = self.spares.take(path, self.cfg.timeout_s) if self.spares else None
        return spare or self._new_worker(path, self.cfg.timeout_s)

    @property
    def scratch(self) -> str:
        """A folder for the workers' temporary files (a cold compile's cache), which close_all removes
        after every worker is gone: a worker killed mid-compile leaves nothing behind."""
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="bench-scratch-")
        return self._scratch

    def open(self, round_: Round) -> tuple[Session, bool]:
        """The session to measure `round_` in, and whether its workers are fresh (they must prepare)."""
        session = self.live.pop(round_.group, None)
        if session is not None and (round_.new_workers or needs_fresh_workers(self.cfg, round_.repeat,
                                                                              session.first_round, round_.batch_size)
                                    or set(round_.configurations) - set(session.workers)):
            self._end(session)
            session = None
        fresh = session is None
        if fresh:
            while len(self.live) >= self.cfg.live_groups:
                self._end(self.live.pop(next(iter(self.live))))
            session = Session(round_.repeat, {job.option: self.worker(job) for job in round_.jobs})
        else:
            for name in set(session.workers) - set(round_.configurations):  # out of the race: they end
                worker = session.workers.pop(name)
                worker.close()
                self.ended_rows += [dataclasses.replace(row, exit_code=worker.exit_code) for row in session.last_rows
                                    if row.configuration == name and worker.exit_code]  # as _end gives them
            session.last_rows = [row for row in session.last_rows if row.configuration in session.workers]
            for worker in session.workers.values():
                worker.new_deadline()
        self.live[round_.group] = session  # most recently used last
        return session, fresh

    def close(self, group: tuple[str, int]) -> None:
        """End a group's workers now (a failure in them, or no further round for them)."""
        session = self.live.pop(group, None)
        if session is not None:
            self._end(session)

    def close_all(self) -> list:
        """End every group's workers; the rows they gave exit codes to (take_ended_rows)."""
        try:
            for group in list(self.live):
                self.close(group)
            if self.spares is not None:
                self.spares.close()
        finally:
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None
        return self.take_ended_rows()

    def _end(self, session: Session) -> None:
        for mode in session.workers:
            session.close_worker(mode)
        # a worker that replied, then died (e.g. at teardown: CUDA graphs replayed under CUPTI,
        # pytorch#75504) keeps its measured rows; its last row says how the process ended
        for row in session.last_rows:
            code = session.workers[row.configuration].exit_code
            if code:
                self.ended_rows.append(dataclasses.replace(row, exit_code=code))

    def take_ended_rows(self) -> list:
        rows, self.ended_rows = self.ended_rows, []
        return rows

    def __enter__(self) -> "Sessions":
        return self

    def __exit__(self, *exc) -> None:
        self.close_all()


class _RoundRun:
    """One round's conversation with its workers; `rows` fills as each job ends (a row per job)."""

    def __init__(self, cfg: BenchConfig, round_: Round, results_path: Path, session: Session,
                 scratch: str | None = None, spares: Spares | None = None):
        self.cfg, self.round, self.results_path, self.session = cfg, round_, results_path, session
        self.scratch, self.spares = scratch, spares
        self.workers = {job: session.workers[job.option] for job in round_.jobs}
        self.rows: dict[Job, BenchResult] = {}
        self.beside_starts: dict[Job, int] = {}  # spares still importing when a job's compile began

    def answered(self, job: Job, reply) -> bool:
        """The worker's reply (`reply()`): True while the job goes on, its row kept when it ended; a lost
        worker is its row. A failed or lost worker is closed at once: what it holds on the GPU (an OOM's
        cache, its context) is freed for the other workers' turns."""
        try:
            kind, value = reply()
        except WorkerLost as lost:
            self.rows[job] = failure_row(self.cfg, job, lost.status, lost.error, self.workers[job].seconds)
            self.session.close_worker(job.option)
            return False
        if kind == "failed":
            self.rows[job] = value
            self.session.close_worker(job.option)
            return False
        if kind == "row":
            self.rows[job] = value
            return False
        return True

    def ask(self, job: Job, command: str, payload=None) -> bool:
        return self.answered(job, lambda: self.workers[job].ask(command, payload))

    def prepare(self, fresh: bool) -> list[Job]:
        """Fresh workers build, compile and warm up one at a time, kept ones start a new round (on a CPU
        one at a time too: each forks the process that measures the round, which warms up); nothing is
        timed. The jobs whose workers are ready to time.

        One at a time on every device: on a CPU a worker warming up beside another's compile is starved
        (its warm-up measures nothing and slows the compile); on a GPU Inductor times kernels while it
        compiles, and timings disturbed by another worker would pick the kernels every later process
        reuses from the cache (docs/method.md; docs/gpu.md, item 2); two compile pools at once also
        inflate compile_s. plan.py counts every worker's preparation for this reason.

        Spares (workers.Spares) for the next fresh round start when this one's first compile does: a
        spawned worker's imports (14-30 s a group on a GPU host) run beside compiles, which are
        not timed, and are done before any block is (`wait_for_spares`)."""
        jobs = self.round.jobs
        # one at a time, also kept workers on a CPU: each forks a process that warms up (measure/forked.py)
        alone = fresh or forks("cuda" if uses_cuda(self.cfg.device) else "cpu")
        waves = [[job] for job in jobs] if alone else [jobs]
        ready = set()
        for wave in waves:
            for job in wave:
                worker = self.workers[job]
                if len(waves) > 1:
                    worker.new_deadline()  # its timeout_s counts from its own turn to prepare
                if fresh:
                    if self.spares is not None and configuration(job.option).compiled:
                        self.spares.start(len(self.cfg.configurations))  # the most a fresh round holds
                        self.beside_starts[job] = self.spares.importing()  # its compile begins beside them
                    worker.send("cell", Task(self.cfg, job, self.results_path, dict(os.environ),
                                             cache_dir=self._cell_cache(job), scratch_dir=self.scratch))
                else:
                    worker.send("round", NextRound(job.repeat, self.round.times_warm_compile(job.option)))
            ready |= {job for job in wave if self.answered(job, self.workers[job].receive)}
        return [job for job in jobs if job in ready]

    def _cell_cache(self, job: Job) -> str | None:
        """A compiled cell's own compiler cache, emptied before its first process (round 0): that compile
        is cold, as compiling this configuration alone is; its later processes find it filled. None for
        a configuration that compiles nothing."""
        if not configuration(job.option).compiled:
            return None
        folder = cell_cache_dir(self.results_path, job.model, job.batch_size, job.option)
        return str(emptied(folder) if job.repeat == 0 else folder)

    def wait_for_spares(self) -> None:
        """Every spare started has imported before a block is timed: an import beside a launch-bound
        call would slow the host that launches it."""
        if self.spares is not None:
            self.spares.wait()

    def time_blocks(self, live: list[Job]) -> None:
        """`blocks` turns per worker in ABBA order (drift cancels in each pair), `settle_s` of quiet
        before a worker's turn begins (the last one's OpenMP threads stop spinning); a worker whose
        turn passes to another (or whose round ends) gives its CUDA cache back (Block.hand_over)."""
        order = turns(live, self.cfg.blocks)
        previous = None
        for index, job in enumerate(order):
            if job in self.rows:
                continue
            switched = previous is not job
            if switched:
                time.sleep(self.cfg.settle_s)
            previous = job
            following = next((later for later in order[index + 1:] if later not in self.rows), None)
            self.ask(job, "block", Block(switched, following is not job))

    def finish(self, live: list[Job]) -> None:
        for job in live:
            if job not in self.rows:
                self.ask(job, "finish")
        for job in live:  # after every row is safe: a crash in the profiler's pass costs only the profile
            profiles = profiled(self.cfg, self.round.batch_size, self.round.repeat, job.option)
            if profiles and self.rows[job].status == "ok":
                self.rows[job] = _with_profile(self.rows[job], self.workers[job])
        for job, count in self.beside_starts.items():  # what only the runner knew of a compile's machine
            if count and job in self.rows:
                self.rows[job] = dataclasses.replace(self.rows[job], compiled_beside_starts=count)


def turns(jobs: list, blocks: int) -> list:
    """The order of a round's blocks: `blocks` per job, in ABBA order (A B C, C B A, A B C, ...)."""
    return [job for block in range(blocks) for job in (jobs if block % 2 == 0 else jobs[::-1])]


def run_round(cfg: BenchConfig, round_: Round, results_path: Path, sessions: Sessions, keep: bool) -> list[BenchResult]:
    """Measure one round in `sessions`; a row per mode, always (a failure or a lost worker is its row's
    status). With `keep`, the group's workers stay alive for its next round unless it needs fresh
    ones or a worker failed."""
    session, fresh = sessions.open(round_)
    run = _RoundRun(cfg, round_, Path(results_path), session, sessions.scratch if fresh else None,
                    sessions.spares)
    try:
        live = run.prepare(fresh)
        run.wait_for_spares()  # also in a round with nothing to time: a study or a reference pass may follow
        run.time_blocks(live)
        run.finish(live)
    except BaseException:
        sessions.close(round_.group)
        raise
    measured = [run.rows[job] for job in round_.jobs]
    if not keep or needs_fresh_workers(cfg, round_.repeat + 1, session.first_round, round_.batch_size) or any(
            row.status not in NOT_FAILED for row in measured):  # a failure: fresh workers next
        sessions.close(round_.group)
        return [dataclasses.replace(row, exit_code=session.workers[row.configuration].exit_code) for row in measured]
    session.last_rows = measured
    for mode, worker in session.workers.items():  # a CPU round's forked processes end; their templates wait
        if mode not in session.closed:
            worker.send(RELEASE)
    return measured


def measure_unit(cfg: BenchConfig, unit, results_path: Path, sessions: Sessions, keep: bool,
                 round_runner=run_round) -> list:
    """A launcher's unit measured on this machine: a round in `sessions` (by `round_runner`, run_round
    or a test's stand-in), or a study job in a worker of its own; its rows."""
    if isinstance(unit, Round):
        return round_runner(cfg, unit, results_path, sessions, keep)
    return [run_study(cfg, unit, results_path)]


def _with_profile(row: BenchResult, worker: Worker) -> BenchResult:
    """The row with its profiler pass (profile: round 0), or with the reason the pass gave none."""
    try:
        kind, fields = worker.ask("profile")
    except WorkerLost as lost:
        return dataclasses.replace(row, profile_error=f"the worker died in the profiler's pass: {lost.error}")
    return dataclasses.replace(row, **fields) if kind == "profile" else row


def run_study(cfg: BenchConfig, job: Job, results_path: Path) -> Row:
    """One study process in a worker of its own, with an empty compiler cache of its own (what it
    compiles is what a first start costs); always a row."""
    worker = Worker(log_path(results_path, job), cfg.timeout_s, cfg.device)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-study-") as tmp:
            task = Task(cfg, job, Path(results_path), dict(os.environ), str(Path(tmp) / "inductor-cache"))
            return worker.ask("study", task)[1]
    except WorkerLost as lost:
        return failure_row(cfg, job, lost.status, lost.error, worker.seconds)
    finally:
        worker.close()
