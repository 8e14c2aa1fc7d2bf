"""The answer first: per model, compile or not, with which mode and variant, how sure, at what cost.
Reads the DataFrame of ``aggregate.to_dataframe`` (one label); computes nothing the cells do not hold
except the pay-back count (stats.breakeven_calls). No torch.

Rules, per model over its successful compiled cells (every mode, batch size and variant of the run):
- "compile": the cell whose speedup interval has the highest lower bound is significantly faster
  than eager (interval above 1) and its output agrees with eager within tolerance;
- "don't compile": every compiled cell is significantly slower (interval below 1), or the fastest
  one's output disagrees with eager;
- "inconclusive": otherwise (the intervals include 1): no measurable gain on this machine.
Caveats that change the answer ride along: graph breaks, a disturbed or noisy measurement, one
process per cell, random weights, CUDA graphs that did not run, batch sizes where it is slower.
"""

from __future__ import annotations

import math

import pandas as pd

from ..results.stats import breakeven_calls
from .tables import check_frame, model_label, ordered_models

COMPILE, DONT, INCONCLUSIVE, NO_DATA = "compile", "don't compile", "inconclusive", "no data"
COLUMNS = ["label", "model", "task_model", "verdict", "mode", "variant", "batch_size", "speedup", "speedup_ci95_low",
           "speedup_ci95_high", "compile_s", "compile_warm_s", "breakeven_calls", "caveats", "summary"]


def _failed_accuracy(best: pd.Series) -> bool:
    """accuracy_ok is a real False (not None: not checked), whatever bool type pandas holds."""
    value = best.get("accuracy_ok")
    return value is not None and not pd.isna(value) and not bool(value)


def _caveats(best: pd.Series, compiled: pd.DataFrame, eager_rows: pd.DataFrame) -> list[str]:
    notes = []
    if (best.get("graph_breaks") or 0) > 0:
        notes.append(f"{int(best['graph_breaks'])} graph break(s)")
    if _failed_accuracy(best):
        notes.append(f"output differs from eager by {best['max_abs_diff']:.2g}")
    if best.get("disturbed"):
        notes.append(f"disturbed: {best['disturbed_reason']}")
    elif best.get("noisy"):
        notes.append("noisy timings")
    if not best.get("between_process"):
        notes.append("one process per cell: the interval leaves out run-to-run variation")
    if best.get("cudagraph_note"):
        notes.append(best["cudagraph_note"])
    slower = compiled[compiled["speedup_ci95_high"] < 1.0]
    if not slower.empty:
        where = ", ".join(f"{m} bs {b}" for m, b in zip(slower["mode"], slower["batch_size"]))
        notes.append(f"slower than eager at {where}")
    if "random" in set(eager_rows.get("weights", [])) | set(compiled.get("weights", [])):
        notes.append("random weights: latency stands, predictions do not")
    return notes


def _decide(best: pd.Series, compiled: pd.DataFrame) -> str:
    if bool(best["significant"]) and best["speedup"] > 1.0:
        return DONT if _failed_accuracy(best) else COMPILE
    if (compiled["speedup_ci95_high"] < 1.0).all():
        return DONT
    return INCONCLUSIVE


def _summary(name: str, verdict: str, best: pd.Series, payback: float, caveats: list[str]) -> str:
    where = f"{best['mode']}, {best['variant']}, batch {int(best['batch_size'])}"
    text = (f"**{name}: {verdict}** ({where}): ×{best['speedup']:.2f} "
            f"[{best['speedup_ci95_low']:.2f}, {best['speedup_ci95_high']:.2f}]")
    if not math.isnan(best["compile_s"]):
        warm = f" / {best['compile_warm_s']:.0f} s warm" if not pd.isna(best["compile_warm_s"]) else ""
        pays = "never pays back" if math.isinf(payback) else f"paid back after {payback:,.0f} calls"
        text += f"; compiling costs {best['compile_s']:.0f} s{warm}, {pays}"
    return text + (f". Caveats: {'; '.join(caveats)}." if caveats else ".")


def verdicts(df) -> pd.DataFrame:
    """One row per (label, model): the verdict, the cell behind it, its cost, caveats and a sentence."""
    check_frame(df)
    records = []
    for label in sorted(set(df["label"])):
        run = df[df["label"] == label]
        for model in ordered_models(run["model"]):
            rows = run[run["model"] == model]
            compiled = rows[(rows["mode"] != "eager") & (rows["status"] == "ok") & rows["speedup"].notna()]
            name = model_label(model)
            if compiled.empty:
                failed = ", ".join(sorted(set(rows.loc[rows["status"] != "ok", "status"].str.upper()))) or "not measured"
                records.append({"label": label, "model": model, "task_model": name, "verdict": NO_DATA,
                                "caveats": "", "summary": f"**{name}: no data** (compiled cells: {failed})."})
                continue
            best = compiled.loc[compiled["speedup_ci95_low"].idxmax()]
            verdict = _decide(best, compiled)
            payback = breakeven_calls(best["compile_s"], best["eager_ms_median"], best["latency_ms_median"]) \
                if not pd.isna(best["compile_s"]) else math.nan
            caveats = _caveats(best, compiled, rows[rows["mode"] == "eager"])
            records.append({"label": label, "model": model, "task_model": name, "verdict": verdict,
                            **{k: best[k] for k in ("mode", "variant", "batch_size", "speedup", "speedup_ci95_low",
                                                    "speedup_ci95_high", "compile_s", "compile_warm_s")},
                            "breakeven_calls": payback, "caveats": "; ".join(caveats),
                            "summary": _summary(name, verdict, best, payback, caveats)})
    return pd.DataFrame.from_records(records, columns=COLUMNS)


def verdict_markdown(df) -> str:
    """The verdict lines of one run as a Markdown list, for the top of a page."""
    table = verdicts(df)
    if table.empty:
        return "No measured cells yet: no verdict."
    return "\n".join(f"- {line}" for line in table["summary"])


def verdict_short(df) -> str:
    """One line for the index page: "vit: compile ×2.00 · resnet: inconclusive"."""
    table = verdicts(df)
    parts = [f"{row.model}: {row.verdict}" + (f" ×{row.speedup:.2f}" if row.verdict == COMPILE else "")
             for row in table.itertuples()]
    return " · ".join(parts) or "—"
