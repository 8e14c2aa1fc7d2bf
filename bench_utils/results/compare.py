"""Two runs of the same cells side by side (e.g. two torch versions on one GPU): numbers and codes only;
report/run_comparison.py draws and words them. No torch.

Both frames come from ``aggregate.to_dataframe(rows, with_samples=True)``: the raw ``samples_s`` of each
process let each cell's change carry the 95% CI of the ratio of medians that speedups use
(stats.speedup_over_processes: between processes when both runs have repeats), so a change is
called significant only when that interval excludes "no change".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .stats import speedup_over_processes

# A cell within one run: every other setting is the same for all rows of a results file (its
# settings fingerprint), so two runs that differ in one setting (torch version, fullgraph) are compared
# cell by cell, and `before_variant`/`after_variant` say which.
KEY = ["model", "size", "batch_size", "configuration"]
STATS = ("median", "mean")
COMPARISON_COLUMNS = KEY + ["before_ms", "after_ms", "change_pct", "change_ci95_low_pct", "change_ci95_high_pct",
                      "significant", "ratio", "ratio_ci95_low", "ratio_ci95_high", "n_before", "n_after",
                      "before_torch", "after_torch", "before_fullgraph", "after_fullgraph",
                      "before_hardware", "after_hardware"]
# why a cell is not compared: in one run only, or not ok in one (its statuses beside)
ONLY_BEFORE, ONLY_AFTER, NOT_OK = "only_before", "only_after", "not_ok"
UNMATCHED_COLUMNS = KEY + ["reason", "before_status", "after_status"]


@dataclass(frozen=True)
class RunComparison:
    cells: object  # DataFrame, one row per cell ok in both runs (COMPARISON_COLUMNS)
    unmatched: object  # DataFrame (UNMATCHED_COLUMNS): the reason a code, ONLY_BEFORE, ONLY_AFTER or NOT_OK
    stat: str  # latency statistic behind before_ms / after_ms / change_pct


def compare_runs(before_df, after_df, stat: str = "median") -> RunComparison:
    """Per cell: before and after latency (ms), change % (negative = faster), CI and significance.

    change_pct uses `stat` ("median" or "mean" latency); the CI and `significant` always come from
    the ratio of medians over the raw samples of each process (before median / after median).
    """
    import pandas as pd

    if stat not in STATS:
        raise ValueError(f"stat: {stat!r} is not allowed; allowed: {', '.join(STATS)}")
    before = _indexed(before_df, "before_df")
    after = _indexed(after_df, "after_df")
    records, unmatched = [], []
    for key in sorted(set(before) | set(after)):
        b, a = before.get(key), after.get(key)
        if b is None or a is None:
            unmatched.append((*key, ONLY_AFTER if b is None else ONLY_BEFORE, b and b["status"], a and a["status"]))
        elif b["status"] != "ok" or a["status"] != "ok":
            unmatched.append((*key, NOT_OK, b["status"], a["status"]))
        else:
            records.append(_cell(key, b, a, stat))
    return RunComparison(pd.DataFrame.from_records(records, columns=COMPARISON_COLUMNS),
                         pd.DataFrame.from_records(unmatched, columns=UNMATCHED_COLUMNS), stat)


def _indexed(df, name: str) -> dict:
    if "samples_s" not in df.columns:
        raise ValueError(f"{name}: no samples_s column; build it with to_dataframe(rows, with_samples=True)")
    rows = {}
    for row in df.to_dict("records"):
        key = (row["model"], row["size"], int(row["batch_size"]), row["configuration"])
        if key in rows:
            raise ValueError(f"{name}: cell {key} appears twice; keep one run (one hardware label) per frame")
        rows[key] = row
    return rows


def _cell(key: tuple, before: dict, after: dict, stat: str) -> dict:
    before_ms, after_ms = before[f"latency_ms_{stat}"], after[f"latency_ms_{stat}"]
    ratio = low = high = math.nan
    significant = False
    if before["samples_s"] and after["samples_s"]:
        est = speedup_over_processes(before["samples_s"], after["samples_s"])
        ratio, low, high, significant = est.speedup, est.ci95_low, est.ci95_high, est.significant
    return dict(zip(KEY, key)) | {
        "before_ms": before_ms, "after_ms": after_ms,
        "change_pct": (after_ms - before_ms) / before_ms * 100.0,
        # after/before = 1/ratio, so the ratio's upper bound gives the change's lower bound
        "change_ci95_low_pct": (1.0 / high - 1.0) * 100.0, "change_ci95_high_pct": (1.0 / low - 1.0) * 100.0,
        "significant": significant, "ratio": ratio, "ratio_ci95_low": low,
        "ratio_ci95_high": high, "n_before": sum(map(len, before["samples_s"])),
        "n_after": sum(map(len, after["samples_s"])),
        "before_torch": before.get("torch", ""), "after_torch": after.get("torch", ""),
        "before_fullgraph": bool(before.get("fullgraph")), "after_fullgraph": bool(after.get("fullgraph")),
        "before_hardware": before.get("hardware", ""), "after_hardware": after.get("hardware", ""),
    }


AGREEMENT_FIGURES = {"eager median": ("latency_ms_median", "latency_ms_ci95_low", "latency_ms_ci95_high"),
                     "speedup": ("race_speedup", "race_ci95_low", "race_ci95_high")}  # the figure a page reports


def rerun_agreement(first_df, second_df):
    """Do two runs of the same cells agree within their own intervals? For every cell ok in both:
    whether each run's eager median (eager cells) and speedup (compiled cells) falls inside the
    other run's 95% interval. A method whose intervals are honest has most figures inside."""
    import pandas as pd

    merged = pd.merge(first_df[first_df["status"] == "ok"], second_df[second_df["status"] == "ok"], on=KEY,
                      suffixes=("_1", "_2"))
    records = []
    for row in merged.to_dict("records"):
        figure = "eager median" if row["configuration"] == "eager" else "speedup"
        value, low, high = AGREEMENT_FIGURES[figure]
        records.append({**{k: row[k] for k in KEY}, "figure": figure, "run1": row[f"{value}_1"],
                        "run1_low": row[f"{low}_1"], "run1_high": row[f"{high}_1"], "run2": row[f"{value}_2"],
                        "run2_low": row[f"{low}_2"], "run2_high": row[f"{high}_2"],
                        "run2_in_run1": bool(row[f"{low}_1"] <= row[f"{value}_2"] <= row[f"{high}_1"]),
                        "run1_in_run2": bool(row[f"{low}_2"] <= row[f"{value}_1"] <= row[f"{high}_2"])})
    return pd.DataFrame.from_records(records, columns=KEY + ["figure", "run1", "run1_low", "run1_high", "run2",
                                                             "run2_low", "run2_high", "run2_in_run1", "run1_in_run2"])
