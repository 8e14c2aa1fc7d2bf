"""Charts of one profile's page (benchmark notebook): each function takes the DataFrame of
``aggregate.to_dataframe`` for one label and returns a matplotlib Figure. No torch.

Figures are built with ``matplotlib.figure.Figure``, not pyplot, so nothing is registered globally:
a notebook shows exactly the figures it displays and tests leak none. Seaborn styles are applied
inside context managers only. Input with no successful cell gives a figure that says so. Charts
across labels are in ``summary_charts``; the bar drawing they share is in ``bars``.
"""

from __future__ import annotations

import math

import numpy as np
import seaborn as sns
from matplotlib.figure import Figure

from ..config.modes import COMPILE_MODES, MODE_COLOUR
from . import tables
from .grouped_bars import (BAR_SLOT_IN, NO_DATA, Bars, empty_figure, figure, grouped_barh, legend,
                           status_notes)

_PALETTE = sns.color_palette("colorblind", len(MODE_COLOUR))
MODE_COLORS = {mode: _PALETTE[index] for mode, index in MODE_COLOUR.items()}  # the mode table's colours


def one_label(df) -> None:
    labels = sorted(set(df["label"]))
    if len(labels) > 1:
        raise ValueError(f"df: holds rows of several labels ({', '.join(labels)}); pass one run's rows")


def speedup_chart(df) -> Figure:
    """The page's one chart of every model: eager against compiled as a speedup (×) per model (and
    batch size, when several), one bar per compile mode with its 95% interval, on an axis from 0 with a
    line at 1× (as fast as eager); bars whose interval includes 1× are lighter and hatched."""
    one_label(df)
    table = tables.improvement_table(df)
    if table["speedup"].notna().sum() == 0:
        return empty_figure(f"no compiled cell with a speedup: {NO_DATA}")
    several = table["batch_size"].nunique() > 1
    keys = list(dict.fromkeys(zip(table["model"], table["batch_size"])))
    names = [tables.model_label(m) + (f" · batch {b}" if several else "") for m, b in keys]
    modes = tables.ordered_modes(table["mode"])
    series = []
    for mode in modes:
        cells = table[table["mode"] == mode].set_index(["model", "batch_size"]).reindex(keys)
        values = cells["speedup"].to_numpy(float)
        xerr = np.clip(np.vstack([values - cells["speedup_ci95_low"].to_numpy(float),
                                  cells["speedup_ci95_high"].to_numpy(float) - values]), 0, None)
        faint = ~cells["significant"].eq(True).to_numpy(bool)
        series.append(Bars(mode, values, MODE_COLORS.get(mode), status_notes(cells["status"]), xerr, faint))
    fig, axes = figure(8, 1.2 + BAR_SLOT_IN * len(keys) * len(modes))
    ax = axes[0, 0]
    grouped_barh(ax, names, series)
    # from 0, and no further than the bars need: an interval a disturbed run made huge runs off the edge
    right = max(2.0, 1.3 * float(np.nanmax([np.nanmax(s.values) if np.isfinite(s.values).any() else 0 for s in series])))
    ax.set_xlim(0, right)
    if (table["speedup_ci95_high"] > right).any():
        ax.text(0.99, 0.01, "→ an interval runs past the edge", transform=ax.transAxes, ha="right", va="bottom",
                fontsize=7, color="0.3")
    ax.axvline(1, color="0.2", linewidth=0.8)
    ax.set_xlabel("speedup over eager (×; error bar: 95% interval; 1× = as fast as eager)")
    ax.set_title("Compiled against eager, every model (hatched: can't tell)")
    legend(ax, series, "compile mode")
    return fig


def batch_comparison_chart(df, mode: str, stat: str = "median") -> Figure:
    """One panel per model: latency (ms) against batch size, eager vs compiled with `mode`."""
    if mode not in COMPILE_MODES:
        raise ValueError(f"mode: {mode!r} is not allowed; allowed: {', '.join(COMPILE_MODES)}")
    one_label(df)
    cells = tables.latency_cells(df, stat)
    cells = cells[cells["mode"].isin(["eager", mode]) & cells["latency_ms"].notna()]
    models = tables.ordered_models(cells["model"])
    if not models or mode not in set(cells["mode"]):
        return empty_figure(f"{mode}: {NO_DATA}")
    ncols = min(3, len(models))
    nrows = math.ceil(len(models) / ncols)
    fig, axes = figure(4 * ncols, 3 * nrows, nrows, ncols)
    for ax, model in zip(axes.flat, models):
        for series in ("eager", mode):
            points = cells[(cells["model"] == model) & (cells["mode"] == series)].sort_values("batch_size")
            ax.plot(points["batch_size"], points["latency_ms"], marker="o", label=series,
                    color=MODE_COLORS.get(series))
        batches = sorted(set(cells.loc[cells["model"] == model, "batch_size"]))
        ax.set_xscale("log", base=2)
        ax.set_xticks(batches, [str(b) for b in batches])
        ax.minorticks_off()
        ax.set_ylim(bottom=0)  # from zero: a 5% gap does not fill the panel
        ax.set(title=tables.model_label(model), xlabel="batch size (images)", ylabel=f"{stat} latency (ms)")
        ax.legend(fontsize=8)
    for ax in axes.flat[len(models):]:
        fig.delaxes(ax)
    return fig


def _ok_compiled(df):
    table = tables.compile_table(df)
    return table[(table["status"] == "ok") & table["compile_s"].notna()]


def compile_time_chart(df) -> Figure:
    """Compile time (first compiled call, s) per model, one panel per compile mode, one bar per batch size."""
    one_label(df)
    ok = _ok_compiled(df)
    if ok.empty:
        return empty_figure()
    models = tables.ordered_models(ok["model"])
    modes = tables.ordered_modes(ok["mode"])
    batches = sorted(set(ok["batch_size"]))
    colors = sns.color_palette("crest", len(batches))
    fig, axes = figure(5 * len(modes), 1.2 + BAR_SLOT_IN * len(models) * len(batches), 1, len(modes))
    for ax, mode in zip(axes.flat, modes):
        of_mode = ok[ok["mode"] == mode]
        series = [Bars(str(b), of_mode[of_mode["batch_size"] == b].set_index("model")
                        .reindex(models)["compile_s"].to_numpy(float), color, [""] * len(models))
                  for b, color in zip(batches, colors)]
        grouped_barh(ax, [tables.model_label(m) for m in models], series)
        ax.set(title=f"compile time, {mode}", xlabel="first compiled call: trace + codegen + run (s)")
        legend(ax, series, "batch size", fontsize=8)
    return fig


def compile_cache_chart(df) -> Figure:
    """Compile time with an empty compiler cache (cold) against the same compile with the cache that
    the cold one filled (warm: the first process's second compile with cold_compile, else the later
    processes' compiles), per compiled cell that measured both."""
    one_label(df)
    ok = _ok_compiled(df)
    ok = ok[ok["compile_warm_s"].notna()]
    if ok.empty:
        return empty_figure("no cell measured a warm compile (a warm compile is a later round's: set repeats above 1)")
    names = [f"{tables.model_label(m)} · {mode} · bs {b}" for m, mode, b in zip(ok["model"], ok["mode"], ok["batch_size"])]
    cold, warm = sns.color_palette("colorblind", 5)[3:5]
    series = [Bars("cold: empty cache", ok["compile_s"].to_numpy(float), cold, [""] * len(ok)),
              Bars("warm: cache filled", ok["compile_warm_s"].to_numpy(float), warm, [""] * len(ok))]
    fig, axes = figure(8, 1.2 + BAR_SLOT_IN * 2 * len(ok))
    ax = axes[0, 0]
    grouped_barh(ax, names, series)
    ax.set(title="Compile time, cold vs warm compiler cache", xlabel="first compiled call (s)")
    legend(ax, series, "Inductor cache", fontsize=8)
    return fig


def breakeven_chart(df) -> Figure:
    """Left: speedup against compile time per cell. Right: calls needed before compiling pays off."""
    one_label(df)
    ok = _ok_compiled(df)
    if ok.empty:
        return empty_figure()
    fig, axes = figure(13, max(3.5, 1.2 + BAR_SLOT_IN * len(ok)), 1, 2)
    scatter, payoff = axes[0]
    for mode in tables.ordered_modes(ok["mode"]):
        of_mode = ok[ok["mode"] == mode]
        scatter.scatter(of_mode["compile_s"], of_mode["speedup"], color=MODE_COLORS.get(mode), label=mode)
        for row in of_mode.itertuples():
            scatter.annotate(f"{tables.model_label(row.model)} · batch {row.batch_size}", (row.compile_s, row.speedup), fontsize=7,
                             xytext=(3, 3), textcoords="offset points")
    scatter.axhline(1, color="0.2", linewidth=0.8)
    scatter.set_ylim(bottom=0)
    if ok["compile_s"].max() > 20 * ok["compile_s"].min():
        scatter.set_xscale("log")
    scatter.set(xlabel="compile time (s)", ylabel="speedup over eager (×)",
                title="Speedup vs compile time")
    scatter.legend(title="mode", fontsize=8)
    _payoff_bars(payoff, ok)
    return fig


def _payoff_bars(ax, ok) -> None:
    calls = ok["breakeven_calls"].to_numpy(float)
    finite = np.where(np.isfinite(calls), calls, np.nan)
    names = [f"{tables.model_label(m)} · {mode} · bs {b}" for m, mode, b in
             zip(ok["model"], ok["mode"], ok["batch_size"])]
    colors = [MODE_COLORS.get(mode) for mode in ok["mode"]]
    notes = ["never (not faster)" if math.isinf(c) else "" for c in calls]
    grouped_barh(ax, names, [Bars("calls", finite, colors, notes)])
    ax.set_xlim(left=0)  # linear from 0: bar lengths compare directly
    ax.set(xlabel="calls until the cold compile is paid back", title="When compiling pays off")
