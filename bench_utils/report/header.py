"""The facts a reader needs before any number: what run, on which machine, with which software, when,
and with which weights. One line at the top of every page, the same words in its <title> and on the
index. Plain text (the page escapes it). No torch.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..results.rows import OWN_WEIGHTS
from .display import MISSING, number


@dataclass(frozen=True)
class PageHeader:
    label: str  # the run's label, e.g. "CPU full-size"
    hardware: str  # "AMD EPYC 7B13, 2 cores" or "NVIDIA H100 80GB HBM3 (79.1 GB), 16 CPU cores"
    software: str  # "torch 2.5.1 · transformers 4.46.0 · Python 3.11.9"
    date: str  # the day(s) the cells were measured, UTC
    weights: str  # "random weights" / "pretrained weights" / "random weights for 2 of 4 models"
    size: str = ""  # "tiny test models" where the run built tiny configurations, "" at the checkpoints' size

    @property
    def facts(self) -> list[str]:
        return [self.label, self.hardware, self.software, self.date, self.weights] + ([self.size] if self.size else [])

    @property
    def title(self) -> str:
        """The page's <title>: every fact, so a browser tab or a bookmark names the machine."""
        return " · ".join(self.facts)


def _distinct(values) -> list[str]:
    return sorted({str(v) for v in values if v is not None and not pd.isna(v) and str(v) != ""})


def _hardware(run: pd.DataFrame) -> str:
    names = ", ".join(_distinct(run.get("hardware", []))) or "unknown hardware"
    cores = _distinct(number(c, integer=True) for c in run.get("cpu_count", []) if not pd.isna(c))
    on_cuda = "cuda" in set(run.get("device", []))
    memory = _distinct(f"{number(m)} GB" for m in run.get("gpu_memory_gb", []) if m is not None and not pd.isna(m))
    unit = "core" if cores == ["1"] else "cores"
    if on_cuda:
        names += f" ({', '.join(memory)})" if memory else ""
        return names + (f", {'/'.join(cores)} CPU {unit}" if cores else "")
    return names + (f", {'/'.join(cores)} {unit}" if cores else "")


def _software(run: pd.DataFrame) -> str:
    parts = []
    for name, column in (("torch", "torch"), ("transformers", "transformers"), ("Python", "python")):
        versions = _distinct(run.get(column, []))
        if versions:
            parts.append(f"{name} {' / '.join(versions)}")
    return " · ".join(parts) or f"torch {MISSING}"


def _date(run: pd.DataFrame) -> str:
    days = _distinct(str(stamp)[:10] for stamp in run.get("started_at", []) if stamp)
    if not days:
        return f"measured {MISSING}"
    return f"measured {days[0]}" + (f" to {days[-1]}" if len(days) > 1 else "")


def weights_words(run: pd.DataFrame) -> str:
    """The weights the run's models used, in a few words."""
    used = run[run.get("weights", pd.Series("", index=run.index)).fillna("") != ""] if len(run) else run
    if used.empty:
        return f"weights {MISSING}"
    random_models = set(used.loc[used["weights"] == "random", "model"])
    if (used["weights"] == OWN_WEIGHTS).all():
        return "the notebook's own weights"
    if not random_models:
        return "pretrained weights"
    loaded = used["model"].nunique()
    return "random weights" if len(random_models) == loaded else f"random weights for {len(random_models)} of {loaded} models"


def size_words(run: pd.DataFrame) -> str:
    """"tiny test models" where the run's models are tiny configurations (a model's name and checkpoint on
    the page are its architecture's, not its size's), "" where they are the checkpoints' size."""
    sizes = run["size"].dropna() if "size" in run.columns else pd.Series(dtype=object)
    tiny = set(run.loc[sizes.index[sizes == "tiny"], "model"]) if len(sizes) else set()
    if not tiny:
        return ""
    models = run["model"].nunique()
    return "tiny test models" if len(tiny) == models else f"tiny test models for {len(tiny)} of {models} models"


def page_header(df: pd.DataFrame, label: str = "") -> PageHeader:
    """The header of one run's rows (the DataFrame of frame.to_dataframe); `label` when it has none yet."""
    labels = _distinct(df["label"]) if "label" in df.columns else []
    shown = " / ".join(labels) or label or "no results yet"
    return PageHeader(shown, _hardware(df), _software(df), _date(df), weights_words(df), size_words(df))
