"""What bench_utils.race returns: the race's answer, read from its results file whenever asked (rows
written after it was made, by a resumed race, are in it), shown in a notebook as the first screen of a
report page, one row per configuration as a DataFrame, and saved as a report folder the usual
pipeline re-renders (`python -m bench_utils report PARAMS --report-only --out FOLDER`) and compares.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..config.objects import DATA, INPUTS, MANIFEST

PARAMETERS = "parameters.yaml"  # beside the results file: the race as a parameters file
OBJECTS = "objects"  # in a race's folder: the object folders (config/objects.py), one per name
# the answer's table, record columns under their own names (results/record.py: units and meanings)
FRAME_COLUMNS = ("configuration", "status", "race_outcome", "latency_ms_median", "eager_ms_median", "race_speedup",
                 "race_ci95_low", "race_ci95_high", "race_rounds", "compile_s", "compile_warm_s", "accuracy_ok",
                 "max_abs_diff", "error")


@dataclass(frozen=True)
class Answer:
    """A race's answer. `frame`: one row per configuration; in a notebook it shows as the report's first
    screen; `save(folder)` writes a report page. `interrupted`: the race was stopped (the kernel's stop
    button) and this answer holds the rounds measured before."""

    cfg: BenchConfig
    folder: Path  # the race's folder: objects/<name>/, <label slug>/results.jsonl and parameters.yaml
    interrupted: bool = False
    seconds: float = 0.0  # the race's wall time in the kernel

    @property
    def results_path(self) -> Path:
        return self.folder / self.cfg.slug() / "results.jsonl"

    @property
    def parameters_path(self) -> Path:
        return self.folder / self.cfg.slug() / PARAMETERS

    def cells(self):
        """Every cell as results/aggregate.py records it (the DataFrame the report's page reads)."""
        from ..results.aggregate import load_dataframe, to_dataframe

        return load_dataframe(self.results_path) if self.results_path.is_file() else to_dataframe([])

    @property
    def frame(self):
        """One row per configuration: median latency (ms), eager's beside it, the race's speedup with its 95%
        interval and rounds, compile seconds cold (first process) and warm (a later one), status and error."""
        return self.cells().loc[:, list(FRAME_COLUMNS)].set_index("configuration")

    @property
    def verdict(self):
        """The decision as report/verdict.py makes it: one row (model, batch), its code, choice and words."""
        from ..report.verdict import verdicts

        return verdicts(self.cells(), self.rules())

    def rules(self):
        """The race's margin and precision, and the command that measures more of it (this folder's)."""
        from ..report.verdict import Rules

        return Rules.of(self.cfg, f"{self.parameters_path} --out {self.folder}")

    def _repr_html_(self) -> str:
        from ..report.page import answer_html
        from ..sweep.adaptive import first_pass_state

        return answer_html(self.cells(), self.cfg.label, self.rules(), first_pass_state(self.cfg, self.results_path))

    def __repr__(self) -> str:
        from ..report.verdict import verdict_text

        state = ", interrupted" if self.interrupted else ""
        return f"race {self.cfg.label!r} ({self.results_path}{state}):\n{verdict_text(self.cells(), self.rules())}"

    def save(self, folder: str | Path | None = None) -> Path:
        """The race as a report folder: its results file, parameters file and object folder copied into
        `folder` (default: the race's own), then the report's page, index and summary rendered there by the
        usual pipeline (report --report-only). Returns the page."""
        out = Path(folder).expanduser() if folder is not None else self.folder
        params = self.parameters_path if out.resolve() == self.folder.resolve() else self._copy_to(out)
        _report_only(params, out)
        return out / self.cfg.slug() / "report.html"

    def _copy_to(self, out: Path) -> Path:
        """The results file, the object folder and a parameters file naming the copy, in `out`."""
        from ..files import write_file

        name, _, task = self.cfg.checkpoints[0]
        objects = out / OBJECTS / name
        source = Path(self.cfg.spec(name).checkpoint)
        for file_name in (DATA, INPUTS, MANIFEST):
            write_file(objects / file_name, (source / file_name).read_bytes(), objects)
        profile = out / self.cfg.slug()
        write_file(profile / "results.jsonl", self.results_path.read_bytes(), profile)
        copied = dataclasses.replace(self.cfg, checkpoints=((name, str(objects.resolve()), task),))
        return write_file(profile / PARAMETERS, parameters_text(copied), profile)


def _report_only(params: Path, out: Path) -> None:
    """`python -m bench_utils report PARAMS --report-only --out OUT`, the usual pipeline, in a process of its
    own (the command line sits above this entry point); its last error line as a ConfigError."""
    import subprocess
    import sys

    from ..config.validation import ConfigError

    proc = subprocess.run([sys.executable, "-m", "bench_utils", "report", str(params), "--report-only", "--out",
                           str(out)], capture_output=True, text=True)
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        raise ConfigError(lines[-1] if lines else f"report --report-only ended with status {proc.returncode}")


def parameters_text(cfg: BenchConfig) -> str:
    """The race as a parameters file: `python -m bench_utils report` measures more of it, or renders it."""
    import yaml

    return ("# A race (bench_utils.race), as a parameters file: its model is the object folder it names.\n"
            + yaml.safe_dump(cfg.to_dict(), sort_keys=False))


def write_parameters(answer: Answer) -> None:
    from ..files import write_file

    folder = answer.parameters_path.parent
    write_file(answer.parameters_path, parameters_text(answer.cfg), folder)
