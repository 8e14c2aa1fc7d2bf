"""Charts of one profile's page (benchmark notebook): each function takes the DataFrame of
``aggregate.to_dataframe`` for one label and returns a matplotlib Figure. No torch.

Figures are built with ``matplotlib.figure.Figure``, not pyplot, so nothing is registered globally:
a notebook shows exactly the figures it displays and tests leak none. Seaborn styles are applied
inside context managers only. Input with no successful cell gives a figure that says so. Charts
across labels are in ``summary_charts``; the bar drawing they share is in ``grouped_bars``.
"""

from __future__ import annotations

import math

import numpy as np
import seaborn as sns
from matplotlib.figure import Figure

from ..config.bench_config import BenchConfig
from ..config.configurations import BASELINE
from ..config.registry import display_name
from . import tables
from .display import number
from .grouped_bars import BAR_SLOT_IN, NO_DATA, Bars, empty_figure, figure, grouped_barh, legend, speedup_bars

def colours(names) -> dict:
    """A colour per configuration, by its place in the page's order (eager first): a configuration keeps
    its colour on every chart of a page."""
    ordered = tables.ordered_configurations(names)
    palette = sns.color_palette("colorblind", max(len(ordered), 1))
    return dict(zip(ordered, palette))


SPEEDUP_TICKS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0)  # × on the log axis


def speedup_ticks(low: float, high: float) -> list[float]:
    """SPEEDUP_TICKS within [low, high], thinned on a wide axis so no two labels are closer than a tenth
    of its log span (0.5×, 0.75× and 1× printed over each other on an axis from 0.02× to 50×); 1× kept."""
    inside = [t for t in SPEEDUP_TICKS if low <= t <= high]
    gap = math.log(high / low) / 10 if high > low > 0 else 0.0
    kept: list[float] = []
    for tick in sorted(inside, key=lambda t: (t != 1.0, abs(math.log(t)))):  # 1x first, then outwards
        if all(abs(math.log(tick / other)) >= gap for other in kept):
            kept.append(tick)
    return sorted(kept)
SPEEDUP_AXIS = (0.05, 50.0)  # an interval past these ends is a measurement gone wrong: cut, and said


def speedup_chart(df, worthwhile: float = BenchConfig.worthwhile, names=None) -> Figure:
    """The page's one chart of every model: each configuration against eager float32 as a speedup (×) per
    model (and batch size, when several), one bar per configuration from 1× with its race figure's 95%
    interval (results/race.py), on a log axis (2× faster and 2× slower are as long) that holds every
    interval, a line at 1× (as fast as eager) and one at the margin `worthwhile`; bars whose interval
    includes 1× are lighter and hatched. `names`: the page's configurations, for their colours (colours)."""
    tables.one_label(df)
    table = tables.improvement_table(df)
    if table["race_speedup"].notna().sum() == 0:
        return empty_figure(f"no compiled cell with a speedup: {NO_DATA}")
    several = table["batch_size"].nunique() > 1
    keys = list(dict.fromkeys(zip(table["model"], table["batch_size"])))
    labels = [display_name(m) + (f" · batch {b}" if several else "") for m, b in keys]
    modes = tables.ordered_configurations(table["configuration"])
    colour = colours(df["configuration"] if names is None else names)
    by_cell = table.set_index(["model", "batch_size"])
    series = [speedup_bars(by_cell[by_cell["configuration"] == mode].reindex(keys), mode, colour.get(mode))
              for mode in modes]
    fig, axes = figure(8, 1.2 + BAR_SLOT_IN * len(keys) * len(modes))
    ax = axes[0, 0]
    ax.set_xscale("log")
    grouped_barh(ax, labels, series, origin=1.0)
    ends = table[["race_ci95_low", "race_ci95_high", "race_speedup"]].to_numpy(float)
    low = max(SPEEDUP_AXIS[0], min(0.8, 0.9 * float(np.nanmin(ends))))
    high = min(SPEEDUP_AXIS[1], max(1.5, 1.15 * float(np.nanmax(ends)), 1.1 * worthwhile))
    ax.set_xlim(low, high)
    ticks = speedup_ticks(low, high)
    ax.set_xticks(ticks, [f"{t:g}×" for t in ticks])
    ax.minorticks_off()
    if np.nanmin(ends) < low or np.nanmax(ends) > high:
        ax.text(0.99, 1.01, "an interval runs past the edge (beyond 50× either way)", transform=ax.transAxes,
                ha="right", va="bottom", fontsize=8, color="0.3")
    ax.axvline(1, color="0.2", linewidth=0.8)
    ax.axvline(worthwhile, color="0.4", linewidth=0.8, linestyle="--")
    ax.set_xlabel(f"speedup over eager float32 (×, log scale; bars from 1×; error bar: 95% interval; dashed: the "
                  f"margin worth a compile, {worthwhile:g}×)")
    ax.set_title("Every configuration against eager, every model (hatched: not sure it differs from eager)")
    legend(ax, series, "configuration")
    return fig


def batch_comparison_chart(df, mode: str) -> Figure:
    """One panel per model: median latency (ms) against batch size, eager vs the configuration `mode`."""
    if mode == BASELINE:
        raise ValueError(f"mode: {mode!r} is not allowed; allowed: a configuration of the run other than eager")
    tables.one_label(df)
    colour = colours(df["configuration"])
    cells = tables.latency_cells(df)
    cells = cells[cells["configuration"].isin([BASELINE, mode]) & cells["latency_ms"].notna()]
    models = tables.ordered_models(cells["model"])
    if not models or mode not in set(cells["configuration"]):
        return empty_figure(f"{mode}: {NO_DATA}")
    ncols = min(3, len(models))
    nrows = math.ceil(len(models) / ncols)
    fig, axes = figure(4 * ncols, 3 * nrows, nrows, ncols)
    for ax, model in zip(axes.flat, models):
        for series in (BASELINE, mode):
            points = cells[(cells["model"] == model) & (cells["configuration"] == series)].sort_values("batch_size")
            ax.plot(points["batch_size"], points["latency_ms"], marker="o", label=series, color=colour.get(series))
        batches = sorted(set(cells.loc[cells["model"] == model, "batch_size"]))
        ax.set_xscale("log", base=2)
        ax.set_xticks(batches, [str(b) for b in batches])
        ax.minorticks_off()
        ax.set_ylim(bottom=0)  # from zero: a 5% gap does not fill the panel
        ax.set(title=display_name(model), xlabel="batch size (images)", ylabel="median latency (ms)")
        ax.legend(fontsize=8)
    for ax in axes.flat[len(models):]:
        fig.delaxes(ax)
    return fig


HELD_NOTE = "no cold compile: the cache held it"  # a bar's place where round 0 hit the compiler cache


def _ok_compiled(df):
    """compile_table's ok compiled cells, with results' compile_cold beside (False: round 0 hit the cache,
    its compile_s no cold compile)."""
    table = tables.compile_table(df)
    table = table[(table["status"] == "ok") & table["compile_s"].notna()]
    keys = ["label", "model", "batch_size", "configuration"]
    if "compile_cold" not in df or table.empty:
        return table.assign(compile_cold=True)
    cold = df[keys + ["compile_cold"]].drop_duplicates(keys)
    return table.merge(cold, on=keys, how="left").set_axis(table.index)


def compile_time_chart(df, names=None) -> Figure:
    """Cold compile time (the first compiled call, s) of every compiled cell in one panel: a group of bars
    per model and batch size, a bar per configuration in its page colour (`names`: the page's
    configurations, colours). One panel, not one per configuration: side by side they shrank to a few
    pixels each on a page."""
    tables.one_label(df)
    ok = _ok_compiled(df)
    if ok.empty:
        return empty_figure()
    keys = list(dict.fromkeys(zip(ok["model"], ok["batch_size"])))
    labels = [f"{display_name(m)} · batch {b}" for m, b in keys]
    modes = tables.ordered_configurations(ok["configuration"])
    colour = colours(df["configuration"] if names is None else names)
    by_cell = ok.set_index(["model", "batch_size"])
    cells = {mode: by_cell[by_cell["configuration"] == mode].reindex(keys) for mode in modes}
    # a round 0 that hit the cache (a second run) measured no cold compile: no bar, a note in its place
    held = {mode: cells[mode]["compile_cold"].eq(False).to_numpy(bool) for mode in modes}
    series = [Bars(mode, np.where(held[mode], np.nan, cells[mode]["compile_s"].to_numpy(float)), colour.get(mode),
                   [HELD_NOTE if h else "" for h in held[mode]]) for mode in modes]
    fig, axes = figure(8, 1.2 + BAR_SLOT_IN * len(keys) * len(modes))
    ax = axes[0, 0]
    grouped_barh(ax, labels, series)
    ax.set(title="Cold compile time", xlabel="first compiled call: trace + codegen + run (s)")
    legend(ax, series, "configuration", fontsize=8)
    return fig


def compile_cache_chart(df) -> Figure:
    """Compile time with an empty compiler cache (cold) against the same compile with the cache that
    the cold one filled (warm: the later processes' compiles, or the compile again in a fork of the
    prepared process), per compiled cell that measured both."""
    tables.one_label(df)
    ok = _ok_compiled(df)
    ok = ok[ok["compile_warm_s"].notna()]
    if ok.empty:
        return empty_figure("no cell measured a warm compile (a warm compile is a later round's: set repeats above 1)")
    names = [f"{display_name(m)} · {mode} · bs {b}" for m, mode, b in
             zip(ok["model"], ok["configuration"], ok["batch_size"])]
    cold, warm = "0.25", "0.65"  # greys: a configuration's colours mean configurations on this page
    # a round 0 that hit the cache (results' compile_cold false: a second run) measured no cold compile
    held = ok["compile_cold"].eq(False).to_numpy(bool)
    cold_s = np.where(held, np.nan, ok["compile_s"].to_numpy(float))
    series = [Bars("cold: empty cache", cold_s, cold, [HELD_NOTE if h else "" for h in held]),
              Bars("warm: cache filled", ok["compile_warm_s"].to_numpy(float), warm)]
    fig, axes = figure(8, 1.2 + BAR_SLOT_IN * 2 * len(ok))
    ax = axes[0, 0]
    grouped_barh(ax, names, series)
    ax.set(title="Compile time, cold vs warm compiler cache", xlabel="first compiled call (s)")
    legend(ax, series, "Inductor cache", fontsize=8)
    return fig


def breakeven_chart(df, worthwhile: float = BenchConfig.worthwhile) -> Figure:
    """Left: speedup against compile time per configuration. Right: calls until compiling pays off, for
    the models whose verdict is to compile only (a pay-back drawn for a gain not worth it would tell
    another story than the verdict)."""
    from ..results import decision as codes
    from .verdict import Rules, verdicts

    tables.one_label(df)
    ok = _ok_compiled(df)
    if ok.empty:
        return empty_figure()
    answers = verdicts(df, Rules(worthwhile=worthwhile))
    chosen = answers[answers["verdict"] == codes.COMPILE]
    fig, axes = figure(13, max(3.5, 1.2 + BAR_SLOT_IN * max(len(chosen), len(ok) // 2)), 1, 2)
    scatter, payoff = axes[0]
    colour = colours(df["configuration"])
    _speedup_against_compile(scatter, ok, chosen, colour, worthwhile)  # ringed: what the verdict says to compile
    _payoff_bars(payoff, chosen, colour)
    return fig


MODEL_MARKERS = "osD^vP*Xh<>p"  # one marker per model of a page (colour: the configuration)


def _speedup_against_compile(ax, ok, answers, colour: dict, worthwhile: float) -> None:
    """Every compiled cell as a point, coloured by configuration and shaped by model; the configuration
    each of `answers` (the models whose verdict is to compile) recommends is ringed (a ring on a model
    whose answer is "Can't tell" would say more than its verdict; names beside the points overlapped)."""
    from matplotlib.lines import Line2D

    # the shapes repeat past twelve models (a page of 49 failed on a KeyError): the legend names the models
    # only while each has a shape of its own
    models = tables.ordered_models(ok["model"])
    marker = {model: MODEL_MARKERS[i % len(MODEL_MARKERS)] for i, model in enumerate(models)}
    for (mode, model), cells in ok.groupby(["configuration", "model"], sort=False):
        ax.scatter(cells["compile_s"], cells["race_speedup"], color=colour.get(mode), marker=marker[model])
    picked = ok.merge(answers[["model", "batch_size", "configuration"]], on=["model", "batch_size", "configuration"])
    # each model's recommendation ringed, not named beside its point: names printed over each other
    # and over the title where configurations tied
    ax.scatter(picked["compile_s"], picked["race_speedup"], s=160, facecolors="none", edgecolors="0.15", linewidths=1.2)
    ax.axhline(1, color="0.2", linewidth=0.8)
    ax.axhline(worthwhile, color="0.4", linewidth=0.8, linestyle="--")
    ax.set_ylim(bottom=0)
    if ok["compile_s"].max() > 20 * ok["compile_s"].min():
        ax.set_xscale("log")
    ax.set(xlabel="cold compile time (s)", ylabel="speedup over eager (×)", title="Speedup vs compile time")
    handles = [Line2D([], [], color=colour.get(mode), marker="o", linestyle="", label=mode)
               for mode in tables.ordered_configurations(ok["configuration"])]
    if len(models) <= len(MODEL_MARKERS):
        handles += [Line2D([], [], color="0.3", marker=marker[model], linestyle="", label=display_name(model))
                    for model in models]
    if not picked.empty:
        handles.append(Line2D([], [], marker="o", markersize=11, markerfacecolor="none", markeredgecolor="0.15",
                              linestyle="", label="recommended"))
    ax.legend(handles=handles, fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.18))  # off the points


def _payoff_bars(ax, chosen, colour: dict) -> None:
    from matplotlib.patches import Patch

    if chosen.empty:
        ax.axis("off")
        ax.text(0.5, 0.5, "no model where compiling is worth it:\nno pay-back to draw", ha="center", va="center",
                transform=ax.transAxes, fontsize=10)
        return
    calls = chosen["breakeven_calls"].to_numpy(float)
    names = [f"{display_name(m)} · batch {b}" for m, b in zip(chosen["model"], chosen["batch_size"])]
    held = chosen["compile_cold"].eq(False).to_numpy(bool) if "compile_cold" in chosen else np.zeros(len(calls), bool)
    never = ["no pay-back: not faster than a run without compiling" if np.isinf(n) else
             HELD_NOTE if np.isnan(n) and cache_held else ""
             for n, cache_held in zip(calls, held)]
    grouped_barh(ax, names, [Bars("calls", np.where(np.isinf(calls), np.nan, calls),
                                  [colour.get(c) for c in chosen["configuration"]], never)])
    ax.set_xlim(0, 1.25 * np.nanmax(np.where(np.isinf(calls), np.nan, calls), initial=1.0))  # from 0, room for labels
    for y, value in enumerate(calls):  # the count itself at each bar's end: the figure the verdict says
        if np.isfinite(value):
            ax.text(value, y, f" {number(value, integer=True)} calls", va="center", fontsize=8)
    ax.set(xlabel="calls until the cold compile is paid back (over the fastest run without one)", title="When compiling pays off (the verdict's choice)")
    ax.legend(handles=[Patch(color=colour.get(name), label=name)
                       for name in tables.ordered_configurations(chosen["configuration"])],
              title="configuration", fontsize=8, loc="lower right")
