"""Measure one cell (model, batch size, mode) in this process and return its row.

Order of work, all under torch.inference_mode():
1. build the model and the batch; warm eager up; keep eager's output as the accuracy reference;
2. mode "eager": time `iterations` eager calls;
   a compile mode: reset dynamo, compile with static shapes, time the first call (compile_s),
   warm up (extra calls for CUDA-graph recording / autotuning), compare the output with eager,
   then time eager and compiled in alternating blocks so slow drift (clocks, thermals) hits both.
Any failure becomes the row's status; `runner` runs this in a subprocess per cell.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import resource
import tempfile
import time
import traceback

import torch

from . import accuracy, environment, faults
from .config import BenchConfig
from .inputs import build_inputs
from .models import DTYPES, load_model
from .registry import get_spec
from .results import BenchResult, cell_fields
from .stats import speedup_ci, summarize
from .timing import time_calls, time_once, warm_up

# Extra untimed calls after compiling: CUDA-graph trees record on the first calls after warm-up,
# max-autotune benchmarks kernels on first use. Calls, not seconds.
COMPILED_EXTRA_WARMUP = {"default": 1, "reduce-overhead": 3, "max-autotune": 3}
TIMING_BLOCKS = 5  # alternating eager/compiled blocks per cell (fewer when iterations is small)


def block_sizes(iterations: int, blocks: int = TIMING_BLOCKS) -> list[int]:
    """Split `iterations` into at most `blocks` near-equal blocks of at least 2 calls each."""
    count = max(1, min(blocks, iterations // 2))
    base, extra = divmod(iterations, count)
    return [base + (1 if i < extra else 0) for i in range(count)]


def _latency_fields(prefix: str, samples_s: list[float]) -> dict:
    summary = summarize(samples_s)
    return {f"{prefix}_mean": summary.mean_ms, f"{prefix}_median": summary.median_ms,
            f"{prefix}_p10": summary.p10_ms, f"{prefix}_p90": summary.p90_ms,
            f"{prefix}_std": summary.std_ms, f"{prefix}_ci95_low": summary.ci95_low_ms,
            f"{prefix}_ci95_high": summary.ci95_high_ms}


def _peak_mem_mb(device: str) -> float:
    if device == "cuda":
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def clear_graph_stats() -> None:
    """Forget dynamo's counts and guard failures, so that graph_stats speaks of what follows only."""
    from torch._dynamo.utils import counters, guard_failures

    counters.clear()
    guard_failures.clear()


def graph_stats(frames_after_first_call: int) -> dict:
    """Graph breaks and their reasons (dynamo's counters), graphs compiled, and recompiles after the
    first call with the guard that failed for each (why dynamo compiled again)."""
    from torch._dynamo.utils import counters, guard_failures

    breaks = [reason.strip().splitlines()[0] for reason in counters["graph_break"]]
    failed_guards = [reason.strip().splitlines()[0] for reasons in guard_failures.values() for reason in reasons]
    return {"graph_breaks": int(sum(counters["graph_break"].values())),
            "graph_count": int(counters["stats"]["unique_graphs"]),
            "recompiles": int(counters["frames"]["total"]) - frames_after_first_call,
            "break_reasons": sorted(set(breaks)), "recompile_reasons": sorted(set(failed_guards))}


def _time_eager(eager, cfg: BenchConfig, device: str) -> dict:
    samples = time_calls(eager, cfg.iterations, device)
    return {**_latency_fields("latency_ms", samples), "samples_s": samples, "eager_samples_s": samples,
            "eager_ms_mean": float(sum(samples) / len(samples) * 1000), "speedup": 1.0}


def _time_compiled(model, inputs, eager, reference, cfg: BenchConfig, mode: str, device: str,
                   task: str, fault: str | None) -> dict:
    from torch._dynamo.utils import counters

    torch._dynamo.reset()  # a fresh cache: nothing compiled for another cell is reused in-process
    clear_graph_stats()
    faults.maybe_inject("compile", fault)
    compiled_model = torch.compile(model, mode=mode, fullgraph=cfg.fullgraph, dynamic=False)
    compiled = lambda: compiled_model(**inputs)  # noqa: E731
    fields = {"compile_s": time_once(compiled, device)}
    if cfg.cold_compile:  # again, as a new process would: in-memory state gone, on-disk cache filled
        torch._dynamo.reset()
        clear_graph_stats()  # count the graphs and breaks of one compile, not two
        fields["compile_warm_s"] = time_once(compiled, device)
    frames_after_first_call = int(counters["frames"]["total"])
    warm_up(compiled, cfg.warmup + COMPILED_EXTRA_WARMUP[mode], device)
    output = compiled()  # compare now: CUDA-graph outputs are overwritten by the next replay
    fields["max_abs_diff"] = accuracy.max_abs_diff(reference, output)
    fields["accuracy_ok"] = accuracy.within_tolerance(reference, fields["max_abs_diff"], cfg.dtype)
    fields["task_agreement"] = accuracy.task_agreement(task, reference, output)
    del output
    eager_samples, compiled_samples = [], []
    for size in block_sizes(cfg.iterations):
        eager_samples += time_calls(eager, size, device)
        compiled_samples += time_calls(compiled, size, device)
    speedup = speedup_ci(eager_samples, compiled_samples)
    eager_summary = summarize(eager_samples)
    fields.update(_latency_fields("latency_ms", compiled_samples), samples_s=compiled_samples,
                  eager_samples_s=eager_samples, eager_ms_mean=eager_summary.mean_ms,
                  eager_ms_median=eager_summary.median_ms, speedup=speedup.speedup,
                  speedup_ci95_low=speedup.ci95_low, speedup_ci95_high=speedup.ci95_high)
    fields.update(graph_stats(frames_after_first_call))
    return fields


@contextlib.contextmanager
def _compiler_cache(empty: bool):
    """With `empty`, point Inductor (and the Triton cache under it) at a new empty folder, removed
    afterwards; otherwise keep whatever TORCHINDUCTOR_CACHE_DIR the user set (a warm cache)."""
    if not empty:
        yield
        return
    before = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="inductor-cold-") as folder:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = folder  # read by Inductor on every cache access
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
            else:
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = before


def _precision(cfg: BenchConfig, device: str):
    """torch.autocast around every call when the config asks for it, else nothing."""
    if not cfg.autocast:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device, dtype=DTYPES[cfg.dtype])


def _to_channels_last(model: torch.nn.Module, inputs: dict) -> dict:
    """channels_last for the model's 4-D weights and every 4-D floating input (NCHW images)."""
    model.to(memory_format=torch.channels_last)
    return {k: v.contiguous(memory_format=torch.channels_last) if v.dim() == 4 and v.is_floating_point()
            else v for k, v in inputs.items()}


def _measure(cfg: BenchConfig, model_name: str, batch_size: int, mode: str, device: str,
             fault: str | None, fields: dict) -> None:
    spec = get_spec(model_name)
    faults.maybe_inject("load", fault)
    weights_dtype = "float32" if cfg.autocast else cfg.dtype  # autocast casts per op, weights stay fp32
    loaded = load_model(spec, cfg.size, cfg.weights, device, weights_dtype)
    fields.update(weights=loaded.weights, weights_note=loaded.note, num_params=loaded.num_params)
    inputs = build_inputs(spec, cfg.size, batch_size, device, DTYPES[weights_dtype], cfg.image)
    if cfg.channels_last:
        inputs = _to_channels_last(loaded.model, inputs)
    with torch.inference_mode(), _precision(cfg, device):
        eager = lambda: loaded.model(**inputs)  # noqa: E731
        faults.maybe_inject("eager", fault)
        warm_up(eager, cfg.warmup, device)
        reference = eager()
        if mode == "eager":
            fields.update(_time_eager(eager, cfg, device))
            fields["eager_ms_median"] = fields["latency_ms_median"]
        else:
            # the whole compiled life of the cell, warm-up included: CUDA-graph recording and
            # autotuning may still write kernels to the cache after the first call
            with _compiler_cache(empty=cfg.cold_compile):
                fields.update(_time_compiled(loaded.model, inputs, eager, reference, cfg, mode, device,
                                             spec.task, fault))
    fields["peak_mem_mb"] = _peak_mem_mb(device)


def _is_oom(err: BaseException) -> bool:
    if isinstance(err, (torch.cuda.OutOfMemoryError, MemoryError)):
        return True
    # CPU allocator failures and some CUDA paths raise a plain RuntimeError.
    text = str(err).lower()
    return isinstance(err, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


def error_text(err: BaseException) -> str:
    """Exception type, message and the innermost frame, kept short enough for a table cell."""
    message = str(err).strip().splitlines()[0] if str(err).strip() else ""
    frames = traceback.extract_tb(err.__traceback__)
    where = f" [{frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}]" if frames else ""
    return f"{type(err).__name__}: {message[:500]}{where}"


def measure_cell(cfg: BenchConfig, model_name: str, batch_size: int, mode: str) -> BenchResult:
    """Measure one cell; never raises for a failure of the cell itself (it becomes the status)."""
    started = dt.datetime.now(dt.timezone.utc)
    clock = time.perf_counter()
    fault = faults.planned_fault(model_name, batch_size, mode)
    device = environment.resolve_device(cfg.device)
    fields: dict = {}
    status, error = "ok", ""
    try:
        _measure(cfg, model_name, batch_size, mode, device, fault, fields)
    except Exception as err:  # noqa: BLE001 - every failure of a cell must become a row
        status, error = ("oom" if _is_oom(err) else "error"), error_text(err)
        if device == "cuda":
            torch.cuda.empty_cache()
    return BenchResult(
        **cell_fields(cfg, model_name, batch_size, mode, device), status=status, error=error,
        env=environment.collect(device), started_at=started.isoformat(timespec="seconds"),
        duration_s=time.perf_counter() - clock, **fields)
