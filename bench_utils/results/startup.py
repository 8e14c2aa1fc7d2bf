"""A service's start-up question in numbers: per model and batch size, every way a replica can start
(eager; torch.compile from an empty cache and from its own filled one, whole or regional; a form that
ships its work in a file: cache artifacts, precompile, an AOTInductor package, ONNX Runtime), with a
new process's time to its first answer, its steady latency, what it ships, and the calls after which
it pays back against eager in a new process. Read from the cells (aggregate.to_dataframe), computed
once here; report/startup.py says it in words. No torch.

Pay-back against eager in a new process: a replica of the form has answered n calls after
first_answer + (n - 1) × its latency, eager's after its own first answer and latency: the form pays back
once its extra seconds before the first answer (none where it answers first) are covered by what it
saves a call (stats.breakeven_calls); never where it is not faster a call. The latencies are the cell's
median and eager's over the same rounds (eager_ms_median).
"""

from __future__ import annotations

import math

import pandas as pd

from ..config.configurations import BASELINE, configuration
from .stats import breakeven_calls

# how a new process starts: "eager" (no compile); "cold" (torch.compile, an empty compiler cache), "warm"
# (its own cache, filled by an earlier process on the machine); "shipped" (a file built ahead of time:
# cache artifacts, a precompiled function, a package, an ONNX file)
STARTS = ("eager", "cold", "warm", "shipped")
COLUMNS = ["label", "model", "batch_size", "configuration", "start", "status", "error", "first_answer_s",
           "latency_ms", "eager_first_answer_s", "eager_ms", "ships_bytes", "built_s", "payback_calls",
           "accuracy_ok", "regions_at"]


def starts_of(name: str) -> tuple[str, ...]:
    """The starts a configuration's cell gives: eager's; a form shipping a file, its load; torch.compile,
    cold and warm."""
    config = configuration(name)
    if not config.compiled:
        return ("eager",)
    if config.packaged or config.artifacts:
        return ("shipped",)
    return ("cold", "warm")


def timed(df: pd.DataFrame) -> bool:
    """Did the run time a new process's start (first_answer_s) of any configuration?"""
    return "first_answer_s" in df and bool(df["first_answer_s"].notna().any())


def payback_calls(first_s: float, eager_first_s: float, latency_ms: float, eager_ms: float) -> float:
    """Calls after which a form's replica has answered as many as eager's started at the same moment (0:
    from its first call; inf: never, not faster a call); NaN without the figures."""
    if any(value is None or pd.isna(value) for value in (first_s, eager_first_s, latency_ms, eager_ms)):
        return math.nan
    return breakeven_calls(max(first_s - eager_first_s, 0.0), eager_ms, latency_ms)


def start_rows(df: pd.DataFrame) -> pd.DataFrame:
    """One row per start of every cell (`STARTS`, in configuration order), with its figures; a cell that
    did not end ok is one row with its status and error."""
    records = []
    for (label, model, batch), cells in df.groupby(["label", "model", "batch_size"], sort=False):
        eager = cells[cells["configuration"] == BASELINE]
        eager_first = eager["first_answer_s"].iloc[0] if len(eager) else math.nan
        for cell in cells.to_dict("records"):
            for start in starts_of(cell["configuration"]):
                records.append(_start_record(cell, start, eager_first) | {"label": label, "model": model,
                                                                           "batch_size": batch})
    return pd.DataFrame.from_records(records, columns=COLUMNS)


def _start_record(cell: dict, start: str, eager_first: float) -> dict:
    first = cell.get("first_answer_cold_s") if start == "cold" else cell.get("first_answer_s")
    ok = cell["status"] == "ok"
    eager_ms = cell["latency_ms_median"] if start == "eager" else cell.get("eager_ms_median")
    record = {"configuration": cell["configuration"], "start": start, "status": cell["status"],
              "error": cell.get("error") or "", "first_answer_s": first if ok else math.nan,
              "latency_ms": cell["latency_ms_median"] if ok else math.nan, "eager_first_answer_s": eager_first,
              "eager_ms": eager_ms, "ships_bytes": cell.get("ships_bytes") if start == "shipped" else math.nan,
              "built_s": cell.get("compile_s") if start == "shipped" else math.nan,
              "accuracy_ok": cell.get("accuracy_ok"), "regions_at": cell.get("regions_at") or ""}
    record["payback_calls"] = (payback_calls(record["first_answer_s"], eager_first, record["latency_ms"], eager_ms)
                               if ok and start != "eager" else math.nan)
    return record


def soonest(rows: pd.DataFrame) -> dict | None:
    """Of one model's starts, the one at its full speed soonest among those faster than eager a call and
    accurate: the least first answer (None where none is faster than eager)."""
    faster = rows[(rows["status"] == "ok") & (rows["start"] != "eager") & (rows["accuracy_ok"] != False)  # noqa: E712
                  & (rows["latency_ms"] < rows["eager_ms"]) & rows["first_answer_s"].notna()]
    if faster.empty:
        return None
    return faster.loc[faster["first_answer_s"].idxmin()].to_dict()
