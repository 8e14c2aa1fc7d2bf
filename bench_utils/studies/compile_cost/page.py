"""The compile-time study on a page: its frame (each strategy against the sweep's eager median), its
table and chart, in words. No torch."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from .rows import STRATEGIES, CompileCostResult

COLUMNS = ["label", "model", "task_model", "size", "batch_size", "configuration", "strategy", "status", "error",
           "applicable", "note", "compile_s", "artifact_load_s", "compile_total_s", "compile_saving_s",
           "compile_saving_pct", "eager_ms_median", "latency_ms_median", "speedup", "graph_count", "fx_cache_hits",
           "fx_cache_misses", "artifact_bytes", "max_abs_diff", "accuracy_ok", "device", "duration_s"]
_COPIED = [c for c in COLUMNS if c in {f.name for f in dataclasses.fields(CompileCostResult)}]
NOT_APPLICABLE = "N/A"


def eager_medians(sweep_frame) -> dict[tuple[str, int], float]:
    """(model, batch_size) -> the eager cell's median ms, from the sweep's DataFrame (aggregate.to_dataframe)
    of one run; cells that did not end ok are left out."""
    from ...report.tables import one_label

    one_label(sweep_frame, "sweep_frame")
    eager = sweep_frame[(sweep_frame["configuration"] == "eager") & (sweep_frame["status"] == "ok")]
    return {(row.model, int(row.batch_size)): float(row.latency_ms_median) for row in eager.itertuples()
            if math.isfinite(row.latency_ms_median)}


def _total_s(row: dict) -> float:
    """compile_s + artifact_load_s of an ok, applicable row; NaN otherwise."""
    if row["status"] != "ok" or not row["applicable"] or row["compile_s"] is None:
        return math.nan
    return row["compile_s"] + (row["artifact_load_s"] or 0.0)


def _baseline_key(row: dict) -> tuple:
    return (row["model"], row["size"], row["batch_size"], row["configuration"])


def compile_cost_frame(rows, eager_ms: dict) -> pd.DataFrame:
    """One row per (model, strategy), models in registry order, strategies in STRATEGIES order.
    `eager_ms`: (model, batch_size) -> the sweep's eager median ms (eager_medians)."""
    from ...config.registry import display_name
    from ...report.tables import numeric_column, sort_rows

    records = [{c: getattr(row, c) for c in _COPIED} for row in rows]
    for record in records:
        record["compile_total_s"] = _total_s(record)
    whole = {_baseline_key(r): r["compile_total_s"] for r in records if r["strategy"] == "whole"}
    for record in records:
        baseline = whole.get(_baseline_key(record), math.nan)
        record["compile_saving_s"] = baseline - record["compile_total_s"]
        record["compile_saving_pct"] = 100.0 * record["compile_saving_s"] / baseline if baseline > 0 else math.nan
        record["eager_ms_median"] = eager_ms.get((record["model"], record["batch_size"]), math.nan)
        record["task_model"] = display_name(record["model"])
    frame = pd.DataFrame.from_records(records, columns=COLUMNS)
    for column in ("compile_s", "artifact_load_s", "latency_ms_median", "graph_count", "fx_cache_hits",
                   "fx_cache_misses", "artifact_bytes", "max_abs_diff"):
        frame[column] = numeric_column(frame, column).where(frame["status"] == "ok")
    frame["speedup"] = frame["eager_ms_median"] / frame["latency_ms_median"]
    return sort_rows(frame, ["model", "batch_size", "strategy"], {"strategy": STRATEGIES})


def _outcome(row) -> str:
    """What a row shows where numbers are missing: N/A, the status in capitals, or ""."""
    if row.status != "ok":
        return row.status.upper()
    return "" if row.applicable else NOT_APPLICABLE


def _text(value: float, integer: bool = False) -> str:
    """`value` as a page writes a number (report/display.number: 3 significant figures); "" when missing."""
    from ...report.display import number

    return "" if value is None or not math.isfinite(value) else number(value, integer=integer)


def _saving(row) -> str:
    if row.strategy == "whole":
        return "baseline" if math.isfinite(row.compile_total_s) else ""
    if not (math.isfinite(row.compile_saving_s) and math.isfinite(row.compile_saving_pct)):
        return ""
    return f"{-row.compile_saving_s:+.1f} s ({-row.compile_saving_pct:+.0f}%)"  # a change: minus is faster


def compile_cost_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The study to show: per model and strategy, time to first answer, its saving, steady speed."""
    from ...report.display import number

    rows = list(frame.itertuples())
    return pd.DataFrame({
        "Model": frame["task_model"], "strategy": frame["strategy"],
        # compile seconds to 0.1 s, as in "compile vs whole" and the verdict
        "compile (s)": [f"{r.compile_total_s:.1f}" if math.isfinite(r.compile_total_s) else _outcome(r) for r in rows],
        "compile vs whole": [_saving(r) for r in rows],
        "latency (ms)": [_text(r.latency_ms_median) for r in rows],
        "speedup vs eager": [_text(r.speedup) for r in rows],
        "graphs": [_text(r.graph_count, integer=True) for r in rows],
        "FX cache hits/misses": [f"{number(r.fx_cache_hits, integer=True)}/{number(r.fx_cache_misses, integer=True)}"
                                 if math.isfinite(r.fx_cache_hits) else "" for r in rows],
        "artifacts (MB)": [_text(r.artifact_bytes / 1e6) for r in rows],
        "note": [r.error if r.status != "ok" else r.note for r in rows]})


def compile_cost_chart(frame: pd.DataFrame):
    """Per model, one bar per strategy: time to first compiled answer (s), the steady speedup vs
    eager written at the end of each bar; strategies that do not apply or failed say so."""
    import seaborn as sns

    from ...report.grouped_bars import BAR_SLOT_IN, NO_DATA, Bars, empty_figure, figure, grouped_barh, legend, status_notes
    from ...config.registry import display_name
    from ...report.tables import ordered_models

    colors = dict(zip(STRATEGIES, sns.color_palette("colorblind", 8)[4:7]))
    if frame.empty or not np.isfinite(frame["compile_total_s"].to_numpy(float)).any():
        return empty_figure(f"compile-time study: {NO_DATA}")
    models = ordered_models(frame["model"])
    series, speedups = [], []
    for strategy in [s for s in STRATEGIES if s in set(frame["strategy"])]:
        cells = frame[frame["strategy"] == strategy].drop_duplicates("model").set_index("model").reindex(models)
        notes = [NOT_APPLICABLE if ok == "ok" and applicable is False else note for ok, applicable, note
                 in zip(cells["status"], cells["applicable"], status_notes(cells["status"]))]
        values = cells["compile_total_s"].to_numpy(float)
        series.append(Bars(strategy, values, colors.get(strategy), notes))
        speedups.append(cells["speedup"].to_numpy(float)[np.isfinite(values)])
    fig, axes = figure(8, 1.2 + BAR_SLOT_IN * len(models) * len(series))
    ax = axes[0, 0]
    grouped_barh(ax, [display_name(m) for m in models], series)
    for container, values in zip(ax.containers, speedups):  # one BarContainer per series, drawn bars only
        for patch, speedup in zip(container.patches, values):
            if math.isfinite(speedup):
                ax.text(patch.get_width(), patch.get_y() + patch.get_height() / 2, f" ×{_text(speedup)}",
                        va="center", ha="left", fontsize=8)
    ax.margins(x=0.15)  # room for the speedup labels
    ax.set_xlabel("time to first compiled answer, s (cache-artifacts: loading them included)")
    ax.set_title("Compile time by strategy (×: steady speedup vs eager)")
    legend(ax, series, "strategy")
    return fig


def speed_words(row) -> str:
    from ...report.display import number

    if math.isfinite(row["speedup"]):
        return f"×{number(row['speedup'])} vs eager"
    return f"{number(row['latency_ms_median'])} ms"


SPEED_CAVEAT = ("Speeds here come from one process per strategy (no interval): the sweep's cells above carry "
                "the intervals; trust this study for compile times.")
