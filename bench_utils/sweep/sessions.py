"""The live workers of a sweep: for each cell group (model, batch size) being measured, one worker per
mode, kept across rounds. No torch here.

A worker's first round builds, compiles and warms up its model; its later rounds cost only their
timed blocks, so a minute of machine time holds several times more rounds, and a cell's interval,
taken over its rounds, narrows (docs/method.md). After `rounds_per_process` rounds, and at the last
round of the first pass (jobs.needs_fresh_workers), or sooner where an extra round is worth more
in a new pair (Round.new_workers, sweep/adaptive.py), a group's workers are replaced by fresh ones, so
the rounds also sample the variation between processes (results/stats.py weighs the rounds of one
process pair as one cluster). At most `live_groups` groups hold workers at once (each a
CUDA context on a GPU); the least recently used group's are closed to make room.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..paths import inside
from .jobs import Job, Round, needs_fresh_workers
from .workers import Worker


def log_path(results_dir: Path, job: Job) -> Path:
    """Where a worker's output goes: logs/<first job's name>.log in the results folder."""
    return inside(results_dir / "logs" / f"{job.name}.log", results_dir / "logs")


@dataclass
class Session:
    """A cell group's workers (mode -> Worker) since `first_round`; `last_rows` are the rows of the last
    round they measured, given their exit codes when the workers end."""

    first_round: int
    workers: dict[str, Worker]
    last_rows: list = field(default_factory=list)


class Sessions:
    """The sweep's live sessions, by cell group, least recently used first."""

    def __init__(self, cfg: BenchConfig, results_dir: Path):
        self.cfg, self.results_dir = cfg, results_dir
        self.live: dict[tuple[str, int], Session] = {}
        self.ended_rows: list = []  # rows given exit codes by `close`, for the runner to write again

    def open(self, round_: Round) -> tuple[Session, bool]:
        """The session to measure `round_` in, and whether its workers are fresh (they must prepare)."""
        session = self.live.pop(round_.group, None)
        if session is not None and (round_.new_workers or needs_fresh_workers(self.cfg, round_.repeat,
                                                                              session.first_round)):
            self._end(session)
            session = None
        if session is None:
            while len(self.live) >= self.cfg.live_groups:
                self._end(self.live.pop(next(iter(self.live))))
            session = Session(round_.repeat, {job.option: Worker(log_path(self.results_dir, job), self.cfg.timeout_s)
                                              for job in round_.jobs})
            fresh = True
        else:
            for worker in session.workers.values():
                worker.new_deadline()
            fresh = False
        self.live[round_.group] = session  # most recently used last
        return session, fresh

    def close(self, group: tuple[str, int]) -> None:
        """End a group's workers now (a failure in them, or no further round for them)."""
        session = self.live.pop(group, None)
        if session is not None:
            self._end(session)

    def close_all(self) -> None:
        for group in list(self.live):
            self.close(group)

    def _end(self, session: Session) -> None:
        for worker in session.workers.values():
            worker.close()
        # a worker that replied, then died (e.g. at teardown: CUDA graphs replayed under CUPTI,
        # pytorch#75504) keeps its measured rows; its last row says how the process ended
        for row in session.last_rows:
            code = session.workers[row.mode].exit_code
            if code:
                self.ended_rows.append(dataclasses.replace(row, exit_code=code))

    def take_ended_rows(self) -> list:
        rows, self.ended_rows = self.ended_rows, []
        return rows

    def __enter__(self) -> "Sessions":
        return self

    def __exit__(self, *exc) -> None:
        self.close_all()
