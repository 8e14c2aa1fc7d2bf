"""The summary page's own content: each run named by its header, the fastest configuration per model
beside plain torch.compile with their geometric means, and our speedups beside the guide's on one screen
(one row per model and batch size, a column per run and per guide GPU). Plain text; no torch.
"""

from __future__ import annotations

import math

import pandas as pd

from ..config.configurations import configuration
from ..results.reference import GPUS, STUDY_FOR_MODE, guide_speedups
from .display import MISSING, model_text, number, span, times
from .grouped_bars import status_notes
from .header import page_header
from .tables import first_row, ordered_models
from .verdict import WORDS, Rules, verdicts


def run_headers(df) -> pd.DataFrame:
    """One row per run: its header facts (run, machine, software, date, weights and, for tiny test models,
    their size)."""
    heads = [page_header(df[df["label"] == label], label) for label in sorted(set(df["label"]))]
    return pd.DataFrame([[h.label, h.hardware, h.software, h.date, ", ".join(filter(None, (h.weights, h.size)))]
                         for h in heads], columns=["Run", "Machine", "Software", "Date", "Weights"])


def _speedup_text(row) -> str:
    if pd.isna(row["race_speedup"]):
        return MISSING
    return f"{times(row['race_speedup'])} ({span(row['race_ci95_low'], row['race_ci95_high'])})"


def guide_comparison(beside: pd.DataFrame) -> pd.DataFrame:
    """`beside` (reference.compare_with_reference) as one compact table: per model and batch size, our
    speedup with its 95% interval for each run and mode, then the guide's published speedup per GPU
    ("—" where the guide has none)."""
    if beside.empty:
        return pd.DataFrame()
    keys = [(m, b) for m in ordered_models(beside["model"]) for b in sorted(set(beside["batch_size"]))
            if ((beside["model"] == m) & (beside["batch_size"] == b)).any()]
    runs = list(dict.fromkeys(zip(beside["label"], beside["mode"])))
    gpus = list(dict.fromkeys(beside["gpu"].dropna()))
    records = []
    for model, batch in keys:
        at = beside[(beside["model"] == model) & (beside["batch_size"] == batch)]
        record = {"Model": model_text(model), "Batch (images)": number(batch, integer=True)}
        for label, mode in runs:
            ours = at[(at["label"] == label) & (at["mode"] == mode)]
            record[f"Ours: {label}, {mode} (×, 95%)"] = _speedup_text(ours.iloc[0]) if len(ours) else MISSING
        for gpu in gpus:
            published = at[(at["gpu"] == gpu) & (at["mode"] == "default")]["ref_speedup"].dropna()
            record[f"Guide: {gpu} (×)"] = number(published.iloc[0]) if len(published) else MISSING
        records.append(record)
    return pd.DataFrame.from_records(records)


def geometric_mean(values) -> float:
    logs = [math.log(v) for v in values if v and v > 0]  # NaN > 0 is false
    return math.exp(sum(logs) / len(logs)) if logs else math.nan


GUIDE_SAME_MODE = "Guide, the choice's mode (×)"
RECOMMENDED = "Recommended configuration"


def _guide_same_mode(row, other_modes: dict) -> str:
    """The guide's published speedup of the recommended configuration's mode, per GPU it timed that mode
    on ("A100 1.96×, T4 1.42×"), when that mode is not default; "—" otherwise."""
    if not isinstance(row.configuration, str):
        return MISSING
    mode = configuration(row.configuration).mode
    published = other_modes.get(mode, {})
    figures = [f"{gpu} {times(published[(row.model, int(row.batch_size), gpu)])}" for gpu in GPUS
               if (row.model, int(row.batch_size), gpu) in published]
    return f"{mode}: {', '.join(figures)}" if figures else MISSING


def best_configurations(df, rules: Rules = Rules()) -> pd.DataFrame:
    """Per run, model and batch size: the recommended configuration's speedup (its race figure) beside
    plain torch.compile's (default mode, the guide's setting) and the guide's published `default`
    speedup per GPU, the verdict; then per run the geometric mean of each column over the models with a
    recommendation, "—" in a column that lacks one of them (every mean on the row over the same models)."""
    published = guide_speedups()
    guides = {gpu: f"Guide {gpu}, default (×)" for gpu in GPUS}
    # the guide's own figure for the choice's mode where it timed that mode too (reduce-overhead: A100, T4)
    other_modes = {mode: guide_speedups(mode) for mode in STUDY_FOR_MODE if mode != "default"}
    records = []
    for row in verdicts(df, rules).itertuples():
        cells = df[(df["label"] == row.label) & (df["model"] == row.model) & (df["batch_size"] == row.batch_size)]
        default = first_row(cells, "configuration", "default")
        # a plain compile not measured says why in the run's page's words ("SKIPPED": the fit left it out,
        # "OOM"), not "—", which reads as a figure missing by accident
        plain = (math.nan if default is None else default["race_speedup"] if default["status"] == "ok"
                 else status_notes([default["status"]])[0])
        records.append({"Run": row.label, "Model": model_text(row.model), "Batch (images)": row.batch_size,
                        RECOMMENDED: configuration(row.configuration).words if isinstance(row.configuration, str)
                        else MISSING, "Its speedup (×)": row.race_speedup, "Plain torch.compile (×)": plain,
                        **{column: published.get((row.model, int(row.batch_size), gpu), math.nan)
                           for gpu, column in guides.items()},
                        GUIDE_SAME_MODE: _guide_same_mode(row, other_modes),
                        "Verdict": WORDS[row.verdict] + (f" ({row.rival})" if row.rival else "")})
    table = pd.DataFrame.from_records(records)
    if table.empty:
        return table

    def same_models(values, ours) -> float:  # the mean over the models `ours` has a figure for, or none
        values = pd.to_numeric(values, errors="coerce")  # a status word ("SKIPPED") is no figure
        kept = values[ours.notna() & (ours > 0)]
        return geometric_mean(kept) if len(kept) and (kept > 0).all() else math.nan

    if (table[GUIDE_SAME_MODE] == MISSING).all():  # no choice in a mode the guide timed besides default
        table = table.drop(columns=GUIDE_SAME_MODE)
    means = [{"Run": run, "Model": "Geometric mean", "Batch (images)": MISSING, RECOMMENDED: MISSING,
              **{column: same_models(rows[column], rows["Its speedup (×)"])
                 for column in ("Its speedup (×)", "Plain torch.compile (×)", *guides.values())},
              "Verdict": MISSING}
             for run, rows in table.groupby("Run", sort=True)]
    table = pd.concat([table, pd.DataFrame.from_records(means)], ignore_index=True)
    if GUIDE_SAME_MODE in table.columns:
        table[GUIDE_SAME_MODE] = table[GUIDE_SAME_MODE].fillna(MISSING)
    for column in ("Its speedup (×)", "Plain torch.compile (×)", *guides.values()):
        table[column] = [times(v) if isinstance(v, float) else v for v in table[column]]
    return table
