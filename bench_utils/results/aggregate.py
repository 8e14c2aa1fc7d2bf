"""From process rows to cells: the repeats of a cell combined, and every compiled cell paired with
its eager cell. The one place a cell's statistics are computed and the one place rows become a
pandas DataFrame (`to_dataframe`, one row per cell): every table, chart, verdict and comparison
reads its columns. No torch; pandas is imported on use.

One eager number per cell, by construction: a compiled cell's `eager_ms_*` and `speedup` are read
from the eager cell of the same model, batch size and variant, the very numbers the eager row shows.
"""

from __future__ import annotations

import math

from ..config.bench_config import variant_name
from ..config.modes import CUDAGRAPH_MODES
from .rows import read_results
from .stats import DISAGREEING_REPEATS, LatencySummary, percent_improvement, speedup_over_processes, summarize_runs

_IDENTITY = ("label", "model", "checkpoint", "task", "size", "batch_size", "mode", "fullgraph", "dtype", "device",
             "settings", "autocast", "channels_last", "warmup", "iterations", "min_time_s")
PROFILE = ("profile_calls", "profile_call_ms", "profile_ops_per_call", "profile_op_ms", "profile_compiled_ms",
           "profile_overhead_ms", "profile_kernels_per_call", "profile_device_ms", "profile_launches_per_call",
           "profile_graph_replays_per_call", "profile_top_ops", "profile_error", "profile_trace")
_FIRST_OK = ("weights", "weights_note", "num_params", "compile_s", "compile_warm_s", "fx_cache_hits",
             "fx_cache_misses", "started_at", "accuracy_reference", *PROFILE)  # from the first process: with cold_compile, the
# cold one; the profiler pass runs in repeat 0 only
_LARGEST = ("peak_mem_mb", "peak_reserved_mb", "max_abs_diff", "graph_breaks", "graph_count", "recompiles",
            "cudagraph_skips", "cudagraphs_recorded", "others_cpu_pct", "steal_pct", "warmup_s", "warmup_calls")
_LISTS = ("break_reasons", "recompile_reasons")
# others' CPU share or steal while timing (measure/machine_load.py), % of the machine: above this, disturbed
DISTURBED_PCT = 10.0
ENV_COLUMNS = {"hardware": "device_name", "torch": "torch", "transformers": "transformers",
               "hostname": "hostname", "torch_threads": "torch_threads"}


def _largest(values):
    present = [v for v in values if v is not None]
    return max(present) if present else None


def _status(rows: list) -> tuple[str, str]:
    ok = [row for row in rows if row.status == "ok"]
    failed = [row for row in rows if row.status != "ok"]
    if not ok:
        return failed[-1].status, failed[-1].error
    if failed:
        return "ok", f"{len(failed)} of {len(rows)} processes failed; last: {failed[-1].status}: {failed[-1].error}"
    return "ok", ""


def _no_samples(row):
    """An ok row without samples cannot be summarized: it counts as an error of that process."""
    import dataclasses

    return dataclasses.replace(row, status="error", error="the row has status ok but no samples")


def _latency(summary: LatencySummary | None) -> dict:
    names = ("mean", "median", "p10", "p90", "std", "ci95_low", "ci95_high")
    if summary is None:
        return {f"latency_ms_{name}": None for name in names} | {"process_spread": None, "between_process": None}
    return {f"latency_ms_{name}": getattr(summary, f"{name}_ms") for name in names} | {
        "process_spread": summary.process_spread, "between_process": summary.processes > 1}


def _disturbance(record: dict) -> str:
    """Why a cell's numbers may not be the machine's own: "" when nothing says so."""
    reasons = []
    if (record["process_spread"] or 0) > DISAGREEING_REPEATS:
        reasons.append(f"{record['mode']} processes disagree by {record['process_spread']:.0%}")
    if (record["others_cpu_pct"] or 0) > DISTURBED_PCT:
        reasons.append(f"other processes used {record['others_cpu_pct']:.0f}% of the CPU")
    if (record["steal_pct"] or 0) > DISTURBED_PCT:
        reasons.append(f"hypervisor stole {record['steal_pct']:.0f}%")
    if record["warmup_steady"] is False:
        reasons.append("warm-up did not settle")
    return "; ".join(reasons)


def cudagraph_note(record: dict) -> str:
    """For a CUDA-graph mode on CUDA: "" when its graphs ran as CUDA graphs, else what happened (its
    speed is then default mode's under another label)."""
    if record["mode"] not in CUDAGRAPH_MODES or record["device"] != "cuda" or record["status"] != "ok":
        return ""
    if record["cudagraphs_recorded"] == 0:
        return "ran without CUDA graphs (none recorded)"
    if record["cudagraph_skips"]:
        return f"{record['cudagraph_skips']} graph(s) skipped CUDA graphs"
    return ""


def combine(rows: list) -> dict:
    """One cell's record from the rows of its processes (same cell key, any status)."""
    rows = sorted(rows, key=lambda row: row.repeat)
    ok = [row for row in rows if row.status == "ok" and row.samples_s]
    first = (ok or rows)[0]
    record = {name: getattr(first, name) for name in _IDENTITY + _FIRST_OK}
    record["status"], record["error"] = _status([r if r.status != "ok" or r.samples_s else _no_samples(r)
                                                 for r in rows])
    record["variant"] = variant_name(first.dtype, first.autocast, first.channels_last)
    record |= {column: first.env.get(key, "") for column, key in ENV_COLUMNS.items()}
    record["hostname"] = ", ".join(sorted({row.env.get("hostname", "") for row in rows} - {""}))
    record["repeats"], record["repeats_ok"] = len(rows), len(ok)
    record |= {name: _largest(getattr(row, name) for row in ok) for name in _LARGEST}
    record |= {name: sorted({r for row in ok for r in getattr(row, name)}) for name in _LISTS}
    record["accuracy_ok"] = None if not ok or any(r.accuracy_ok is None for r in ok) else all(r.accuracy_ok for r in ok)
    record["task_agreement"] = min((r.task_agreement for r in ok if r.task_agreement is not None), default=None)
    record["warmup_steady"] = None if not ok else all(r.warmup_steady is not False for r in ok)
    record["duration_s"] = sum(row.duration_s or 0.0 for row in rows)
    record["samples_s"] = [row.samples_s for row in ok]
    summary = summarize_runs(record["samples_s"]) if ok else None
    record |= _latency(summary)
    record["noisy"] = bool(summary and summary.noisy)
    record["mean_outliers"] = bool(summary and summary.mean_outliers)
    record["cudagraph_note"] = cudagraph_note(record)
    return record


EAGER_PROFILE = ("profile_ops_per_call", "profile_op_ms", "profile_overhead_ms", "profile_call_ms",
                 "profile_kernels_per_call", "profile_device_ms", "profile_top_ops")  # beside a compiled cell's own
_SPEEDUP = ("eager_ms_mean", "eager_ms_median", "eager_ms_ci95_low", "eager_ms_ci95_high", "speedup",
            "speedup_ci95_low", "speedup_ci95_high", "significant", "improvement_pct")


def _run(row) -> tuple:
    """Rows of one cell of one run: the same label, hardware and torch (two torch versions measured
    under one label, e.g. a before/after pair loaded together, stay two cells)."""
    return (row.label, row.env.get("device_name", ""), row.env.get("torch", ""), *row.cell)


def _baseline_key(record: dict) -> tuple:
    return (record["label"], record["hardware"], record["torch"], record["model"], record["size"],
            record["batch_size"], record["dtype"], record["fullgraph"], record["autocast"], record["channels_last"])


def _pair(record: dict, eager: dict | None) -> dict:
    """The eager columns and the speedup of `record` against its eager cell (NaN without one)."""
    empty = dict.fromkeys(_SPEEDUP, math.nan) | {"significant": False} | {f"eager_{n}": None for n in EAGER_PROFILE}
    if eager is None or eager["status"] != "ok" or record["status"] != "ok":
        return empty
    fields = {"eager_ms_mean": eager["latency_ms_mean"], "eager_ms_median": eager["latency_ms_median"],
              "eager_ms_ci95_low": eager["latency_ms_ci95_low"], "eager_ms_ci95_high": eager["latency_ms_ci95_high"]}
    fields |= {f"eager_{name}": eager[name] for name in EAGER_PROFILE}
    if record is eager:
        return fields | {"speedup": 1.0, "speedup_ci95_low": 1.0, "speedup_ci95_high": 1.0, "significant": False,
                         "improvement_pct": 0.0}
    estimate = speedup_over_processes(eager["samples_s"], record["samples_s"])
    return fields | {"speedup": estimate.speedup, "speedup_ci95_low": estimate.ci95_low,
                     "speedup_ci95_high": estimate.ci95_high, "significant": estimate.significant,
                     "improvement_pct": percent_improvement(eager["latency_ms_median"], record["latency_ms_median"])}


def cells(rows) -> list[dict]:
    """Every cell of `rows` (process rows, e.g. read_results(...).rows) as one record, in the order of
    each cell's first row; compiled cells carry their eager cell's numbers and the speedup."""
    latest = {(*_run(row), row.repeat): row for row in rows}  # a later row of a process replaces it
    groups: dict[tuple, list] = {}
    for row in latest.values():
        groups.setdefault(_run(row), []).append(row)
    records = [combine(group) for group in groups.values()]
    eager = {_baseline_key(r): r for r in records if r["mode"] == "eager"}
    for record in records:
        baseline = eager.get(_baseline_key(record))
        record |= _pair(record, baseline)
        reasons = [_disturbance(record)] + ([_disturbance(baseline)] if baseline and baseline is not record else [])
        record["disturbed_reason"] = "; ".join(r for r in reasons if r)
        record["disturbed"] = bool(record["disturbed_reason"])
    return records


def to_dataframe(rows, with_samples: bool = False):
    """The one place a list of rows becomes a pandas DataFrame: one row per cell, its processes
    combined and compiled cells paired with their eager cell (cells). With `with_samples`,
    `samples_s` holds one list of raw samples (seconds) per process."""
    import pandas as pd

    frame = pd.DataFrame.from_records(cells(rows), columns=CELL_COLUMNS)
    return frame if with_samples else frame.drop(columns=["samples_s"])


CELL_COLUMNS = [  # the DataFrame's columns, in order
    "label", "model", "checkpoint", "task", "size", "batch_size", "mode", "variant", "dtype", "autocast",
    "channels_last", "fullgraph", "device", "status", "error", "weights", "weights_note", "num_params",
    "latency_ms_mean", "latency_ms_median", "latency_ms_p10", "latency_ms_p90", "latency_ms_std",
    "latency_ms_ci95_low", "latency_ms_ci95_high", "eager_ms_mean", "eager_ms_median", "eager_ms_ci95_low",
    "eager_ms_ci95_high", "speedup", "speedup_ci95_low", "speedup_ci95_high", "significant", "improvement_pct",
    "between_process", "repeats", "repeats_ok", "process_spread", "noisy", "mean_outliers", "disturbed",
    "disturbed_reason", "others_cpu_pct", "steal_pct", "warmup", "warmup_calls", "warmup_s", "warmup_steady",
    "iterations", "min_time_s", "compile_s", "compile_warm_s", "fx_cache_hits", "fx_cache_misses",
    "cudagraph_skips", "cudagraphs_recorded", "cudagraph_note", "peak_mem_mb", "peak_reserved_mb", "max_abs_diff",
    "accuracy_ok", "accuracy_reference", "task_agreement", "graph_breaks", "graph_count", "recompiles",
    "break_reasons", "recompile_reasons", *PROFILE, *(f"eager_{name}" for name in EAGER_PROFILE), "hardware",
    "torch", "transformers", "hostname", "torch_threads", "settings", "started_at", "duration_s", "samples_s"]


def load_dataframe(*paths, with_samples: bool = False):
    """Rows of one or more results files as a single DataFrame."""
    rows = [row for path in paths for row in read_results(path).rows]
    return to_dataframe(rows, with_samples=with_samples)
