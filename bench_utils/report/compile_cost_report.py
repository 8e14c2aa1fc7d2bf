"""The compile-time study for the report: the one place CompileCostResult rows become a DataFrame,
its display table, its chart and its verdict. No torch.

Every speedup divides the sweep's eager median of the same model and batch size (`eager_medians` of
the sweep's DataFrame) by the study's compiled median: the sweep and the study show one eager number.
Compile time is compared as `compile_total_s` = compile_s + artifact_load_s, what a fresh process
waits for its first compiled answer (loading the artifacts is part of that warm start); savings are
against "whole", the same model compiled whole from an empty cache.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from ..results.rows import read_rows
from ..results.study_results import STRATEGIES, CompileCostResult, compile_cost_path
from .grouped_bars import BAR_SLOT_IN, NO_DATA, Bars, empty_figure, figure, grouped_barh, legend, status_notes
from .tables import model_label, numeric_column, ordered_models

COLUMNS = ["label", "model", "task_model", "size", "batch_size", "dtype", "mode", "strategy", "status", "error",
           "applicable", "note", "compile_s", "artifact_load_s", "compile_total_s", "compile_saving_s",
           "compile_saving_pct", "eager_ms_median", "latency_ms_median", "speedup", "graph_count", "fx_cache_hits",
           "fx_cache_misses", "artifact_bytes", "max_abs_diff", "accuracy_ok", "device", "duration_s"]
_COPIED = [c for c in COLUMNS if c in {f.name for f in dataclasses.fields(CompileCostResult)}]
STRATEGY_COLORS = dict(zip(STRATEGIES, sns.color_palette("colorblind", 8)[4:7]))
NOT_APPLICABLE = "N/A"


def eager_medians(sweep_frame) -> dict[tuple[str, int], float]:
    """(model, batch_size) -> the eager cell's median ms, from the sweep's DataFrame (aggregate.to_dataframe)
    of one run; cells that did not end ok are left out."""
    labels = set(sweep_frame["label"])
    if len(labels) > 1:
        raise ValueError(f"sweep_frame: holds several labels ({', '.join(sorted(labels))}); pass one run's rows")
    eager = sweep_frame[(sweep_frame["mode"] == "eager") & (sweep_frame["status"] == "ok")]
    return {(row.model, int(row.batch_size)): float(row.latency_ms_median) for row in eager.itertuples()
            if math.isfinite(row.latency_ms_median)}


def _total_s(row: dict) -> float:
    """compile_s + artifact_load_s of an ok, applicable row; NaN otherwise."""
    if row["status"] != "ok" or not row["applicable"] or row["compile_s"] is None:
        return math.nan
    return row["compile_s"] + (row["artifact_load_s"] or 0.0)


def _baseline_key(row: dict) -> tuple:
    return (row["model"], row["size"], row["batch_size"], row["dtype"], row["mode"])


def compile_cost_frame(rows, eager_ms: dict) -> pd.DataFrame:
    """One row per (model, strategy), models in registry order, strategies in STRATEGIES order.
    `eager_ms`: (model, batch_size) -> the sweep's eager median ms (eager_medians)."""
    records = [{c: getattr(row, c) for c in _COPIED} for row in rows]
    for record in records:
        record["compile_total_s"] = _total_s(record)
    whole = {_baseline_key(r): r["compile_total_s"] for r in records if r["strategy"] == "whole"}
    for record in records:
        baseline = whole.get(_baseline_key(record), math.nan)
        record["compile_saving_s"] = baseline - record["compile_total_s"]
        record["compile_saving_pct"] = 100.0 * record["compile_saving_s"] / baseline if baseline > 0 else math.nan
        record["eager_ms_median"] = eager_ms.get((record["model"], record["batch_size"]), math.nan)
        record["task_model"] = model_label(record["model"])
    frame = pd.DataFrame.from_records(records, columns=COLUMNS)
    for column in ("compile_s", "artifact_load_s", "latency_ms_median", "graph_count", "fx_cache_hits",
                   "fx_cache_misses", "artifact_bytes", "max_abs_diff"):
        frame[column] = numeric_column(frame, column).where(frame["status"] == "ok")
    frame["speedup"] = frame["eager_ms_median"] / frame["latency_ms_median"]
    model_rank = {name: i for i, name in enumerate(ordered_models(frame["model"]))}
    strategy_rank = {name: i for i, name in enumerate(STRATEGIES)}
    order = frame.assign(_m=frame["model"].map(model_rank), _s=frame["strategy"].map(strategy_rank))
    order = order.sort_values(["_m", "batch_size", "_s"], kind="stable")
    return order.drop(columns=["_m", "_s"]).reset_index(drop=True)


def load_compile_cost_frame(results_path, sweep_frame) -> pd.DataFrame:
    """The study's rows next to a sweep's results.jsonl, against that sweep's eager cells."""
    rows = read_rows(compile_cost_path(results_path), CompileCostResult).rows
    return compile_cost_frame(rows, eager_medians(sweep_frame))


def _outcome(row) -> str:
    """What a row shows where numbers are missing: N/A, the status in capitals, or ""."""
    if row.status != "ok":
        return row.status.upper()
    return "" if row.applicable else NOT_APPLICABLE


def _text(value: float, fmt: str, missing: str) -> str:
    return missing if value is None or not math.isfinite(value) else format(value, fmt)


def _saving(row) -> str:
    if row.strategy == "whole":
        return "baseline" if math.isfinite(row.compile_total_s) else ""
    if not (math.isfinite(row.compile_saving_s) and math.isfinite(row.compile_saving_pct)):
        return ""
    return f"{-row.compile_saving_s:+.1f} s ({-row.compile_saving_pct:+.0f}%)"  # a change: minus is faster


def compile_cost_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The study to show: per model and strategy, time to first answer, its saving, steady speed."""
    rows = list(frame.itertuples())
    return pd.DataFrame({
        "Model": frame["task_model"], "strategy": frame["strategy"],
        "compile (s)": [_text(r.compile_total_s, ".1f", _outcome(r)) for r in rows],
        "compile vs whole": [_saving(r) for r in rows],
        "latency (ms)": [_text(r.latency_ms_median, ".2f", "") for r in rows],
        "speedup vs eager": [_text(r.speedup, ".2f", "") for r in rows],
        "graphs": [_text(r.graph_count, ".0f", "") for r in rows],
        "FX cache hits/misses": [f"{r.fx_cache_hits:.0f}/{r.fx_cache_misses:.0f}" if math.isfinite(r.fx_cache_hits)
                                 else "" for r in rows],
        "artifacts (MB)": [_text(r.artifact_bytes / 1e6, ".2f", "") for r in rows],
        "note": [r.error if r.status != "ok" else r.note for r in rows]})


def compile_cost_chart(frame: pd.DataFrame) -> Figure:
    """Per model, one bar per strategy: time to first compiled answer (s), the steady speedup vs
    eager written at the end of each bar; strategies that do not apply or failed say so."""
    if frame.empty or not np.isfinite(frame["compile_total_s"].to_numpy(float)).any():
        return empty_figure(f"compile-time study: {NO_DATA}")
    models = ordered_models(frame["model"])
    series, speedups = [], []
    for strategy in [s for s in STRATEGIES if s in set(frame["strategy"])]:
        cells = frame[frame["strategy"] == strategy].drop_duplicates("model").set_index("model").reindex(models)
        notes = [NOT_APPLICABLE if ok == "ok" and applicable is False else note for ok, applicable, note
                 in zip(cells["status"], cells["applicable"], status_notes(cells["status"]))]
        values = cells["compile_total_s"].to_numpy(float)
        series.append(Bars(strategy, values, STRATEGY_COLORS.get(strategy), notes))
        speedups.append(cells["speedup"].to_numpy(float)[np.isfinite(values)])
    fig, axes = figure(8, 1.2 + BAR_SLOT_IN * len(models) * len(series))
    ax = axes[0, 0]
    grouped_barh(ax, [model_label(m) for m in models], series)
    for container, values in zip(ax.containers, speedups):  # one BarContainer per series, drawn bars only
        for patch, speedup in zip(container.patches, values):
            if math.isfinite(speedup):
                ax.text(patch.get_width(), patch.get_y() + patch.get_height() / 2, f" ×{speedup:.2f}",
                        va="center", ha="left", fontsize=8)
    ax.margins(x=0.15)  # room for the speedup labels
    ax.set_xlabel("time to first compiled answer, s (cache-artifacts: loading them included)")
    ax.set_title("Compile time by strategy (×: steady speedup vs eager)")
    legend(ax, series, "strategy")
    return fig


def _speed(row) -> str:
    return f"×{row.speedup:.2f} vs eager" if math.isfinite(row.speedup) else f"{row.latency_ms_median:.2f} ms"


def _model_line(cells: pd.DataFrame) -> str:
    name = cells["task_model"].iloc[0]
    whole = cells[cells["strategy"] == "whole"]
    if whole.empty or not math.isfinite(whole["compile_total_s"].iloc[0]):
        state = whole["status"].iloc[0] if not whole.empty else "not measured"
        return f"**{name}**: no whole-model compile to compare with ({state})"
    base = whole.iloc[0]
    others = cells[(cells["strategy"] != "whole") & np.isfinite(cells["compile_total_s"].to_numpy(float))]
    asides = [f"{r.strategy}: " + (f"not applicable ({r.note.split(':')[0]})" if r.status == "ok" else r.status)
              for r in cells.itertuples() if r.strategy != "whole" and not math.isfinite(r.compile_total_s)]
    if others.empty or others["compile_total_s"].min() >= base.compile_total_s:
        line = (f"**{name}**: nothing cut compile time below whole-model compile ({base.compile_total_s:.1f} s, "
                f"{_speed(base)})")
    else:
        best = others.loc[others["compile_total_s"].idxmin()]
        line = (f"**{name}**: {best.strategy} cuts compile time the most, {base.compile_total_s:.1f} s → "
                f"{best.compile_total_s:.1f} s (−{best.compile_saving_pct:.0f}%), at {_speed(best)} "
                f"(whole: {_speed(base)})")
        if best.accuracy_ok is False:
            asides.insert(0, "its output differs from eager beyond tolerance")
    return line + "".join(f"; {aside}" for aside in asides)


SPEED_CAVEAT = ("Speeds here come from one process per strategy (no interval): the sweep's cells above carry "
                "the intervals; trust this study for compile times.")


def compile_cost_verdict(frame: pd.DataFrame) -> str:
    """Markdown, one line per model: what cuts compile time the most and what it costs in speed, then
    SPEED_CAVEAT."""
    if frame.empty:
        return "No compile-time study rows: no verdict."
    lines = [f"- {_model_line(frame[frame['model'] == model])}" for model in ordered_models(frame["model"])]
    return "\n".join(lines) + "\n\n" + SPEED_CAVEAT
