"""Charts across runs (summary notebook): speedup per hardware label, and our speedups beside the
guide's published ones. Each takes a DataFrame and returns a matplotlib Figure. No torch."""

from __future__ import annotations

import numpy as np
import seaborn as sns
from matplotlib.figure import Figure

from ..config.registry import display_name
from . import tables
from .grouped_bars import (BAR_SLOT_IN, Bars, empty_figure, figure, grouped_barh, legend, speedup_bars,
                           status_notes)


def cross_label_chart(df) -> Figure:
    """Speedup per model across hardware labels: one panel per configuration (row) and batch size (column)."""
    table = _by_run(tables.improvement_table(df))
    ok = table[table["race_speedup"].notna()]
    if ok.empty:
        return empty_figure()
    modes = tables.ordered_configurations(ok["configuration"])
    batches = sorted(set(ok["batch_size"]))
    labels = sorted(set(ok["run"]))
    models = tables.ordered_models(ok["model"])
    colors = dict(zip(labels, sns.color_palette("colorblind", len(labels))))
    height = 1.2 + BAR_SLOT_IN * len(models) * len(labels)
    # the model names (about 1.7 in) and the legend right of the last panel (about 0.07 in a character
    # at 8 pt) take their room beside the panels, not out of them
    fig, axes = figure(6.5 * len(batches) + 0.07 * max(map(len, labels)), height * len(modes), len(modes),
                       len(batches))
    for row, mode in enumerate(modes):
        for col, batch in enumerate(batches):
            cell = table[(table["configuration"] == mode) & (table["batch_size"] == batch)]  # failed ones too
            series = [speedup_bars(cell[cell["run"] == label].set_index("model").reindex(models), label,
                                   colors[label]) for label in labels]
            ax = axes[row, col]
            grouped_barh(ax, [display_name(m) for m in models], series)
            ax.axvline(1, color="0.2", linewidth=0.8)
            ax.set(title=f"{mode}, batch size {batch}", xlabel="speedup over eager (×, 95% CI)")
    legend(axes[0, -1], series, "run", fontsize=8)
    return fig


def _by_run(table):
    """Adds `run`: the label, plus the torch version where one label holds several torch versions.
    A cell measured twice in the same run (the same file given twice) keeps its last row."""
    several = table.groupby("label")["torch"].transform("nunique") > 1
    table = table.assign(run=table["label"].where(~several, table["label"] + " · torch " + table["torch"]))
    return table.drop_duplicates(["run", "model", "configuration", "batch_size"], keep="last")


def reference_chart(beside) -> Figure:
    """Our speedups (one series per label and mode) beside the guide's published ones (one series per
    guide GPU, default mode), per model; one panel per batch size. `beside` is
    reference.compare_with_reference's table."""
    from ..results.reference import GPUS

    if beside.empty:
        return empty_figure("no successful compiled cell to compare")
    models = tables.ordered_models(beside["model"])
    runs = sorted(set(zip(beside["label"], beside["mode"])))
    gpus = [gpu for gpu in GPUS if gpu in set(beside["gpu"].dropna())]
    colors = sns.color_palette("colorblind", len(runs) + len(gpus))
    batches = sorted(set(beside["batch_size"]))
    # the legend sits right of the last panel: room for its longest name (about 0.07 in a character at
    # 8 pt), or its names squeeze the panels to nothing (two runs of one profile: "ours: CPU, torch ...")
    longest = max(len(f"ours: {label}, {mode}") for label, mode in runs)
    fig, axes = figure(5 * len(batches) + 0.07 * longest, 1.2 + BAR_SLOT_IN * len(models) * (len(runs) + len(gpus)),
                       1, len(batches))
    for ax, batch in zip(axes.flat, batches):
        at = beside[beside["batch_size"] == batch]
        series = [Bars(f"ours: {label}, {mode}", _per_model(at[(at["label"] == label) & (at["mode"] == mode)],
                                                             "race_speedup", models), color)
                  for (label, mode), color in zip(runs, colors)]
        for gpu, color in zip(gpus, colors[len(runs):]):
            published = at[(at["gpu"] == gpu) & (at["mode"] == "default")]
            notes = published.drop_duplicates("model").set_index("model").reindex(models)["ref_status"]
            series.append(Bars(f"guide: {gpu}", _per_model(published, "ref_speedup", models), color,
                                status_notes(notes)))
        grouped_barh(ax, [display_name(m) for m in models], series)
        ax.axvline(1, color="0.2", linewidth=0.8)
        ax.set(title=f"batch size {batch}", xlabel="speedup over eager (×)")
    legend(axes[0, -1], series, "speedup", fontsize=8)
    return fig


def _per_model(rows, column: str, models: list[str]) -> np.ndarray:
    return rows.drop_duplicates("model").set_index("model").reindex(models)[column].to_numpy(float)
