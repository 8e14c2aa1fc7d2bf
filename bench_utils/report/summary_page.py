"""The summary page's own content: each run named by its header, and our speedups beside the guide's on
one screen (one row per model and batch size, a column per run and per guide GPU). Plain text; no torch.
"""

from __future__ import annotations

import pandas as pd

from .display import MISSING, model_text, number, times
from .header import page_header
from .tables import ordered_models


def run_headers(df) -> pd.DataFrame:
    """One row per run: its header facts (run, machine, software, date, weights)."""
    heads = [page_header(df[df["label"] == label], label) for label in sorted(set(df["label"]))]
    return pd.DataFrame([h.facts for h in heads], columns=["Run", "Machine", "Software", "Date", "Weights"])


def _speedup_text(row) -> str:
    if pd.isna(row["speedup"]):
        return MISSING
    return f"{times(row['speedup'])} ({times(row['speedup_ci95_low'])} to {times(row['speedup_ci95_high'])})"


def guide_comparison(beside: pd.DataFrame) -> pd.DataFrame:
    """`beside` (reference.compare_with_reference) as one compact table: per model and batch size, our
    speedup with its 95% interval for each run and mode, then the guide's published speedup per GPU
    ("—" where the guide has none)."""
    if beside.empty:
        return pd.DataFrame()
    keys = [(m, b) for m in ordered_models(beside["model"]) for b in sorted(set(beside["batch_size"]))
            if ((beside["model"] == m) & (beside["batch_size"] == b)).any()]
    runs = list(dict.fromkeys(zip(beside["label"], beside["mode"])))
    gpus = [g for g in dict.fromkeys(beside["gpu"].dropna())]
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
