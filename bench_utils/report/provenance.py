"""What a run measured, on what, with which weights: the facts table near the end of every page (the
page's header and its weights caveat are header.py and verdict.page_caveats). No torch."""

from __future__ import annotations

import pandas as pd

from ..config.registry import display_name
from .display import MISSING, cell_text
from .tables import cell_states_text, check_frame, ordered_models


# (fact shown in the report, DataFrame column); python/platform appear when to_dataframe provides them.
_ENV_FACTS = (("hardware", "hardware"), ("device", "device"), ("CPU instruction set", "cpu_capability"),
              ("configurations", "configuration"), ("model size", "size"),
              ("fullgraph", "fullgraph"), ("torch", "torch"), ("transformers", "transformers"),
              ("python", "python"), ("platform", "platform"), ("compile-bench", "compile_bench"),
              ("host", "hostname"),
              ("torch threads", "torch_threads"), ("memory allocator", "allocator"),
              ("minimum warm-up calls (then until steady)", "warmup"),
              ("minimum timed calls per worker and round", "iterations"),
              ("minimum timed seconds per worker and round", "min_time_s"), ("rounds per cell", "repeats"))


def _joined(values) -> str:
    texts = sorted({cell_text(v) for v in values if v is not None and not pd.isna(v) and str(v) != ""})
    return ", ".join(texts) or MISSING


def _facts_of_run(run: pd.DataFrame) -> dict[str, str]:
    facts = {fact: _joined(run[column]) for fact, column in _ENV_FACTS if column in run.columns}
    facts["cells"] = cell_states_text(run)
    facts["weights"] = _weights_summary(run)
    for model in ordered_models(run["model"]):
        rows = run[run["model"] == model]
        used, note = _joined(rows.get("weights", [])), _joined(rows.get("weights_note", []))
        facts[f"weights: {display_name(model)}"] = used if note == MISSING else f"{used} ({note})"
    return facts


def _weights_summary(run: pd.DataFrame) -> str:
    if "weights" not in run.columns:
        return MISSING
    used = run[run["weights"].fillna("") != ""]  # failed cells may not have got as far as loading
    if used.empty:
        return MISSING
    random_models = ordered_models(used.loc[used["weights"] == "random", "model"])
    if not random_models:
        return "pretrained (hub checkpoints)"
    loaded = used["model"].nunique()
    return f"RANDOM weights, not pretrained, for {len(random_models)} of {loaded} loaded models: " \
        + ", ".join(map(display_name, random_models))


def run_facts(df) -> pd.DataFrame:
    """The environment of each run: one column per label, one row per fact (hardware, versions,
    device, dtype, size, cells, and the weights each model actually used, with the reason)."""
    check_frame(df)
    if df.empty:
        return pd.DataFrame({MISSING: [MISSING]}, index=["results"])
    columns = {label: _facts_of_run(df[df["label"] == label]) for label in sorted(set(df["label"]))}
    return pd.DataFrame(columns).fillna(MISSING)  # no index name: it would show as a header row of its own
