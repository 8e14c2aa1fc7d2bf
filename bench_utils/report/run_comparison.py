"""Two runs compared (results/compare.py's numbers and codes) as a page shows them: the chart of each
cell's change and the cells not compared, in words. No torch."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ..results.compare import KEY, NOT_OK, ONLY_AFTER, ONLY_BEFORE, RunComparison


def variant_words(fullgraph: bool) -> str:
    return "fullgraph" if fullgraph else "graph breaks allowed"


def comparison_chart(comparison: RunComparison) -> Figure:
    """Horizontal bars of % change per cell with 95% CI whiskers; significant cells in colour."""
    cells = comparison.cells.sort_values("change_pct", ignore_index=True)
    fig = Figure(figsize=(8, 1.0 + 0.32 * max(len(cells), 1)), layout="constrained")
    ax = fig.add_subplot()
    colors = ["tab:green" if s and c < 0 else "tab:red" if s else "lightgray"
              for s, c in zip(cells["significant"], cells["change_pct"])]
    errors = [(cells["change_pct"] - cells["change_ci95_low_pct"]).clip(lower=0).fillna(0),
              (cells["change_ci95_high_pct"] - cells["change_pct"]).clip(lower=0).fillna(0)]
    ax.barh(range(len(cells)), cells["change_pct"], xerr=errors, color=colors, ecolor="black", capsize=2)
    ax.set_yticks(range(len(cells)), [_cell_label(row) for row in cells.to_dict("records")])
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel(f"change in {comparison.stat} latency, % (negative = faster; whiskers: 95% CI)")
    ax.set_title(_title(cells))
    return fig


def _cell_label(row: dict) -> str:
    return f"{row['model']} bs={row['batch_size']} {row['configuration']} ({row['size']})"


def _title(cells) -> str:
    """What changed between the runs: the torch version, the variant, or both."""
    parts = []
    for before_column, after_column, words in (("before_torch", "after_torch", lambda v: f"torch {v}"),
                                               ("before_fullgraph", "after_fullgraph", variant_words)):
        before = ", ".join(sorted({words(v) for v in cells[before_column] if v != ""}))
        after = ", ".join(sorted({words(v) for v in cells[after_column] if v != ""}))
        if before != after:
            parts.append(f"{before or '?'} → {after or '?'}")
    return "; ".join(parts) or "before → after (same torch and variant)"


def unmatched_table(comparison: RunComparison) -> pd.DataFrame:
    """The cells not compared, each with why in words ("only in before", "status before=ok, after=oom")."""
    unmatched = comparison.unmatched
    reasons = {ONLY_BEFORE: lambda row: "only in before", ONLY_AFTER: lambda row: "only in after",
               NOT_OK: lambda row: f"status before={row['before_status']}, after={row['after_status']}"}
    words = [reasons[row["reason"]](row) for row in unmatched.to_dict("records")]
    return unmatched[KEY].assign(reason=words)
