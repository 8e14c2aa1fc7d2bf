"""Two runs compared (results/compare.py's numbers and codes) as a page shows them: the chart of each
cell's change and the cells not compared, in words. No torch."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from ..results.compare import NOT_OK, ONLY_AFTER, ONLY_BEFORE, RunComparison
from .display import model_text, number, signed_percent, status_text


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
    ax.set_yticks(range(len(cells)), [f"{model}, batch {batch}, {name}" for model, batch, name in
                                      zip(_models(cells), cells["batch_size"], cells["configuration"])])
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel(f"change in {comparison.stat} latency, % (negative = faster; whiskers: 95% CI)")
    ax.set_title(_title(cells))
    return fig


def _models(frame) -> list[str]:
    """Each row's model by its display name, with its size where the rows hold more than one size."""
    sizes = set(frame["size"])
    return [model_text(m) + (f" ({size})" if len(sizes) > 1 else "") for m, size in zip(frame["model"], frame["size"])]


def runs_text(comparison: RunComparison, before, after) -> str:
    """Which files were compared, each by its folder and name, the hardware and torch its compared cells
    ran on; and, when the hardware differs, that a change is then the machine's as much as torch's."""
    def known(column: str) -> set:
        return {v for v in comparison.cells[column] if isinstance(v, str) and v}

    def run(path, side: str) -> str:
        facts = [", ".join(sorted(known(f"{side}_hardware"))),
                 ", ".join(f"torch {v}" for v in sorted(known(f"{side}_torch")))]
        facts = "; ".join(fact for fact in facts if fact)
        return f"{Path(path).parent.name}/{Path(path).name}" + (f" ({facts})" if facts else "")

    text = f"Before: {run(before, 'before')}; after: {run(after, 'after')}."
    if known("before_hardware") and known("after_hardware") and known("before_hardware") != known("after_hardware"):
        text += " They ran on different hardware: a change is the machine's as much as the software's."
    return text


def comparison_table(comparison: RunComparison) -> pd.DataFrame:
    """The cells compared, one row each in words and rounded figures: before and after latency, the
    change with its 95% interval, and whether that interval excludes no change."""
    cells = comparison.cells
    return pd.DataFrame({
        "Model": _models(cells),
        "Batch (images)": [number(b, integer=True) for b in cells["batch_size"]],
        "Configuration": list(cells["configuration"]),
        f"Before, {comparison.stat} (ms)": [number(v) for v in cells["before_ms"]],
        f"After, {comparison.stat} (ms)": [number(v) for v in cells["after_ms"]],
        "Change (negative: faster)": [signed_percent(v) for v in cells["change_pct"]],
        "95% interval of the change": [f"{signed_percent(low)} to {signed_percent(high)}" for low, high in
                                       zip(cells["change_ci95_low_pct"], cells["change_ci95_high_pct"])],
        "Significant?": ["yes" if s else "no" for s in cells["significant"]],
    })


def _title(cells) -> str:
    """What changed between the runs: the hardware, the torch version, the variant, or several."""
    parts = []
    for side, words in (("hardware", str), ("torch", lambda v: f"torch {v}"), ("fullgraph", variant_words)):
        before, after = (", ".join(sorted({words(v) for v in cells[f"{when}_{side}"]
                                           if isinstance(v, bool) or (isinstance(v, str) and v)}))
                         for when in ("before", "after"))
        if before != after:
            parts.append(f"{before or '?'} → {after or '?'}")
    return "; ".join(parts) or "before → after (same hardware, torch and variant)"


def _status(status: str) -> str:
    """A cell's status as the run's own tables say it ("measured", "not supported here", "OOM")."""
    return "measured" if status == "ok" else status_text(status)


def unmatched_table(comparison: RunComparison) -> pd.DataFrame:
    """The cells not compared, each with why in words ("only in before", "before: measured; after: OOM")."""
    unmatched = comparison.unmatched
    reasons = {ONLY_BEFORE: lambda row: "only in before", ONLY_AFTER: lambda row: "only in after",
               NOT_OK: lambda row: f"before: {_status(row['before_status'])}; after: {_status(row['after_status'])}"}
    return pd.DataFrame({
        "Model": _models(unmatched),
        "Batch (images)": [number(b, integer=True) for b in unmatched["batch_size"]],
        "Configuration": list(unmatched["configuration"]),
        "Why not compared": [reasons[row["reason"]](row) for row in unmatched.to_dict("records")],
    })
