"""The one place a list of rows becomes a pandas DataFrame: one row per cell, columns in order. No torch
(pandas is imported on use)."""

from __future__ import annotations

from .aggregate import EAGER_PROFILE, PROFILE, cells
from .rows import read_results


def to_dataframe(rows, with_samples: bool = False):
    """The one place a list of rows becomes a pandas DataFrame: one row per cell, its processes
    combined and compiled cells paired with their eager cell (aggregate.cells). With `with_samples`,
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
    "speedup_halfwidth", "paired_rounds", "outlying_rounds", "target_halfwidth", "precision_note", "between_process", "repeats", "repeats_ok", "process_spread", "noisy", "mean_outliers", "disturbed", "disturbed_reason",
    "others_cpu_pct", "steal_pct", "warmup", "warmup_calls", "warmup_s", "warmup_steady", "iterations",
    "min_time_s", "compile_s", "compile_warm_s", "fx_cache_hits", "fx_cache_misses", "cudagraph_skips", "cudagraphs_recorded", "cudagraph_note",
    "peak_mem_mb", "peak_reserved_mb", "cudagraph_pool_mb", "max_abs_diff", "accuracy_ok", "accuracy_reference", "task_agreement", "graph_breaks", "graph_count", "recompiles",
    "break_reasons", "recompile_reasons", *PROFILE, *(f"eager_{name}" for name in EAGER_PROFILE), "hardware", "torch", "transformers", "hostname", "torch_threads",
    "compute_capability", "cpu_count", "python", "gpu_memory_gb", "settings", "started_at", "duration_s", "samples_s"]


def load_dataframe(*paths, with_samples: bool = False):
    """Rows of one or more results files as a single DataFrame."""
    rows = [row for path in paths for row in read_results(path).rows]
    return to_dataframe(rows, with_samples=with_samples)
