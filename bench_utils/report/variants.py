"""Precision and layout variants (dtype, autocast, channels_last) compared: the best configuration
per model, eager and compiled, against the guide's float32 eager. No torch."""

from __future__ import annotations

import math

import pandas as pd

from .tables import MISSING, check_frame, model_label, numeric_column, ordered_models

BASELINE_VARIANT = "float32"  # the guide's precision and layout: the baseline of best_configuration


def best_configuration(df) -> pd.DataFrame:
    """Per hardware, model and batch size: the fastest eager variant, the fastest compiled variant
    and mode, and each one's speedup over float32 eager (medians of successful cells, ms).

    Variants are precision/layout runs (`variant` column: dtype, autocast, channels_last); a missing
    float32 eager cell leaves the speedups NaN.
    """
    check_frame(df)
    ok = df[df["status"] == "ok"].assign(ms=lambda t: numeric_column(t, "latency_ms_median"))
    records = []
    for (hardware, model, batch), cell in ok.groupby(["hardware", "model", "batch_size"], sort=False):
        eager, compiled = cell[cell["mode"] == "eager"], cell[cell["mode"] != "eager"]
        baseline = eager.loc[eager["variant"] == BASELINE_VARIANT, "ms"].min()
        record = {"hardware": hardware, "model": model, "task_model": model_label(model),
                  "batch_size": int(batch), "float32_eager_ms": baseline}
        for kind, rows in (("eager", eager), ("compiled", compiled)):
            best = rows.loc[rows["ms"].idxmin()] if not rows.empty else None
            name = MISSING if best is None else best["variant"] + ("" if kind == "eager" else f" · {best['mode']}")
            ms = math.nan if best is None else float(best["ms"])
            record |= {f"best_{kind}": name, f"best_{kind}_ms": ms, f"best_{kind}_speedup": baseline / ms}
        records.append(record)
    columns = ["hardware", "model", "task_model", "batch_size", "float32_eager_ms", "best_eager", "best_eager_ms",
               "best_eager_speedup", "best_compiled", "best_compiled_ms", "best_compiled_speedup"]
    table = pd.DataFrame.from_records(records, columns=columns)
    rank = {name: i for i, name in enumerate(ordered_models(table["model"]))}
    table = table.assign(_model=table["model"].map(rank)).sort_values(["hardware", "_model", "batch_size"])
    return table.drop(columns="_model").reset_index(drop=True)
