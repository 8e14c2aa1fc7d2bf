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
import numpy as np

from .rows import read_results
from .stats import (LatencySummary, block_medians_ms, outlying_rounds, paired_log_ratios, percent_improvement,
                    relative_halfwidth, round_clusters, speedup_over_processes, speedup_over_rounds, summarize_runs)

_IDENTITY = ("label", "model", "checkpoint", "task", "size", "batch_size", "mode", "fullgraph", "dtype", "device",
             "settings", "autocast", "channels_last", "warmup", "iterations", "min_time_s")
PROFILE = ("profile_calls", "profile_call_ms", "profile_ops_per_call", "profile_op_ms", "profile_compiled_ms",
           "profile_overhead_ms", "profile_kernels_per_call", "profile_device_ms", "profile_launches_per_call",
           "profile_graph_replays_per_call", "profile_top_ops", "profile_error", "profile_trace")
_FIRST_OK = ("weights", "weights_note", "num_params", "compile_s", "compile_warm_s", "fx_cache_hits",
             "fx_cache_misses", "started_at", "accuracy_reference", *PROFILE)  # from the first process: with cold_compile, the
# cold one; the profiler pass runs in repeat 0 only
_LARGEST = ("peak_mem_mb", "peak_reserved_mb", "cudagraph_pool_mb", "max_abs_diff", "graph_breaks", "graph_count",
            "recompiles", "cudagraph_skips", "cudagraphs_recorded", "others_cpu_pct", "steal_pct", "warmup_s", "warmup_calls")
_LISTS = ("break_reasons", "recompile_reasons")
# others' CPU share or steal while timing (measure/machine_load.py), % of the machine: above this, disturbed
DISTURBED_PCT = 10.0
ENV_COLUMNS = {"hardware": "device_name", "torch": "torch", "transformers": "transformers",
               "hostname": "hostname", "torch_threads": "torch_threads", "allocator": "allocator",
               "compute_capability": "compute_capability", "cpu_count": "cpu_count", "python": "python",
               "gpu_memory_gb": "gpu_memory_gb"}


def _largest(values):
    present = [v for v in values if v is not None]
    return max(present) if present else None


def _status(rows: list) -> tuple[str, str]:
    ok = [row for row in rows if row.status == "ok"]
    failed = [row for row in rows if row.status != "ok"]
    if not ok:
        return failed[-1].status, failed[-1].error
    notes = [f"{len(failed)} of {len(rows)} processes failed; last: {failed[-1].status}: {failed[-1].error}"
             ] if failed else []
    exited = [row for row in ok if row.exit_code]  # measured, then the process died (e.g. at teardown)
    if exited:
        notes.append(f"{len(exited)} of {len(rows)} processes wrote their row, then exited with status "
                     f"{', '.join(str(row.exit_code) for row in exited)}")
    return "ok", "; ".join(notes)


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
    if (record["others_cpu_pct"] or 0) > DISTURBED_PCT:
        reasons.append(f"other processes used {record['others_cpu_pct']:.0f}% of the CPU")
    if (record["steal_pct"] or 0) > DISTURBED_PCT:
        reasons.append(f"hypervisor stole {record['steal_pct']:.0f}%")
    return "; ".join(reasons)


# Inductor compiles bfloat16 graphs for a GPU only from compute capability 8.0: below it
# torch/_inductor/compile_fx.py, _check_triton_bf16_support, raises SkipFrame when
# device_interface.is_bf16_supported(including_emulation=False) is False (torch/cuda/__init__.py:
# `get_device_properties(device).major >= 8`); dynamo then runs the frame eagerly and counts no graph
# (counters["stats"]["unique_graphs"] is bumped after the backend returns, _dynamo/output_graph.py).
BF16_MIN_CAPABILITY = 8
# A CUDA-graph mode's profiled call may launch a few kernels itself (cudagraph_trees.py copies the
# non-static inputs with one torch._foreach_copy_ per replay, _copy_inputs_and_remove_from_src); more
# than this share of its kernels launched one by one means partial CUDA-graph coverage.
OUTSIDE_GRAPHS_SHARE = 0.1


def bf16_compiles(dtype: str, device: str, capability: str) -> bool:
    """Can Inductor compile a `dtype` model on this device? False for bfloat16 on a CUDA GPU below
    compute capability 8.0 (T4 7.5, V100 7.0); True where the capability is unknown ("")."""
    if dtype != "bfloat16" or device != "cuda" or not capability:
        return True
    return int(str(capability).split(".")[0]) >= BF16_MIN_CAPABILITY


def kernels_outside_graphs(record: dict) -> float | None:
    """Kernels per profiled call the host launched one by one, beyond one input copy per CUDA-graph
    replay; None without a CUDA profile."""
    launches, replays = record.get("profile_launches_per_call"), record.get("profile_graph_replays_per_call")
    if launches is None or replays is None:
        return None
    return max(launches - replays, 0.0)


def _ran_eager(record: dict) -> str:
    """A compile mode whose process compiled no graph ran the eager model under the mode's name."""
    if record["mode"] == "eager" or record.get("graph_count") != 0:
        return ""
    capability = record.get("compute_capability") or ""
    if not bf16_compiles(record["dtype"], record["device"], capability):
        return (f"compiled no graph, ran eager: Inductor does not compile bfloat16 below compute capability "
                f"{BF16_MIN_CAPABILITY}.0 (this GPU: {capability}; SkipFrame)")
    return "compiled no graph, ran eager (graph_count 0)"


def _graph_coverage(record: dict) -> str:
    """For a CUDA-graph mode: "" when its kernels ran in CUDA graphs, else what happened."""
    if record["cudagraphs_recorded"] == 0:
        return "ran without CUDA graphs (none recorded)"
    notes = [f"{record['cudagraph_skips']} graph(s) skipped CUDA graphs"] if record["cudagraph_skips"] else []
    outside, kernels = kernels_outside_graphs(record), record.get("profile_kernels_per_call")
    if record.get("profile_graph_replays_per_call") == 0 and kernels:
        notes.append("no CUDA-graph replay in the profiled calls")
    elif outside is not None and kernels and outside > OUTSIDE_GRAPHS_SHARE * kernels:
        # graph partitions (torch._inductor.config.graph_partition, on by default) run ops that cannot
        # be graphed between the graphs, and a graph with cudagraph_fail_reasons is disabled without a
        # cudagraph_skips count (output_code.py, cudagraph_partition_post_compile)
        notes.append(f"partial CUDA-graph coverage: {outside:.0f} of {kernels:.0f} kernels per call launched "
                     "outside CUDA graphs")
    return "; ".join(notes)


def cudagraph_note(record: dict) -> str:
    """What a compile mode did not do on an ok cell, "" when nothing: a compile mode that compiled no
    graph ran eager (any device); a CUDA-graph mode on CUDA that recorded no CUDA graph, skipped some,
    or ran part of its kernels outside them (partial coverage: needs the profile's kernel and launch
    counts). Its speed is then partly or wholly another mode's under this mode's label."""
    if record["status"] != "ok":
        return ""
    notes = [_ran_eager(record)]
    if record["mode"] in CUDAGRAPH_MODES and record["device"] == "cuda":
        notes.append(_graph_coverage(record))
    return "; ".join(note for note in notes if note)


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
    warm = sorted(row.compile_s for row in ok if row.repeat > 0 and row.compile_s is not None)
    if warm:  # later rounds compile in new processes with the cache round 0 filled: what a restart pays
        record["compile_warm_s"] = warm[len(warm) // 2]
    record["samples_s"] = [row.samples_s for row in ok]
    # round -> block medians, ms (rows from before blocks: the whole process as one block)
    record["round_blocks_ms"] = {row.repeat: block_medians_ms(row.samples_s, row.block_lengths or [len(row.samples_s)])
                                 for row in ok}
    record["blocked"] = bool(ok) and all(row.block_lengths for row in ok)
    record["round_process"] = {row.repeat: row.process_round for row in ok}  # round -> its processes' first round
    record["target_halfwidth"] = first.target_halfwidth
    summary = summarize_runs(record["samples_s"]) if ok else None
    record |= _latency(summary)
    record["noisy"] = bool(summary and summary.noisy)
    record["mean_outliers"] = bool(summary and summary.mean_outliers)
    record["cudagraph_note"] = cudagraph_note(record)
    return record


EAGER_PROFILE = ("profile_ops_per_call", "profile_op_ms", "profile_overhead_ms", "profile_call_ms",
                 "profile_kernels_per_call", "profile_device_ms", "profile_top_ops")  # beside a compiled cell's own
_SPEEDUP = ("eager_ms_mean", "eager_ms_median", "eager_ms_ci95_low", "eager_ms_ci95_high", "speedup",
            "speedup_ci95_low", "speedup_ci95_high", "significant", "improvement_pct", "speedup_halfwidth",
            "paired_rounds")


def _run(row) -> tuple:
    """Rows of one cell of one run: the same label, settings, hardware and torch (two torch versions
    measured under one label, e.g. a before/after pair loaded together, stay two cells; so do rows
    measured with other settings: their numbers are not comparable)."""
    return (row.label, row.settings, row.env.get("device_name", ""), row.env.get("torch", ""), *row.cell)


def _baseline_key(record: dict) -> tuple:
    return (record["label"], record["settings"], record["hardware"], record["torch"], record["model"], record["size"],
            record["batch_size"], record["dtype"], record["fullgraph"], record["autocast"], record["channels_last"])


def _no_rounds() -> dict:
    """The round fields (_speedup) of a cell compared without paired rounds."""
    return {"paired_rounds": 0, "outlying_rounds": [], "round_logs": [], "round_workers": []}


def _pair(record: dict, eager: dict | None) -> dict:
    """The eager columns and the speedup of `record` against its eager cell (NaN without one)."""
    empty = dict.fromkeys(_SPEEDUP, math.nan) | {"significant": False} | _no_rounds() | {
        f"eager_{n}": None for n in EAGER_PROFILE}
    if eager is None or eager["status"] != "ok" or record["status"] != "ok":
        return empty
    fields = {"eager_ms_mean": eager["latency_ms_mean"], "eager_ms_median": eager["latency_ms_median"],
              "eager_ms_ci95_low": eager["latency_ms_ci95_low"], "eager_ms_ci95_high": eager["latency_ms_ci95_high"]}
    fields |= {f"eager_{name}": eager[name] for name in EAGER_PROFILE}
    if record is eager:
        return fields | {"speedup": 1.0, "speedup_ci95_low": 1.0, "speedup_ci95_high": 1.0, "significant": False,
                         "improvement_pct": 0.0, "speedup_halfwidth": 0.0} | _no_rounds()
    estimate, paired = _speedup(eager, record)
    return fields | paired | {"speedup": estimate.speedup, "speedup_ci95_low": estimate.ci95_low,
                              "speedup_ci95_high": estimate.ci95_high, "significant": estimate.significant,
                              "speedup_halfwidth": relative_halfwidth(estimate),
                              "improvement_pct": percent_improvement(eager["latency_ms_median"],
                                                                     record["latency_ms_median"])}


def _speedup(eager: dict, record: dict):
    """(SpeedupEstimate, fields): the speedup over the rounds both cells measured in blocks
    (stats.speedup_over_rounds), with the rounds paired, the outlying ones, and each round's log
    speedup and worker pair (what sweep/adaptive.py projects the next round's worth from); rows from
    before blocks, or no common round: the processes' medians compared unpaired
    (stats.speedup_over_processes)."""
    common = sorted(set(eager["round_blocks_ms"]) & set(record["round_blocks_ms"]))
    if not (eager["blocked"] and record["blocked"] and common):
        return speedup_over_processes(eager["samples_s"], record["samples_s"]), _no_rounds()
    rounds = [paired_log_ratios(eager["round_blocks_ms"][r], record["round_blocks_ms"][r]) for r in common]
    pairs = worker_pairs(eager, record, common)
    logs, labels = round_clusters(rounds, pairs)
    measured = [r for r, blocks in zip(common, rounds) if np.size(blocks)]  # the rounds round_clusters keeps
    return speedup_over_rounds(rounds, pairs), {
        "paired_rounds": len(common), "outlying_rounds": [measured[i] for i in outlying_rounds(logs)],
        "round_logs": list(logs), "round_workers": labels}


def worker_pairs(eager: dict, record: dict, rounds: list[int]) -> list:
    """Per round, the pair of workers that measured it, (eager's, compiled's) first round: the design
    effect's clusters (stats.design_effect); None for rows from before workers measured several
    rounds (each round then had its own pair)."""
    pairs = [(eager["round_process"].get(r), record["round_process"].get(r)) for r in rounds]
    return [None if None in pair else pair for pair in pairs]


def precision_note(record: dict) -> str:
    """For a compiled cell measured with a precision target: "" when its speedup interval is within
    it, else that the budget (or max_repeats) ran out first, with the precision reached."""
    target, width = record.get("target_halfwidth") or 0.0, record.get("speedup_halfwidth")
    if record["mode"] == "eager" or not target or width is None or math.isnan(width) or width <= target:
        return ""
    reached = "no interval" if math.isinf(width) else "more than +-100%" if width > 1 else f"+-{width:.0%}"
    return f"the budget ran out at {reached} after {record['paired_rounds']} rounds (target +-{target:.0%})"


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
        if record.get("outlying_rounds"):
            reasons.append(f"round(s) {', '.join(map(str, record['outlying_rounds']))} disagree with the others "
                           "more than their spread explains")
        record["disturbed_reason"] = "; ".join(r for r in reasons if r)
        record["disturbed"] = bool(record["disturbed_reason"])
        record["precision_note"] = precision_note(record)
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
    "speedup_halfwidth", "paired_rounds", "outlying_rounds", "target_halfwidth", "precision_note",
    "between_process", "repeats", "repeats_ok", "process_spread", "noisy", "mean_outliers", "disturbed",
    "disturbed_reason", "others_cpu_pct", "steal_pct", "warmup", "warmup_calls", "warmup_s", "warmup_steady",
    "iterations", "min_time_s", "compile_s", "compile_warm_s", "fx_cache_hits", "fx_cache_misses",
    "cudagraph_skips", "cudagraphs_recorded", "cudagraph_note", "peak_mem_mb", "peak_reserved_mb",
    "cudagraph_pool_mb", "max_abs_diff", "accuracy_ok", "accuracy_reference", "task_agreement", "graph_breaks",
    "graph_count", "recompiles", "break_reasons", "recompile_reasons", *PROFILE,
    *(f"eager_{name}" for name in EAGER_PROFILE), "hardware", "torch", "transformers", "hostname", "torch_threads",
    "allocator", "compute_capability", "cpu_count", "python", "gpu_memory_gb", "settings", "started_at",
    "duration_s", "samples_s"]


def load_dataframe(*paths, with_samples: bool = False):
    """Rows of one or more results files as a single DataFrame."""
    rows = [row for path in paths for row in read_results(path).rows]
    return to_dataframe(rows, with_samples=with_samples)
