"""The local launcher: units measured one at a time on this machine, in worker processes forked here
(sweep/rounds.py); a cell group's workers live across rounds in `Sessions`. No torch."""

from __future__ import annotations

from pathlib import Path

from ...config.bench_config import BenchConfig
from ..rounds import Sessions, measure_unit, run_round


class LocalLauncher:
    """`round_runner`: what measures a round (rounds.run_round; tests give a stand-in)."""

    capacity = 1  # one unit at a time: units measured side by side would disturb each other's timing

    def __init__(self, cfg: BenchConfig, results_path: Path, round_runner=run_round):
        self.cfg, self.results_path, self.round_runner = cfg, Path(results_path), round_runner
        self.sessions = Sessions(cfg, self.results_path)
        self.started: tuple | None = None

    def start(self, unit, keep: bool) -> None:
        self.started = (unit, keep)

    def finished(self) -> list[tuple]:
        (unit, keep), self.started = self.started, None
        return [(unit, measure_unit(self.cfg, unit, self.results_path, self.sessions, keep, self.round_runner))]

    def take_ended_rows(self) -> list:
        return self.sessions.take_ended_rows()

    def close(self) -> list:
        return self.sessions.close_all()
