"""Grouped horizontal bars, the one drawing the report's charts share: a series per mode, label or
GPU, NaN drawing no bar but a status word ("OOM"), optional CI whiskers and faint bars for cells whose
speedup is not significant. Figures are ``matplotlib.figure.Figure``, never pyplot's. No torch."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..results.rows import NOT_FAILED
from .display import status_mark

NO_DATA = "no successful cells"
FAILED_COLOR = "#b42318"  # status text drawn where a failed cell has no bar
NOT_HERE_COLOR = "#57606a"  # grey: a configuration that does not apply here, or a note, is not a failure
NOT_HERE = status_mark("unsupported")
# the status words of cells not timed that are no failure ("NOT SUPPORTED HERE", "SKIPPED": the budget left
# it out): drawn grey, as a failure's ("OOM") is drawn red
NOT_FAILED_NOTES = frozenset(status_mark(status) for status in NOT_FAILED if status != "ok")
BAR_SLOT_IN = 0.22  # figure height per bar, inches
FAINT_ALPHA = 0.45  # bars whose speedup CI includes 1


@dataclass
class Bars:
    """One series of a grouped horizontal bar chart; NaN values draw no bar."""

    name: str
    values: np.ndarray
    color: object  # one color, or a list with one color per value
    notes: list = field(default_factory=list)  # text drawn where there is no bar ("" for none), e.g. "OOM"
    xerr: np.ndarray | None = None  # shape (2, n): distance to the CI's low and high ends
    faint: np.ndarray | None = None  # bool per bar: lighter and hatched


def figure(width_in: float, height_in: float, nrows: int = 1, ncols: int = 1):
    with sns.axes_style("whitegrid"):
        fig = Figure(figsize=(width_in, height_in), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def empty_figure(message: str = NO_DATA) -> Figure:
    fig = Figure(figsize=(6, 1.5))
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, transform=ax.transAxes)
    return fig


def grouped_barh(ax, categories: list[str], series: list[Bars], origin: float = 0.0) -> None:
    """A bar per series and category, from `origin` to its value (1 on a log axis of speedups: a bar
    to the right is faster than eager, to the left slower)."""
    slot = 0.8 / max(len(series), 1)
    base = np.arange(len(categories), dtype=float)
    for i, bars in enumerate(series):
        positions = base - 0.4 + slot * (i + 0.5)
        drawn = np.isfinite(bars.values)
        color = [c for c, d in zip(bars.color, drawn) if d] if isinstance(bars.color, list) else bars.color
        patches = ax.barh(positions[drawn], bars.values[drawn] - origin, slot, left=origin, color=color,
                          label=bars.name)
        if bars.faint is not None:
            for patch, faint in zip(patches, bars.faint[drawn]):
                if faint:
                    patch.set(alpha=FAINT_ALPHA, hatch="//", edgecolor="0.3")
        if bars.xerr is not None:
            has_ci = drawn & np.isfinite(bars.xerr).all(axis=0)
            ax.errorbar(bars.values[has_ci], positions[has_ci], xerr=bars.xerr[:, has_ci], fmt="none",
                        ecolor="0.2", capsize=2, linewidth=1)
        for y, note, bar in zip(positions, bars.notes, drawn):  # no notes given: none drawn
            if note and not bar:
                # x in axes fraction: stays visible on log axes and beside negative bars
                ax.text(0.01, y, note, va="center", ha="left", fontsize=8,
                        # red for a failure's status word only ("OOM"); grey for what is no failure
                        # (not supported here, skipped, no cold compile, no pay-back)
                        color=FAILED_COLOR if note.isupper() and note not in NOT_FAILED_NOTES else NOT_HERE_COLOR,
                        transform=ax.get_yaxis_transform())
    ax.set_yticks(base, categories)
    ax.set_ylim(len(categories) - 0.5, -0.5)  # first model on top, as in the guide's tables


def legend(ax, series: list[Bars], title: str, **kwargs) -> None:
    """A legend built from the series themselves: right even when a series drew no bar at all."""
    handles = [Patch(color=bars.color, label=bars.name) for bars in series]
    ax.legend(handles=handles, title=title, loc="upper left", bbox_to_anchor=(1.0, 1.0), **kwargs)


def speedup_bars(cells, name: str, color) -> Bars:
    """A series of speedups (×) from improvement_table's columns, one row of `cells` per category: whiskers
    to its 95% interval, faint where the interval includes 1× (not significant), a failed cell's status."""
    values = cells["race_speedup"].to_numpy(float)
    xerr = np.clip(np.vstack([values - cells["race_ci95_low"].to_numpy(float),
                              cells["race_ci95_high"].to_numpy(float) - values]), 0, None)
    faint = ~cells["race_significant"].eq(True).to_numpy(bool)
    return Bars(name, values, color, status_notes(cells["status"]), xerr, faint)


def status_notes(statuses) -> list[str]:
    """A bar's note: the status's mark (display.status_mark: "OOM", NOT_HERE, "SKIPPED"); "" for ok cells and
    cells never measured."""
    return [status_mark(s) if isinstance(s, str) and s and s != "ok" else "" for s in statuses]
