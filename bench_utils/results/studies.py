"""Studies: kinds of measurement beside the sweep's cells (serving with changing batch sizes), each one
plug-in module of bench_utils/studies/, registered here by name.

A study declares what it measures (`jobs` of a profile), its row type and file, the measurement a
worker process runs for one job (`measure`, the only part that imports torch, on use) and its part of
the page (`frame`, `verdict`, `section`). The sweep's loop, the worker and the page reach a study only
through this registry, by name: the core never branches on a study's kind, and adding one is a module
of bench_utils/studies/ and a line in REGISTRY (docs/architecture.md). No torch.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from .rows import Row, read_rows

# name -> the module whose STUDY it is; the name is the kind of the study's jobs (sweep/jobs.py)
REGISTRY = {
    "serving": "bench_utils.studies.serving",
}


class Study:
    """What every study declares; a study module holds one subclass instance as STUDY (through
    studies/base.BaseStudy, which writes measure, verdict and section once over a study's hooks)."""

    name = ""  # its REGISTRY key
    row: type[Row] = Row  # its row type (rows.Row family: a frozen dataclass with a key)
    file_name = ""  # its results file, next to the sweep's results.jsonl
    option_name = "option"  # what a job's option is to it, as its messages name it ("setting", "strategy")
    options: tuple[str, ...] = ()  # the options its measure knows

    def jobs(self, cfg) -> list[tuple[str, int, str]]:
        """(model, batch size, option) of every process the profile `cfg` asks of it, in run order;
        [] when the profile does not ask for the study."""
        raise NotImplementedError

    def identity(self, cfg, model: str, option: str, device: str) -> dict:
        """The identity and settings fields of the row one job writes (its key among them)."""
        raise NotImplementedError

    def measure(self, cfg, model: str, option: str, results_path: Path) -> Row:
        """One job, in a worker process of its own; never raises for a failure of the model or the
        compiler (it becomes the row's status)."""
        raise NotImplementedError

    def frame(self, results_path: Path, cells):
        """The study's rows next to `results_path` as the page's DataFrame (empty when there are none);
        `cells`: the sweep's DataFrame (results/aggregate.py), for the eager numbers it shares."""
        raise NotImplementedError

    def verdict(self, frame) -> str:
        """Markdown: the study's answer, one line per model."""
        raise NotImplementedError

    def section(self, frame) -> None:
        """Display the study's part of the page (heading, tables, charts) in a notebook."""
        raise NotImplementedError

    def check_option(self, option: str) -> None:
        """ValueError naming the allowed options unless `option` is one of them."""
        if option not in self.options:
            raise ValueError(f"{self.option_name}: {option!r} is not allowed; allowed: {', '.join(self.options)}")

    def path(self, results_path: str | Path) -> Path:
        return Path(results_path).with_name(self.file_name)

    def read(self, results_path: str | Path) -> list[Row]:
        """The study's rows in its file next to `results_path` (none when it has no file yet)."""
        return read_rows(self.path(results_path), self.row).rows


def study(name: str) -> Study:
    """The registered study `name`; ValueError naming the registered ones otherwise."""
    if name not in REGISTRY:
        raise ValueError(f"study: {name!r} is not allowed; allowed: {', '.join(REGISTRY)}")
    return importlib.import_module(REGISTRY[name]).STUDY


def studies() -> list[Study]:
    """Every registered study, in REGISTRY order (the order a profile's studies run in)."""
    return [study(name) for name in REGISTRY]
