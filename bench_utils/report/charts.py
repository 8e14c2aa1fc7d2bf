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
                           status_notes, status_words)

_PALETTE = sns.color_palette("colorblind", len(MODE_COLOUR))
MODE_COLORS = {mode: _PALETTE[index] for mode, index in MODE_COLOUR.items()}  # the mode table's colours


def one_label(df) -> None:
    labels = sorted(set(df["label"]))
    if len(labels) > 1:
        raise ValueError(f"df: holds rows of several labels ({', '.join(labels)}); pass one run's rows")


def duration_chart(df, batch_size: int, stat: str = "median") -> Figure:
    """Grouped bars per model: eager and each compile mode, latency in ms; failed cells show their status."""
    numbers = tables.latency_table(df, batch_size, stat=stat, numeric=True)
    texts = tables.latency_table(df, batch_size, stat=stat)
    if numbers.empty or numbers.isna().all().all():
        return empty_figure(f"batch size {batch_size}: {NO_DATA}")
    series = [Bars(column.removesuffix(" (ms)"), numbers[column].to_numpy(float),
                    MODE_COLORS.get(column.removesuffix(" (ms)")), status_words(texts[column]))
              for column in numbers.columns]
    fig, axes = figure(8, 1.2 + BAR_SLOT_IN * numbers.size)
    ax = axes[0, 0]
    grouped_barh(ax, list(numbers.index), series)
    ax.set_xlabel(f"{stat} latency per call (ms)")
    ax.set_title(f"Duration, batch size {batch_size}")
    legend(ax, series, "mode")
    return fig


def _percent(speedup):
    """Speedup (x) -> the guide's percentage improvement: (1 - 1/speedup) * 100; monotone, so a CI maps."""
    return (1.0 - 1.0 / np.asarray(speedup, dtype=float)) * 100.0


def _improvement_bars(at_batch, models: list[str], mode: str) -> Bars:
    cells = at_batch[at_batch["mode"] == mode].set_index("model").reindex(models)
    values = cells["improvement_pct"].to_numpy(float)
    low, high = _percent(cells["speedup_ci95_low"]), _percent(cells["speedup_ci95_high"])
    xerr = np.clip(np.vstack([values - low, high - values]), 0, None)
    notes = status_notes(cells["status"])
    faint = ~cells["significant"].eq(True).to_numpy(bool)
    return Bars(mode, values, MODE_COLORS.get(mode), notes, xerr, faint)


def improvement_chart(df, batch_size: int) -> Figure:
    """Percentage improvement over eager per model and mode, with the speedup's 95% CI as error bars;
    bars whose CI includes "no change" are lighter and hatched."""
    one_label(df)
    table = tables.improvement_table(df)
    at_batch = table[table["batch_size"] == batch_size]
    if at_batch["improvement_pct"].notna().sum() == 0:
        return empty_figure(f"batch size {batch_size}: {NO_DATA}")
    models = tables.ordered_models(table["model"])
    modes = tables.ordered_modes(at_batch["mode"])
    fig, axes = figure(8, 1.2 + BAR_SLOT_IN * len(models) * len(modes))
    ax = axes[0, 0]
    series = [_improvement_bars(at_batch, models, mode) for mode in modes]
    grouped_barh(ax, [tables.model_label(m) for m in models], series)
    ax.axvline(0, color="0.2", linewidth=0.8)
    ax.set_xlabel("improvement over eager (%; error bar: the speedup's 95% CI)")
    ax.set_title(f"Percentage improvement, batch size {batch_size} (hatched: not significant)")
    legend(ax, series, "mode")
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
    the cold one filled (warm), per compiled cell that measured both (parameter cold_compile)."""
    one_label(df)
    ok = _ok_compiled(df)
    ok = ok[ok["compile_warm_s"].notna()]
    if ok.empty:
        return empty_figure("no cell measured a warm compile (set cold_compile: true)")
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
            scatter.annotate(f"{row.model} bs{row.batch_size}", (row.compile_s, row.speedup), fontsize=7,
                             xytext=(3, 3), textcoords="offset points")
    scatter.axhline(1, color="0.2", linewidth=0.8)
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
    positive = finite[np.isfinite(finite) & (finite > 0)]
    if positive.size:
        ax.set_xscale("log")
        # bars on a log axis start at the left limit: a full decade below the shortest keeps lengths honest
        ax.set_xlim(left=10.0 ** math.floor(math.log10(positive.min() * 0.99)))
    ax.set(xlabel="calls until compile time is paid back (log scale)", title="When compiling pays off")
