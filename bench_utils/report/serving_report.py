"""The serving study's report: its rows as a DataFrame (the one place), a display table, a chart per
model and the verdict. No torch.

Two totals per (model, setting) make the comparison:
- `sequence_s`: the sequence served once from a cold start, each request's wall time including the
  graphs it compiled (what the first requests of a new server cost);
- `steady_sequence_ms`: the same requests served again once warm, each at the steady-state median of
  its batch size (what every later pass costs). `speedup` is eager's over it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from ..results.aggregate import DISTURBED_PCT
from ..results.rows import read_rows
from ..results.stats import breakeven_calls
from ..results.study_results import RECOMPILE_LIMIT_NOTE, SERVING_SETTINGS, ServingResult, serving_path
from .grouped_bars import Bars, empty_figure, figure, grouped_barh, legend, status_notes
from .tables import MISSING, MODEL_INDEX_NAME, model_label, ordered_models

MIN_GAIN = 0.05  # a compiled setting must serve the steady sequence this much faster than eager (x 1.05)
SETTING_COLORS = dict(zip(SERVING_SETTINGS, sns.color_palette("colorblind", len(SERVING_SETTINGS))))
_LIMIT_PREFIX = RECOMPILE_LIMIT_NOTE.split("(")[0]  # "recompile_limit "
_LISTS = ("sequence", "step_ms", "step_compiled", "recompile_reasons")


def batch_sizes(frame: pd.DataFrame) -> list[int]:
    """The batch sizes with a steady-state column, ascending."""
    return sorted(int(c.removeprefix("steady_ms_bs")) for c in frame.columns if c.startswith("steady_ms_bs"))


def _numbers(row) -> dict:
    """A row's counts and totals: graphs compiled, requests after the first that compiled, compile
    time, both sequence totals, and whether dynamo hit its recompile limit. NaN for a failed row."""
    ok = row.status == "ok"
    steady = [row.steady_ms.get(str(b), math.nan) for b in row.sequence] if ok else [math.nan]
    return {"compiles": row.compiles if ok and row.compiles is not None else math.nan,
            "recompiles": sum(row.step_compiled[1:]) if ok else math.nan,
            "compile_total_s": row.compile_total_s if ok and row.compile_total_s is not None else math.nan,
            "sequence_s": sum(row.step_ms) / 1000.0 if ok and row.step_ms else math.nan,  # ms -> s
            "steady_sequence_ms": float(sum(steady)),
            "limit_hit": any(reason.startswith(_LIMIT_PREFIX) for reason in row.recompile_reasons),
            # the busiest moment others had while this row timed its steady states, % of the machine
            "others_cpu_pct": max(row.steady_others_cpu_pct.values(), default=math.nan)}


def _record(row) -> dict:
    record = {"label": row.label, "model": row.model, "size": row.size, "dtype": row.dtype, "device": row.device,
              "setting": row.setting, "mode": row.mode, "status": row.status, "error": row.error,
              "weights": row.weights, **{name: list(getattr(row, name)) for name in _LISTS}, **_numbers(row)}
    for batch_size in sorted({int(b) for b in row.steady_ms}):
        record[f"steady_ms_bs{batch_size}"] = row.steady_ms[str(batch_size)] if row.status == "ok" else math.nan
    return record


def serving_frame(rows) -> pd.DataFrame:
    """One row per (model, setting) from ServingResult rows: compiles, recompiles (requests after the
    first that compiled), compile_total_s, the two sequence totals, steady_ms_bs<N> per batch size,
    and each one's speedup over the eager setting of the same model (speedup, speedup_bs<N>), plus
    payback_passes: passes of the sequence after which the compile time is paid back. Failed rows
    keep their status with NaN numbers. Ordered by model (registry order), then SERVING_SETTINGS."""
    frame = pd.DataFrame.from_records([_record(row) for row in rows])
    if frame.empty:
        return frame
    if frame.duplicated(["model", "setting"]).any():
        raise ValueError("rows: more than one row per model and setting (several labels, sizes or dtypes?)")
    eager = frame[frame["setting"] == "eager"].set_index("model")
    baseline = lambda column: frame["model"].map(eager[column])  # noqa: E731 - each row's eager value (NaN: none)

    frame["speedup"] = baseline("steady_sequence_ms") / frame["steady_sequence_ms"]
    for batch_size in batch_sizes(frame):
        frame[f"speedup_bs{batch_size}"] = baseline(f"steady_ms_bs{batch_size}") / frame[f"steady_ms_bs{batch_size}"]
    frame["payback_passes"] = [
        breakeven_calls(c, e, s) if row_setting != "eager" and not np.isnan([c, e, s]).any() else math.nan
        for c, e, s, row_setting in zip(frame["compile_total_s"], baseline("steady_sequence_ms"),
                                        frame["steady_sequence_ms"], frame["setting"])]
    order = {model: i for i, model in enumerate(ordered_models(frame["model"]))}
    frame = frame.sort_values(["model", "setting"], key=lambda column: column.map(
        order if column.name == "model" else {s: i for i, s in enumerate(SERVING_SETTINGS)}))
    return frame.reset_index(drop=True)


def load_serving_frame(results_path) -> pd.DataFrame:
    """The study's rows next to a sweep's results.jsonl (empty when the study was not asked for)."""
    return serving_frame(read_rows(serving_path(results_path), ServingResult).rows)


def _cell(value: float, fmt: str, status: str) -> str:
    if status != "ok":
        return status.upper()
    return MISSING if pd.isna(value) else format(value, fmt)


def serving_table(frame: pd.DataFrame) -> pd.DataFrame:
    """For display: (Task/Model, setting) x compiles, recompiles, compile time, both sequence totals,
    steady ms per batch size and the speedup over eager; failed settings show their status."""
    if frame.empty:
        return pd.DataFrame()
    columns = {"compiles": ("compiles", "d"), "recompiles": ("recompiles", "d"),
               "compile_total_s": ("compile total (s)", ".1f"), "sequence_s": ("cold sequence (s)", ".2f"),
               "steady_sequence_ms": ("steady sequence (ms)", ".2f"),
               **{f"steady_ms_bs{b}": (f"bs {b} (ms)", ".3f") for b in batch_sizes(frame)},
               "speedup": ("speedup (x)", ".2f")}
    table = pd.DataFrame(index=pd.MultiIndex.from_arrays(
        [[model_label(m) for m in frame["model"]], list(frame["setting"])], names=[MODEL_INDEX_NAME, "setting"]))
    for column, (title, fmt) in columns.items():
        values = frame[column].astype(float)
        table[title] = [_cell(int(v) if fmt == "d" and not pd.isna(v) else v, fmt, s)
                        for v, s in zip(values, frame["status"])]
    table["recompile reasons"] = ["; ".join(r) for r in frame["recompile_reasons"]]
    return table


def _timeline(ax, rows: pd.DataFrame) -> None:
    """Wall time per request in sequence order (log y), one line per setting; circled where it compiled."""
    for row in rows.itertuples():
        if not row.step_ms:
            continue
        x = np.arange(1, len(row.step_ms) + 1)
        ms, compiled = np.asarray(row.step_ms, float), np.asarray(row.step_compiled, bool)
        color = SETTING_COLORS.get(row.setting)
        ax.plot(x, ms, marker=".", color=color, label=row.setting)
        ax.scatter(x[compiled], ms[compiled], s=80, facecolors="none", edgecolors=color, linewidths=1.5)
    sequence = max(rows["sequence"], key=len)
    ax.set_xticks(np.arange(1, len(sequence) + 1), [str(b) for b in sequence])
    ax.set_yscale("log")
    ax.set_xlabel("request (its batch size), in order")
    ax.set_ylabel("wall time per request (ms, log)")
    ax.set_title("Requests in order (circled: compiled)")
    ax.legend(title="setting", fontsize=8)


def _steady_bars(ax, rows: pd.DataFrame, sizes: list[int]) -> None:
    series = [Bars(row.setting, np.array([getattr(row, f"steady_ms_bs{b}") for b in sizes], float),
                   SETTING_COLORS.get(row.setting), status_notes([row.status] * len(sizes)))
              for row in rows.itertuples()]
    grouped_barh(ax, [f"bs {b}" for b in sizes], series)
    ax.set_xlabel("steady-state median latency (ms)")
    ax.set_title("Steady state per batch size")
    legend(ax, series, "setting")


def serving_chart(frame: pd.DataFrame, model: str) -> Figure:
    """One model's serving study: its request timeline (left) and steady latency per batch size (right)."""
    rows = frame[frame["model"] == model] if not frame.empty else frame
    if rows.empty:
        return empty_figure(f"{model}: no serving rows")
    sizes = batch_sizes(rows)
    fig, axes = figure(12, max(3.5, 1.2 + 0.22 * len(sizes) * len(rows)), ncols=2)
    _timeline(axes[0, 0], rows)
    _steady_bars(axes[0, 1], rows, sizes)
    fig.suptitle(f"Serving: {model_label(model)}")
    return fig


def _choose(rows: pd.DataFrame) -> tuple[pd.Series | None, pd.DataFrame]:
    """(the setting to use, None for eager; the compiled settings that qualified): serving_verdict's rule."""
    compiled = rows[(rows["setting"] != "eager") & (rows["status"] == "ok")]
    qualified = compiled[(compiled["speedup"] >= 1 + MIN_GAIN) & ~compiled["limit_hit"].astype(bool)]
    if qualified.empty:
        return None, qualified
    near_fastest = qualified[qualified["speedup"] * (1 + MIN_GAIN) >= qualified["speedup"].max()]
    return near_fastest.loc[near_fastest["sequence_s"].idxmin()], qualified


def _why(best: pd.Series, qualified: pd.DataFrame, rows: pd.DataFrame) -> str:
    fastest = qualified.loc[qualified["speedup"].idxmax()]
    per_size = ", ".join(f"bs {b} x{best[f'speedup_bs{b}']:.2f}" for b in batch_sizes(rows))
    speed = f"x{best['speedup']:.2f} eager once warm over the sequence ({per_size})"
    if fastest["setting"] != best["setting"]:
        speed += f", within {MIN_GAIN:.0%} of the fastest ({fastest['setting']} x{fastest['speedup']:.2f})"
    others = "; ".join(f"{r.setting} {r.sequence_s:.1f} s, {int(r.compiles)} graph(s)"
                       for r in qualified.itertuples() if r.setting != best["setting"])
    start = f"cold sequence {best['sequence_s']:.1f} s with {int(best['compiles'])} graph(s)" + (
        f" ({others})" if others else "")
    pays = "never" if math.isinf(best["payback_passes"]) else f"after {best['payback_passes']:,.0f} passes"
    text = f"{speed}; {start}; its compiles pay back {pays} of the sequence."
    if best["setting"] == "static":
        text += (" Static shapes compile once per new batch size: past dynamo's recompile_limit (8 by default) "
                 "new sizes run eagerly.")
    return text


def _model_verdict(rows: pd.DataFrame) -> str:
    name = model_label(rows["model"].iloc[0])
    failed = ", ".join(f"{s} {st.upper()}" for s, st in zip(rows["setting"], rows["status"]) if st != "ok")
    tail = f" Failed: {failed}." if failed else ""
    busy = rows["others_cpu_pct"].max()
    if busy > DISTURBED_PCT:  # one process per setting: a busy moment is not averaged away
        tail += f" Caveat: other programs used up to {busy:.0f}% of the CPU while timing; measure again on a quiet machine."
    if rows[(rows["setting"] == "eager") & (rows["status"] == "ok")].empty:
        return f"**{name}: no verdict**: no eager baseline to compare with.{tail}"
    best, qualified = _choose(rows)
    if best is None:
        compiled = rows[(rows["setting"] != "eager") & rows["speedup"].notna()]
        top = compiled.loc[compiled["speedup"].idxmax()] if not compiled.empty else None
        why = f" (best: {top['setting']} x{top['speedup']:.2f})" if top is not None else ""
        return (f"**{name}: use eager**: no compiled setting serves the sequence at least "
                f"{MIN_GAIN:.0%} faster once warm without hitting the recompile limit{why}.{tail}")
    return f"**{name}: use {best['setting']}**: {_why(best, qualified, rows)}{tail}"


def serving_verdict(frame: pd.DataFrame) -> str:
    """Markdown, one line per model: which setting to use for variable batch sizes, and why.

    The rule, per model, over its settings that ran ("ok"):
    1. a compiled setting qualifies when, once warm, it serves the sequence at least MIN_GAIN faster
       than eager (speedup >= 1.05, over steady_sequence_ms) and did not hit dynamo's recompile limit
       (past it, new sizes run eagerly: no answer for a server with many sizes);
    2. a server runs long, so the steady state comes first: of the qualified settings, those within
       MIN_GAIN of the fastest (speedup x 1.05 >= the highest) are equally good;
    3. of those, the one with the lowest cold sequence (sequence_s: the requests' wall time, compiles
       included) is the answer: the same speed for the least start-up cost;
    4. none qualifies: "use eager". No ok eager row: no verdict (nothing to compare with).
    """
    if frame.empty:
        return "No serving rows yet: no verdict."
    return "\n".join(f"- {_model_verdict(frame[frame['model'] == model])}"
                     for model in ordered_models(frame["model"]))
