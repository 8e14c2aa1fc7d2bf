"""The answer first: per model, compile or not, with which mode and variant, how sure, at what cost.
Reads the DataFrame of ``aggregate.to_dataframe`` (one label); computes nothing the cells do not hold
except the pay-back count (stats.breakeven_calls). No torch.

Rules, per model over its successful compiled cells (every mode, batch size and variant of the run):
- "compile": the cell whose speedup interval has the highest lower bound is significantly faster
  than eager (interval above 1) and its output agrees with eager within tolerance;
- "don't compile": every compiled cell is significantly slower (interval below 1), or the fastest
  one's output disagrees with eager;
- "inconclusive" ("can't tell"): otherwise (the intervals include 1): no measurable gain on this machine.
Pay-back (calls until compiling has paid for itself) only for "compile", from the cold compile (empty
compiler cache) and from the warm one. Caveats that change one model's answer ride along (graph breaks,
a disturbed or noisy measurement, CUDA graphs that did not run, batch sizes where it is slower); those
that hold for the whole page (random weights, one process per cell) are said once (page_caveats).
"""

from __future__ import annotations

import math

import pandas as pd

from ..config.registry import display_name
from ..results.stats import breakeven_calls
from .display import MISSING, model_text, number, times
from .header import weights_words
from .notes import compile_note_words, disturbance_words, precision_words, unsteady_warmup_words
from .tables import check_frame, ordered_models

COMPILE, DONT, INCONCLUSIVE, NO_DATA = "compile", "don't compile", "inconclusive", "no data"
COLUMNS = ["label", "model", "task_model", "verdict", "mode", "variant", "batch_size", "speedup", "speedup_ci95_low",
           "speedup_ci95_high", "compile_s", "compile_warm_s", "breakeven_calls", "breakeven_warm_calls", "caveats",
           "answer", "cost", "summary"]


def _failed_accuracy(best: pd.Series) -> bool:
    """accuracy_ok is a real False (not None: not checked), whatever bool type pandas holds."""
    value = best.get("accuracy_ok")
    return value is not None and not pd.isna(value) and not bool(value)


def _caveats(best: pd.Series, compiled: pd.DataFrame, target_halfwidth: float) -> list[str]:
    """What may change this model's answer, in words (what applies to every model is said once per page:
    page_caveats)."""
    notes = []
    if (best.get("graph_breaks") or 0) > 0:
        notes.append(f"{int(best['graph_breaks'])} graph break(s)")
    if _failed_accuracy(best):
        notes.append(f"output differs from eager by {number(best['max_abs_diff'])}")
    if best.get("disturbed"):
        notes.append(f"busy machine: {disturbance_words(best)}")
    elif best.get("noisy"):
        notes.append("noisy timings")
    notes += [words for words in (compile_note_words(best), precision_words(best, target_halfwidth)) if words]
    slower = compiled[compiled["speedup_ci95_high"] < 1.0]
    if not slower.empty:
        where = ", ".join(f"{m} mode at batch {int(b)}" for m, b in zip(slower["mode"], slower["batch_size"]))
        notes.append(f"slower than eager with {where}")
    return notes


def page_caveats(df) -> list[str]:
    """Caveats that hold for every model of the page: said once, under the verdict."""
    notes = []
    ok = df[df["status"] == "ok"]
    if not ok.empty and "random" in set(ok.get("weights", [])):
        notes.append(f"{weights_words(ok).capitalize()}: the latencies stand (same architecture and input shape), "
                     "the predictions do not.")
    compiled = ok[ok["mode"] != "eager"]
    if not compiled.empty and not compiled["between_process"].fillna(False).astype(bool).any():
        notes.append("One process per cell: the intervals leave out the variation from one run to the next.")
    notes += [words for words in (unsteady_warmup_words(ok),) if words]
    return notes


def _decide(best: pd.Series, compiled: pd.DataFrame) -> str:
    if bool(best["significant"]) and best["speedup"] > 1.0:
        return DONT if _failed_accuracy(best) else COMPILE
    if (compiled["speedup_ci95_high"] < 1.0).all():
        return DONT
    return INCONCLUSIVE


def _where(best: pd.Series, several_batches: bool) -> str:
    parts = [f"{best['mode']} mode"]
    if best["variant"] != "float32":
        parts.append(str(best["variant"]))
    if several_batches:
        parts.append(f"batch {int(best['batch_size'])}")
    return ", ".join(parts)


def answer(verdict: str, best: pd.Series, several_batches: bool = False) -> str:
    """The answer in words: "Compile (default mode): 2.1× faster, 95% sure between 1.2× and 3.6×"."""
    interval = f"between {times(best['speedup_ci95_low'])} and {times(best['speedup_ci95_high'])}"
    if verdict == COMPILE:
        return (f"Compile ({_where(best, several_batches)}): {times(best['speedup'])} faster, "
                f"95% sure {interval}")
    if verdict == DONT:
        why = (f"its output differs from eager by {number(best['max_abs_diff'])}" if _failed_accuracy(best)
               else f"slower, 95% sure {interval}")
        return f"Don't compile: {times(best['speedup'])} ({why})"
    return f"Can't tell: {interval} — rerun with more budget"


def payback_words(compile_s: float, warm_s: float, calls: float, warm_calls: float) -> str:
    """"pays back after 163 calls (17 s cold), 20 calls warm (2 s)"; "—" without a compile time."""
    if pd.isna(compile_s):
        return MISSING
    text = f"pays back after {number(calls, integer=True)} calls ({number(compile_s)} s cold compile)"
    if not pd.isna(warm_s):
        text += f", {number(warm_calls, integer=True)} calls once the cache is warm ({number(warm_s)} s)"
    return text


def verdicts(df, target_halfwidth: float = 0.0) -> pd.DataFrame:
    """One row per (label, model): the verdict, the cell behind it, its cost, caveats and the answer in
    words (`answer`, `cost`, `summary`: plain text)."""
    check_frame(df)
    records = []
    for label in sorted(set(df["label"])):
        run = df[df["label"] == label]
        several_batches = run["batch_size"].nunique() > 1
        for model in ordered_models(run["model"]):
            records.append(_verdict_record(label, model, run[run["model"] == model], several_batches,
                                           target_halfwidth))
    return pd.DataFrame.from_records(records, columns=COLUMNS)


def _verdict_record(label: str, model: str, rows: pd.DataFrame, several_batches: bool,
                    target_halfwidth: float) -> dict:
    compiled = rows[(rows["mode"] != "eager") & (rows["status"] == "ok") & rows["speedup"].notna()]
    name = display_name(model)
    if compiled.empty:
        failed = ", ".join(sorted(set(rows.loc[rows["status"] != "ok", "status"].str.upper()))) or "not measured"
        text = f"No answer: the compiled cells ended {failed}" if failed != "not measured" else "No answer: not measured"
        return {"label": label, "model": model, "task_model": name, "verdict": NO_DATA, "caveats": "",
                "answer": text, "cost": MISSING, "summary": f"{name}: {text}"}
    best = compiled.loc[compiled["speedup_ci95_low"].idxmax()]
    verdict = _decide(best, compiled)
    cold, warm = (_payback(best, column) for column in ("compile_s", "compile_warm_s"))
    caveats = _caveats(best, compiled, target_halfwidth)
    said = answer(verdict, best, several_batches)
    cost = payback_words(best["compile_s"], best["compile_warm_s"], cold, warm) if verdict == COMPILE else MISSING
    summary = f"{name}: {said}" + (f"; {cost}" if verdict == COMPILE and cost != MISSING else "")
    return {"label": label, "model": model, "task_model": name, "verdict": verdict,
            **{k: best[k] for k in ("mode", "variant", "batch_size", "speedup", "speedup_ci95_low",
                                    "speedup_ci95_high", "compile_s", "compile_warm_s")},
            "breakeven_calls": cold, "breakeven_warm_calls": warm, "caveats": "; ".join(caveats),
            "answer": said, "cost": cost, "summary": summary + (f" ({'; '.join(caveats)})" if caveats else "")}


def _payback(best: pd.Series, column: str) -> float:
    if pd.isna(best[column]):
        return math.nan
    return breakeven_calls(best[column], best["eager_ms_median"], best["latency_ms_median"])


LEGEND = ("Speedup = eager latency ÷ compiled latency (medians; 2× = twice as fast). \"95% sure\": the speedup's "
          "95% interval over rounds spread across the run (each in eager and compiled worker processes). \"Can't tell\": that interval includes 1×, "
          "no measurable difference. Pays back: calls until the time saved covers compiling; cold = empty compiler cache (a "
          "first run on this machine), warm = the cache filled (every later process).")


def verdict_table(df, target_halfwidth: float = 0.0) -> pd.DataFrame:
    """The verdict as a page shows it: one row per model (display name and checkpoint), the answer and
    what compiling costs, in plain text; the run's label as a column only when there are several."""
    table = verdicts(df, target_halfwidth)
    shown = pd.DataFrame({"Model": [model_text(m, with_checkpoint=True) for m in table["model"]],
                          "Answer": table["answer"], "Compile cost": table["cost"],
                          "Watch out": [c or MISSING for c in table["caveats"].fillna("")]})
    if table["label"].nunique() > 1:
        shown.insert(0, "Run", table["label"])
    return shown


def verdict_text(df, target_halfwidth: float = 0.0) -> str:
    """The verdict as lines of plain text, for the terminal after `report`."""
    table = verdicts(df, target_halfwidth)
    if table.empty:
        return "No measured cells yet: no verdict."
    return "\n".join(f"  {row.summary}" for row in table.itertuples())


def verdict_short(df, target_halfwidth: float = 0.0) -> str:
    """One line for the index page: "ViT-B/16: compile 2.00× · ResNet-50: can't tell"."""
    table = verdicts(df, target_halfwidth)
    words = {COMPILE: "compile", DONT: "don't compile", INCONCLUSIVE: "can't tell", NO_DATA: "no data"}
    parts = [f"{display_name(row.model)}: {words[row.verdict]}"
             + (f" {times(row.speedup)}" if row.verdict == COMPILE else "") for row in table.itertuples()]
    return " · ".join(parts) or MISSING
