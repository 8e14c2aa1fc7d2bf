"""What a run measured, on what, with which weights: the facts table near the end of every page (the
page's header and its weights caveat are header.py and verdict.page_caveats). No torch."""

from __future__ import annotations

import pandas as pd

from ..config.registry import display_name
from ..results.rows import OWN_WEIGHTS
from .display import MISSING, cell_text
from .tables import cell_states_text, check_frame, cuda_graph_cells, eager_beside_cells, ordered_models


# (fact shown in the report, DataFrame column, the device it is a fact of: "" for every run);
# python/platform appear when to_dataframe provides them.
_ENV_FACTS = (("hardware", "hardware", ""), ("device", "device", ""),
              ("CPU instruction set", "cpu_capability", "cpu"),
              ("GPU driver", "driver", "cuda"), ("CUDA (torch built with)", "cuda_build", "cuda"),
              ("cuDNN", "cudnn", "cuda"), ("TF32 in float32 matmuls", "cuda_matmul_allow_tf32", "cuda"),
              ("TF32 in float32 convolutions (cuDNN)", "cudnn_allow_tf32", "cuda"),
              ("configurations", "configuration", ""), ("model size", "size", ""),
              ("fullgraph", "fullgraph", ""), ("torch", "torch", ""), ("transformers", "transformers", ""),
              ("python", "python", ""), ("platform", "platform", ""), ("compile-bench", "compile_bench", ""),
              ("host", "hostname", ""),
              ("torch threads", "torch_threads", ""), ("memory allocator", "allocator", "cpu"),
              ("minimum warm-up calls (then until steady)", "warmup", ""),
              ("minimum timed calls per worker and round", "iterations", ""),
              ("minimum timed seconds per worker and round", "min_time_s", ""), ("rounds per cell", "repeats", ""))


def _joined(values) -> str:
    texts = sorted({cell_text(v) for v in values if v is not None and not pd.isna(v) and str(v) != ""})
    return ", ".join(texts) or MISSING


def _facts_of_run(run: pd.DataFrame) -> dict[str, str]:
    devices = set(run["device"])
    facts = {fact: _joined(run[column]) for fact, column, device in _ENV_FACTS
             if column in run.columns and (not device or device in devices)}
    if "cuda" in devices:
        facts["CUDA graphs"] = cuda_graphs_text(run)
        facts["the host while timing"] = launch_host_text(run)
    facts["eager timed for the speedups"] = eager_pairing_text(run)
    facts["cells"] = cell_states_text(run)
    facts["weights"] = _weights_summary(run)
    for model in ordered_models(run["model"]):
        rows = run[run["model"] == model]
        used, note = _joined(rows.get("weights", [])), _joined(rows.get("weights_note", []))
        facts[f"weights: {display_name(model)}"] = used if note == MISSING else f"{used} ({note})"
    return facts


def cuda_graphs_text(run: pd.DataFrame) -> str:
    """What the CUDA graphs of a GPU run came to: the compiled cells that recorded one, the pools'
    reserved memory (MiB), the graphs Inductor ran without."""
    ok = run[(run["status"] == "ok") & (run["configuration"] != "eager")]
    if ok.empty or "cudagraphs_recorded" not in ok.columns:
        return MISSING
    recorded, pools = cuda_graph_cells(ok)
    if recorded.empty:
        return "none recorded (no compiled cell replayed a CUDA graph)"
    pool = (f"; their pools held {cell_text(pools.min())}–{cell_text(pools.max())} MiB"
            if len(pools) > 1 else f"; its pool held {cell_text(pools.iloc[0])} MiB" if len(pools) else "")
    skips = ok["cudagraph_skips"].fillna(0).sum() if "cudagraph_skips" in ok.columns else 0
    skipped = f"; {int(skips)} graph(s) ran without (Inductor skipped them)" if skips else ""
    return (f"recorded in {len(recorded)} of {len(ok)} compiled cells "
            f"({', '.join(sorted(set(recorded['configuration'])))}){pool}{skipped}")


def launch_host_text(run: pd.DataFrame) -> str:
    """A GPU run's host while it timed (measure/launch_thread.py): where the workers' launching threads
    ran (each pinned to the CPU it warmed up on), torch's threads, the GPU's SM clock range (NVML)."""
    ok = run[run["status"] == "ok"]
    if ok.empty or "launch_cpus" not in ok.columns:
        return MISSING
    read = [cpus for cpus in ok["launch_cpus"] if isinstance(cpus, list) and cpus]
    if not read:  # rows of a version that did not record the launching thread's CPUs
        return "not recorded by this run's version"
    cpus = sorted({int(cpu) for cpus in read for cpu in cpus if cpu >= 0})
    where = (f"each worker's launching thread pinned to the CPU it warmed up on ({len(cpus)} CPU"
             f"{'s' if len(cpus) != 1 else ''} among the workers)" if cpus else "the launching threads' CPUs unknown")
    low = pd.to_numeric(ok.get("sm_clock_mhz_low"), errors="coerce").min() if "sm_clock_mhz_low" in ok else None
    high = pd.to_numeric(ok.get("sm_clock_mhz_high"), errors="coerce").max() if "sm_clock_mhz_high" in ok else None
    clock = (f"GPU SM clock {cell_text(low)}–{cell_text(high)} MHz at the blocks' ends (NVML)"
             if low is not None and not pd.isna(low) else "GPU SM clock not read (no pynvml)")
    return f"{where}; {clock}"


def eager_pairing_text(run: pd.DataFrame) -> str:
    """Where the run timed the eager calls its speedups divide by (the rows' eager_beside): in each
    configuration's own processes, between its blocks, or in eager's own worker, taking turns with it;
    and, where eager's own worker measured fewer rounds than the configurations (its row only: the
    selection round, jobs.eager_after_selection), so."""
    beside, measured = eager_beside_cells(run)
    if not measured or "eager_beside" not in run.columns:
        return MISSING
    own = "in each configuration's own processes, its blocks and eager's taking turns (eager_in_process)"
    apart = "in eager's own worker, its blocks and each configuration's worker's taking turns"
    if beside == measured:
        eager_rounds = run.loc[(run["configuration"] == "eager") & (run["status"] == "ok"), "repeats"]
        others = run.loc[(run["configuration"] != "eager") & (run["status"] == "ok"), "repeats"]
        if len(eager_rounds) and len(others) and eager_rounds.max() == 1 < others.max():
            return own + "; eager's own worker, for the eager row alone, measured the selection round"
        return own
    if beside == 0:
        return apart
    return f"{own} for {beside} of {measured} cells; for the others {apart}"


def _weights_summary(run: pd.DataFrame) -> str:
    if "weights" not in run.columns:
        return MISSING
    used = run[run["weights"].fillna("") != ""]  # failed cells may not have got as far as loading
    if used.empty:
        return MISSING
    random_models = ordered_models(used.loc[used["weights"] == "random", "model"])
    if (used["weights"] == OWN_WEIGHTS).all():
        return "the notebook's own object, its weights as they were (bench_utils.race)"
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
