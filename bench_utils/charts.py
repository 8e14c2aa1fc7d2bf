"""Charts for the report notebooks: each function takes the DataFrame of ``results.to_dataframe`` and
returns a matplotlib Figure. No torch.

Figures are built with ``matplotlib.figure.Figure``, not pyplot, so nothing is registered globally:
a notebook shows exactly the figures it displays and tests leak none. Seaborn styles are applied
inside context managers only. Input with no successful cell gives a figure that says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from . import tables

NO_DATA = "no successful cells"
FAILED_COLOR = "#b42318"  # status text drawn where a failed cell has no bar
MODE_COLORS = dict(zip(("eager",) + tables.COMPILE_MODES, sns.color_palette("colorblind", 4)))
BAR_SLOT_IN = 0.22  # figure height per bar, inches
FAINT_ALPHA = 0.45  # bars whose speedup CI includes 1


@dataclass
class _Bars:
    """One series of a grouped horizontal bar chart; NaN values draw no bar."""

    name: str
    values: np.ndarray
    color: object  # one color, or a list with one color per value
    notes: list  # text drawn where there is no bar ("" for none), e.g. "OOM"
    xerr: np.ndarray | None = None  # shape (2, n): distance to the CI's low and high ends
    faint: np.ndarray | None = None  # bool per bar: lighter and hatched


def _figure(width_in: float, height_in: float, nrows: int = 1, ncols: int = 1):
    with sns.axes_style("whitegrid"):
        fig = Figure(figsize=(width_in, height_in), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def _empty_figure(message: str = NO_DATA) -> Figure:
    fig = Figure(figsize=(6, 1.5))
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, transform=ax.transAxes)
    return fig


def _one_label(df) -> None:
    labels = sorted(set(df["label"]))
    if len(labels) > 1:
        raise ValueError(f"df: holds rows of several labels ({', '.join(labels)}); pass one run's rows")


def _grouped_barh(ax, categories: list[str], series: list[_Bars]) -> None:
    slot = 0.8 / max(len(series), 1)
    base = np.arange(len(categories), dtype=float)
    for i, bars in enumerate(series):
        positions = base - 0.4 + slot * (i + 0.5)
        drawn = np.isfinite(bars.values)
        color = [c for c, d in zip(bars.color, drawn) if d] if isinstance(bars.color, list) else bars.color
        patches = ax.barh(positions[drawn], bars.values[drawn], slot, color=color, label=bars.name)
        if bars.faint is not None:
            for patch, faint in zip(patches, bars.faint[drawn]):
                if faint:
                    patch.set(alpha=FAINT_ALPHA, hatch="//", edgecolor="0.3")
        if bars.xerr is not None:
            has_ci = drawn & np.isfinite(bars.xerr).all(axis=0)
            ax.errorbar(bars.values[has_ci], positions[has_ci], xerr=bars.xerr[:, has_ci], fmt="none",
                        ecolor="0.2", capsize=2, linewidth=1)
        for y, note in zip(positions[~drawn], np.asarray(bars.notes, dtype=object)[~drawn]):
            if note:
                # x in axes fraction: stays visible on log axes and beside negative bars
                ax.text(0.01, y, note, va="center", ha="left", fontsize=8, color=FAILED_COLOR,
                        transform=ax.get_yaxis_transform())
    ax.set_yticks(base, categories)
    ax.set_ylim(len(categories) - 0.5, -0.5)  # first model on top, as in the guide's tables


def _legend(ax, series: list[_Bars], title: str, **kwargs) -> None:
    """A legend built from the series themselves: right even when a series drew no bar at all."""
    handles = [Patch(color=bars.color, label=bars.name) for bars in series]
    ax.legend(handles=handles, title=title, loc="upper left", bbox_to_anchor=(1.0, 1.0), **kwargs)


def _notes(texts) -> list[str]:
    """Status words ("OOM") stay as notes; numbers and the missing mark do not."""
    return [t if isinstance(t, str) and t.isalpha() and t.isupper() else "" for t in texts]


def _status_notes(statuses) -> list[str]:
    """The status in capitals ("OOM") for failed cells; "" for ok cells and cells never measured."""
    return [s.upper() if isinstance(s, str) and s != "ok" else "" for s in statuses]


def duration_chart(df, batch_size: int, stat: str = "median") -> Figure:
    """Grouped bars per model: eager and each compile mode, latency in ms; failed cells show their status."""
    numbers = tables.latency_table(df, batch_size, stat=stat, numeric=True)
    texts = tables.latency_table(df, batch_size, stat=stat)
    if numbers.empty or numbers.isna().all().all():
        return _empty_figure(f"batch size {batch_size}: {NO_DATA}")
    series = [_Bars(column.removesuffix(" (ms)"), numbers[column].to_numpy(float),
                    MODE_COLORS.get(column.removesuffix(" (ms)")), _notes(texts[column]))
              for column in numbers.columns]
    fig, axes = _figure(8, 1.2 + BAR_SLOT_IN * numbers.size)
    ax = axes[0, 0]
    _grouped_barh(ax, list(numbers.index), series)
    ax.set_xlabel(f"{stat} latency per call (ms)")
    ax.set_title(f"Duration, batch size {batch_size}")
    _legend(ax, series, "mode")
    return fig


def _percent(speedup):
    """Speedup (x) -> the guide's percentage improvement: (1 - 1/speedup) * 100; monotone, so a CI maps."""
    return (1.0 - 1.0 / np.asarray(speedup, dtype=float)) * 100.0


def _improvement_bars(at_batch, models: list[str], mode: str) -> _Bars:
    cells = at_batch[at_batch["mode"] == mode].set_index("model").reindex(models)
    values = cells["improvement_pct"].to_numpy(float)
    low, high = _percent(cells["speedup_ci95_low"]), _percent(cells["speedup_ci95_high"])
    xerr = np.clip(np.vstack([values - low, high - values]), 0, None)
    notes = _status_notes(cells["status"])
    faint = ~cells["significant"].eq(True).to_numpy(bool)
    return _Bars(mode, values, MODE_COLORS.get(mode), notes, xerr, faint)


def improvement_chart(df, batch_size: int) -> Figure:
    """Percentage improvement over eager per model and mode, with the speedup's 95% CI as error bars;
    bars whose CI includes "no change" are lighter and hatched."""
    _one_label(df)
    table = tables.improvement_table(df)
    at_batch = table[table["batch_size"] == batch_size]
    if at_batch["improvement_pct"].notna().sum() == 0:
        return _empty_figure(f"batch size {batch_size}: {NO_DATA}")
    models = tables.ordered_models(table["model"])
    modes = tables.ordered_modes(at_batch["mode"])
    fig, axes = _figure(8, 1.2 + BAR_SLOT_IN * len(models) * len(modes))
    ax = axes[0, 0]
    series = [_improvement_bars(at_batch, models, mode) for mode in modes]
    _grouped_barh(ax, [tables.model_label(m) for m in models], series)
    ax.axvline(0, color="0.2", linewidth=0.8)
    ax.set_xlabel("improvement over eager (%, from same-process medians; error bar: 95% CI)")
    ax.set_title(f"Percentage improvement, batch size {batch_size} (hatched: not significant)")
    _legend(ax, series, "mode")
    return fig


def batch_comparison_chart(df, mode: str, stat: str = "median") -> Figure:
    """One panel per model: latency (ms) against batch size, eager vs compiled with `mode`."""
    if mode not in tables.COMPILE_MODES:
        raise ValueError(f"mode: {mode!r} is not allowed; allowed: {', '.join(tables.COMPILE_MODES)}")
    _one_label(df)
    cells = tables.latency_cells(df, stat)
    cells = cells[cells["mode"].isin(["eager", mode]) & cells["latency_ms"].notna()]
    models = tables.ordered_models(cells["model"])
    if not models or mode not in set(cells["mode"]):
        return _empty_figure(f"{mode}: {NO_DATA}")
    ncols = min(3, len(models))
    nrows = math.ceil(len(models) / ncols)
    fig, axes = _figure(4 * ncols, 3 * nrows, nrows, ncols)
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
    _one_label(df)
    ok = _ok_compiled(df)
    if ok.empty:
        return _empty_figure()
    models = tables.ordered_models(ok["model"])
    modes = tables.ordered_modes(ok["mode"])
    batches = sorted(set(ok["batch_size"]))
    colors = sns.color_palette("crest", len(batches))
    fig, axes = _figure(5 * len(modes), 1.2 + BAR_SLOT_IN * len(models) * len(batches), 1, len(modes))
    for ax, mode in zip(axes.flat, modes):
        of_mode = ok[ok["mode"] == mode]
        series = [_Bars(str(b), of_mode[of_mode["batch_size"] == b].set_index("model")
                        .reindex(models)["compile_s"].to_numpy(float), color, [""] * len(models))
                  for b, color in zip(batches, colors)]
        _grouped_barh(ax, [tables.model_label(m) for m in models], series)
        ax.set(title=f"compile time, {mode}", xlabel="first compiled call: trace + codegen + run (s)")
        _legend(ax, series, "batch size", fontsize=8)
    return fig


def compile_cache_chart(df) -> Figure:
    """Compile time with an empty compiler cache (cold) against the same compile with the cache that
    the cold one filled (warm), per compiled cell that measured both (parameter cold_compile)."""
    _one_label(df)
    ok = _ok_compiled(df)
    ok = ok[ok["compile_warm_s"].notna()]
    if ok.empty:
        return _empty_figure("no cell measured a warm compile (set cold_compile: true)")
    names = [f"{tables.model_label(m)} · {mode} · bs {b}" for m, mode, b in zip(ok["model"], ok["mode"], ok["batch_size"])]
    cold, warm = sns.color_palette("colorblind", 5)[3:5]
    series = [_Bars("cold: empty cache", ok["compile_s"].to_numpy(float), cold, [""] * len(ok)),
              _Bars("warm: cache filled", ok["compile_warm_s"].to_numpy(float), warm, [""] * len(ok))]
    fig, axes = _figure(8, 1.2 + BAR_SLOT_IN * 2 * len(ok))
    ax = axes[0, 0]
    _grouped_barh(ax, names, series)
    ax.set(title="Compile time, cold vs warm compiler cache", xlabel="first compiled call (s)")
    _legend(ax, series, "Inductor cache", fontsize=8)
    return fig


def breakeven_chart(df) -> Figure:
    """Left: speedup against compile time per cell. Right: calls needed before compiling pays off."""
    _one_label(df)
    ok = _ok_compiled(df).assign(speedup=lambda t: t["eager_ms_median"] / t["compiled_ms_median"])
    if ok.empty:
        return _empty_figure()
    fig, axes = _figure(13, max(3.5, 1.2 + BAR_SLOT_IN * len(ok)), 1, 2)
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
    scatter.set(xlabel="compile time (s)", ylabel="speedup over eager (×, median ratio)",
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
    _grouped_barh(ax, names, [_Bars("calls", finite, colors, notes)])
    positive = finite[np.isfinite(finite) & (finite > 0)]
    if positive.size:
        ax.set_xscale("log")
        # bars on a log axis start at the left limit: a full decade below the shortest keeps lengths honest
        ax.set_xlim(left=10.0 ** math.floor(math.log10(positive.min() * 0.99)))
    ax.set(xlabel="calls until compile time is paid back (log scale)", title="When compiling pays off")


def cross_label_chart(df) -> Figure:
    """Speedup per model across hardware labels: one panel per compile mode (row) and batch size (column)."""
    table = _by_run(tables.improvement_table(df))
    ok = table[table["speedup"].notna()]
    if ok.empty:
        return _empty_figure()
    modes = tables.ordered_modes(ok["mode"])
    batches = sorted(set(ok["batch_size"]))
    labels = sorted(set(ok["run"]))
    models = tables.ordered_models(ok["model"])
    colors = dict(zip(labels, sns.color_palette("colorblind", len(labels))))
    height = 1.2 + BAR_SLOT_IN * len(models) * len(labels)
    fig, axes = _figure(5 * len(batches), height * len(modes), len(modes), len(batches))
    for row, mode in enumerate(modes):
        for col, batch in enumerate(batches):
            cell = table[(table["mode"] == mode) & (table["batch_size"] == batch)]  # failed ones too
            series = [_speedup_bars(cell[cell["run"] == label], models, label, colors[label])
                      for label in labels]
            ax = axes[row, col]
            _grouped_barh(ax, [tables.model_label(m) for m in models], series)
            ax.axvline(1, color="0.2", linewidth=0.8)
            ax.set(title=f"{mode}, batch size {batch}", xlabel="speedup over eager (×, 95% CI)")
    _legend(axes[0, -1], series, "label", fontsize=8)
    return fig


def _by_run(table):
    """Adds `run`: the label, plus the torch version where one label holds several torch versions.
    A cell measured twice in the same run (the same file given twice) keeps its last row."""
    several = table.groupby("label")["torch"].transform("nunique") > 1
    table = table.assign(run=table["label"].where(~several, table["label"] + " · torch " + table["torch"]))
    return table.drop_duplicates(["run", "model", "mode", "batch_size"], keep="last")


def _speedup_bars(cells, models: list[str], label: str, color) -> _Bars:
    cells = cells.set_index("model").reindex(models)
    values = cells["speedup"].to_numpy(float)
    xerr = np.clip(np.vstack([values - cells["speedup_ci95_low"].to_numpy(float),
                              cells["speedup_ci95_high"].to_numpy(float) - values]), 0, None)
    faint = ~cells["significant"].eq(True).to_numpy(bool)
    notes = _status_notes(cells["status"])
    return _Bars(label, values, color, notes, xerr, faint)


def reference_chart(beside) -> Figure:
    """Our speedups (one series per label and mode) beside the guide's published ones (one series per
    guide GPU, default mode), per model; one panel per batch size. `beside` is
    reference.compare_with_reference's table."""
    from .reference import GPUS

    if beside.empty:
        return _empty_figure("no successful compiled cell to compare")
    models = tables.ordered_models(beside["model"])
    runs = sorted(set(zip(beside["label"], beside["mode"])))
    gpus = [gpu for gpu in GPUS if gpu in set(beside["gpu"].dropna())]
    colors = sns.color_palette("colorblind", len(runs) + len(gpus))
    batches = sorted(set(beside["batch_size"]))
    fig, axes = _figure(5 * len(batches), 1.2 + BAR_SLOT_IN * len(models) * (len(runs) + len(gpus)), 1, len(batches))
    for ax, batch in zip(axes.flat, batches):
        at = beside[beside["batch_size"] == batch]
        series = [_Bars(f"ours: {label}, {mode}", _per_model(at[(at["label"] == label) & (at["mode"] == mode)],
                                                             "speedup", models), color, [""] * len(models))
                  for (label, mode), color in zip(runs, colors)]
        for gpu, color in zip(gpus, colors[len(runs):]):
            published = at[(at["gpu"] == gpu) & (at["mode"] == "default")]
            notes = published.drop_duplicates("model").set_index("model").reindex(models)["ref_status"]
            series.append(_Bars(f"guide: {gpu}", _per_model(published, "ref_speedup", models), color,
                                _status_notes(notes)))
        _grouped_barh(ax, [tables.model_label(m) for m in models], series)
        ax.axvline(1, color="0.2", linewidth=0.8)
        ax.set(title=f"batch size {batch}", xlabel="speedup over eager (×)")
    _legend(axes[0, -1], series, "speedup", fontsize=8)
    return fig


def _per_model(rows, column: str, models: list[str]) -> np.ndarray:
    return rows.drop_duplicates("model").set_index("model").reindex(models)[column].to_numpy(float)
