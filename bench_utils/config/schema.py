"""How a parameter is declared, once: its default, how it is checked (kind, allowed values, bounds),
its unit and a one-line help. BenchConfig's fields carry a `Parameter` in their metadata (the way
optimum-benchmark documents its config fields); the notebooks' own parameters (where the results
are, whether to measure) are declared at the end of this module. Validation, the notebooks'
`parameters` cells and the README's table are all derived from these declarations. No torch.
"""

from __future__ import annotations

import dataclasses
import math

# How a value is checked (validation.py holds one check per kind):
# text: non-empty str; choice: one of `allowed`; flag: bool; count: int in [low, high];
# seconds: finite number in [low, high] (above low when `positive`); number: the same in `unit`; list: tuple of `item` (each in
# `allowed` when given, at least `low` for numbers); models: names from `allowed` or your checkpoints;
# checkpoints: (name, folder or hub id, task) entries; image: None or a readable image file;
# path, paths: notebook parameters that BenchConfig does not hold (checked by the notebooks' readers).
KINDS = ("text", "choice", "flag", "count", "seconds", "number", "list", "models", "configurations", "checkpoints",
         "image",
         "path", "paths")


@dataclasses.dataclass(frozen=True)
class Parameter:
    help: str  # one line: what it sets, and why one would change it
    kind: str  # one of KINDS
    unit: str = ""  # e.g. "seconds per process"; "" when the value has none
    allowed: tuple = ()  # choice: the values; list and models: each item's values
    low: float | None = None  # count, seconds, list of int: the smallest allowed value
    high: float | None = None  # count, seconds: the largest allowed value
    positive: bool = False  # seconds: strictly above `low`
    item: type | None = None  # list: the type of each item
    may_be_empty: bool = False  # list: [] is allowed
    repeats_ok: bool = False  # list: a value may appear twice
    name: str = ""  # filled in from the dataclass field
    default: object = None  # filled in from the dataclass field

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind: {self.kind!r} is not allowed; allowed: {', '.join(KINDS)}")

    def allowed_text(self) -> str:
        """The allowed values in words, as error messages, the notebook and the README say them."""
        if self.kind == "choice":
            return ", ".join(yaml_word(v) for v in self.allowed)
        if self.kind == "flag":
            return "true or false"
        if self.kind == "count":
            return f"an integer from {self.low:,} to {self.high:,}"
        if self.kind == "seconds":
            return f"a finite number of seconds {'>' if self.positive else '>='} {self.low:g}, at most {self.high:g}"
        if self.kind == "number":
            return f"a finite number from {self.low:g} to {self.high:g} ({self.unit})"
        if self.kind in ("list", "models"):
            items = ", ".join(yaml_word(v) for v in self.allowed) if self.allowed else (
                f"integers >= {self.low:g}" if self.low is not None else "texts")
            return f"a list of {items}" + ("" if self.may_be_empty else " (at least one)")
        if self.kind == "configurations":
            from .configurations import ALLOWED_TEXT

            return f"a list of configurations, eager included: {ALLOWED_TEXT}"
        return {"text": "any non-empty text", "checkpoints": "a list of {name, checkpoint, task} entries",
                "image": "a path to an image file, or null", "path": "a path, or null",
                "paths": "a list of paths"}[self.kind]


def parameter(default, help: str, kind: str, **rules) -> dataclasses.Field:
    """A BenchConfig field declared with its documentation and checks (see Parameter)."""
    return dataclasses.field(default=default, metadata={"parameter": Parameter(help, kind, **rules)})


def parameters(config_class) -> tuple[Parameter, ...]:
    """The declared parameters of a dataclass, in field order, each with its name and default."""
    return tuple(dataclasses.replace(f.metadata["parameter"], name=f.name, default=f.default)
                 for f in dataclasses.fields(config_class))


def yaml_word(value) -> str:
    """A value as a parameters file spells it: false, true, null, auto."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return str(value)


def notebook_parameter(name: str, default, help: str, kind: str, **rules) -> Parameter:
    return Parameter(help, kind, name=name, default=default, **rules)


# Parameters of the notebooks that are not settings of a run (BenchConfig holds those).
BENCHMARK_NOTEBOOK_ONLY = (
    notebook_parameter("results_path", None, "results JSONL file; null: <reports folder>/<label slug>/results.jsonl",
                       "path"),
    notebook_parameter("measure", True, "false: measure nothing, report the rows results_path already holds "
                       "(e.g. copied from a GPU machine)", "flag"),
    notebook_parameter("params_file", None, "the parameters file the page was made from, for its reproduce line; "
                       "null: none", "path"),
)
SUMMARY_NOTEBOOK = (
    notebook_parameter("results_paths", (), "results JSONL files; []: every reports_dir/*/results.jsonl",
                       "paths"),
    notebook_parameter("reports_dir", None, "folder searched when results_paths is empty; null: "
                       "$BENCH_REPORTS_DIR, else reports/ in the checkout", "path"),
    notebook_parameter("compare_before", None, "results JSONL of the 'before' run (e.g. the older torch); "
                       "null: the first of the files", "path"),
    notebook_parameter("compare_after", None, "results JSONL of the 'after' run; null: the second of the files "
                       "(no comparison with fewer)", "path"),
)
