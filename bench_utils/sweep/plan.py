"""How long will a profile take? An estimate per cell before anything runs (`python -m bench_utils
plan PARAMS.yaml`), from the guide's published latencies when the label names one of its GPUs, and
the cells whose estimate exceeds `timeout_s`. No torch.

Per process: a start (interpreter, imports, model load), warm-up (at least `warmup` calls and two
windows of min_time_s / 4, at most `max_warmup_s`), timing (at least `iterations` calls and
`min_time_s`), and in compiled processes the compile: cold in the first process, warm (cache hits)
in the others, each priced by its own constant (config/modes.py, per mode, with their public sources),
not measurements of your model: the estimate is for planning, the sweep's rows say what it took.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..config.bench_config import BenchConfig
from ..config.modes import COLD_COMPILE_S, WARM_COMPILE_S

START_S = 15.0  # a process: Python, torch and transformers imports, model load, seconds
TINY_COMPILE_SHARE = 0.1  # a tiny model compiles in about this share of a full-size one's time
TIMEOUT_MARGIN = 1.5  # flag a process whose estimate is above timeout_s / this


@dataclass(frozen=True)
class ProcessEstimate:
    model: str
    batch_size: int
    mode: str
    repeat: int
    latency_ms: float | None  # the guide's mean for this cell on the label's GPU, None if unknown
    seconds: float  # estimated wall time of the process


def guide_latency_ms(gpu: str, model: str, batch_size: int, mode: str) -> float | None:
    """The guide's published mean (ms) for a cell on `gpu` (A100, V100, T4), eager or compiled (its
    default-mode tables stand in for every compile mode); None where it published none."""
    from ..results.reference import load_reference

    table = load_reference()
    rows = table[(table["study"] == "torch 2.0.1") & (table["gpu"] == gpu) & (table["model"] == model)
                 & (table["batch_size"] == batch_size)]
    if rows.empty:
        return None
    value = float(rows["eager_ms" if mode == "eager" else "compiled_ms"].iloc[0])
    return None if math.isnan(value) else value


def guide_gpu(label: str) -> str | None:
    """The guide GPU a label names ("A100 (nightly)" -> "A100"), else None."""
    from ..results.reference import GPUS

    return next((gpu for gpu in GPUS if gpu.lower() in label.lower()), None)


def process_seconds(cfg: BenchConfig, mode: str, repeat: int, latency_ms: float | None) -> float:
    """The estimated wall time of one process (see the module docstring)."""
    call_s = (latency_ms or 0.0) / 1000
    warmup_s = min(max(cfg.warmup * call_s, 0.5 * cfg.min_time_s), cfg.max_warmup_s)
    timing_s = max(cfg.iterations * call_s, cfg.min_time_s)
    scale = TINY_COMPILE_SHARE if cfg.size == "tiny" else 1.0
    cold, warm = COLD_COMPILE_S[mode] * scale, WARM_COMPILE_S[mode] * scale
    first = repeat == 0  # later processes find the first one's graphs in the compiler cache
    compile_s = (cold + warm if first and cfg.cold_compile  # compile_s, then compile_warm_s in one process
                 else cold if first else warm)
    return START_S + warmup_s + timing_s + compile_s


def estimate(cfg: BenchConfig) -> list[ProcessEstimate]:
    """One estimate per process of `cfg`, in run order."""
    gpu = guide_gpu(cfg.label) if cfg.device != "cpu" else None
    estimates = []
    for model, batch_size, mode, repeat in cfg.runs():
        latency = guide_latency_ms(gpu, model, batch_size, mode) if gpu else None
        estimates.append(ProcessEstimate(model, batch_size, mode, repeat, latency,
                                         process_seconds(cfg, mode, repeat, latency)))
    return estimates


def too_long(cfg: BenchConfig, estimates: list[ProcessEstimate]) -> list[ProcessEstimate]:
    """Processes whose estimate comes within TIMEOUT_MARGIN of timeout_s: raise it, or they may time out."""
    return [e for e in estimates if e.seconds * TIMEOUT_MARGIN > cfg.timeout_s]


def remaining(cfg: BenchConfig, estimates: list[ProcessEstimate], results_path) -> list[ProcessEstimate]:
    """The estimates of the processes the results file does not hold yet (all of them without a file):
    what `run` would still measure."""
    from pathlib import Path

    from .runner import pending_runs

    if results_path is None or not Path(results_path).exists():
        return estimates
    todo = set(pending_runs(cfg, Path(results_path)))
    return [e for e in estimates if (e.model, e.batch_size, e.mode, e.repeat) in todo]


def plan_text(cfg: BenchConfig, source: str, results_path=None) -> str:
    """What `plan` prints: processes (and how many the results file already holds), the estimated
    time of the rest, per model, and the cells at risk."""
    everything = estimate(cfg)
    estimates = remaining(cfg, everything, results_path)
    gpu = guide_gpu(cfg.label) if cfg.device != "cpu" else None
    known = sum(e.latency_ms is not None for e in estimates)
    done = f"; {len(everything) - len(estimates)} already measured in {results_path}" if len(estimates) < len(
        everything) else ""
    lines = [f"{source}: {cfg.label}: {len(everything)} processes ({len(cfg.cells())} cells x {cfg.repeats} "
             f"repeats){done}",
             f"  estimated {'' if gpu else 'at least '}{_duration(sum(e.seconds for e in estimates))} "
             + (f"(latencies: the guide's {gpu} tables for {known} of {len(estimates)} processes; "
                "compile times: rough constants)" if gpu else
                "(no guide latencies for this label: timing counted at its minimum, min_time_s; "
                "compile times: rough constants)")]
    for model in cfg.models:
        seconds = sum(e.seconds for e in estimates if e.model == model)
        lines.append(f"    {model:<20} {_duration(seconds)}")
    risky = too_long(cfg, estimates)
    for e in risky:
        lines.append(f"  warning: {e.model} bs={e.batch_size} {e.mode} #{e.repeat}: about {_duration(e.seconds)}, "
                     f"close to or above timeout_s={cfg.timeout_s:g} s; raise timeout_s")
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
