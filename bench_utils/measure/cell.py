"""Measure one process of a cell (model, batch size, mode, round) and return its row.

A `CellProcess` lives in a worker process that never runs another mode (the sweep starts one per mode
of a cell group, they take turns timing blocks, and measure up to `rounds_per_process` rounds; see
sweep/rounds.py). Order of work, all under torch.inference_mode():
1. build the model and the batch;
2. mode "eager": warm up until steady; a compile mode: one eager call as the accuracy reference,
   reset dynamo, compile and time the first call (compile_s), warm up until steady, compare one
   output with eager's (before timing: no reference output stays on the device while timing);
3. time blocks of calls when asked; 4. the row, and with `profile` (round 0) the profiler's pass.
Any failure becomes the row's status.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import os
import re
import resource
import time
import traceback
from pathlib import Path

import torch

from ..config.bench_config import BenchConfig
from ..config.modes import EXTRA_WARMUP_CALLS
from ..results.rows import BenchResult, cell_fields
from ..results.stats import summarize
from . import accuracy, environment, faults, machine_load, profiling, schedule
from .compiler_cache import compiler_cache
from .task import Task
from .compile_stats import cudagraph_pool_mb, cudagraphs_recorded, forget_compiled, fx_cache_counts, graph_stats
from .inputs import build_inputs
from .models import TORCH_DTYPES, load_model
from .timing import time_calls, time_once, warm_until_steady


def _peak_mem_mb(device: str) -> dict:
    """CUDA: peak allocated and reserved (the caching allocator's footprint) since the last reset, and
    what the CUDA-graph pools hold now, MiB (see BenchResult.peak_mem_mb); CPU: the process's peak RSS, MiB."""
    if device == "cuda":
        return {"peak_mem_mb": torch.cuda.max_memory_allocated() / 2**20,
                "peak_reserved_mb": torch.cuda.max_memory_reserved() / 2**20,
                "cudagraph_pool_mb": cudagraph_pool_mb(device)}
    return {"peak_mem_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}  # Linux reports KiB


def weights_dtype(cfg: BenchConfig) -> str:
    """The dtype the weights are loaded in: autocast casts per op, its weights stay float32."""
    return "float32" if cfg.autocast else cfg.dtype


def accuracy_numerics(cfg: BenchConfig, device: str) -> str:
    """The tolerance class of a float32-style comparison with eager: "tf32" on CUDA when TF32 is on."""
    return "tf32" if device == "cuda" and cfg.dtype == "float32" and environment.tf32_in_use() else cfg.dtype


def timed_phase(fn, cfg: BenchConfig, device: str, extra_warmup: int = 0) -> dict:
    """Warm `fn` up until steady, then time it in one stretch (the studies' schedule): the samples,
    warm-up record and the machine's load from others while timing."""
    fields = warm_up(fn, cfg, device, extra_warmup, schedule.warmup_window_s(cfg.min_time_s))
    _reset_peak_memory(device)
    before = machine_load.snapshot()
    fields["samples_s"] = time_calls(fn, device, cfg.iterations, cfg.min_time_s)
    memory = _peak_mem_mb(device)  # now: the accuracy check's temporaries after timing must not count
    load = machine_load.between(before, machine_load.snapshot())
    return fields | memory | {"others_cpu_pct": load.others_cpu_pct if load else None,
                              "steal_pct": load.steal_pct if load else None}


def warm_up(fn, cfg: BenchConfig, device: str, extra_warmup: int, window_s: float) -> dict:
    """Untimed calls until the latency is steady (or max_warmup_s): the row's warm-up record."""
    warmup = warm_until_steady(fn, device, cfg.warmup + extra_warmup, window_s, cfg.max_warmup_s)
    return {"warmup_calls": warmup.calls, "warmup_s": warmup.seconds, "warmup_steady": warmup.steady}


def block_window_s(cfg: BenchConfig) -> float:
    """A cell's warm-up window, seconds: as long as one timed block, at least schedule.MIN_WINDOW_S
    (min_time_s may be 0)."""
    return max(schedule.MIN_WINDOW_S, cfg.block_s())


def _reset_peak_memory(device: str) -> None:
    """CUDA: the next peak counts from here (the compiled peak must not include eager's). Cached free
    blocks (compile and autotune scratch, the float64 reference's) are released first, so the reserved
    peak is what timing holds: empty_cache releases "unoccupied cached memory" only (torch/cuda/memory.py,
    empty_cache); the CUDA-graph pool stays, its graphs own it."""
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def precision_context(cfg: BenchConfig, device: str):
    """torch.autocast around every call when the config asks for it, else nothing."""
    if not cfg.autocast:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device, dtype=TORCH_DTYPES[cfg.dtype])


def to_channels_last(model: torch.nn.Module, inputs: dict) -> dict:
    """channels_last for the model's 4-D weights and every 4-D floating input (NCHW images)."""
    model.to(memory_format=torch.channels_last)
    return {k: v.contiguous(memory_format=torch.channels_last) if v.dim() == 4 and v.is_floating_point()
            else v for k, v in inputs.items()}


def _fp64_reference(model, inputs: dict, cfg: BenchConfig):
    """For a low precision (float16/bfloat16 weights or autocast): the float64 output the accuracy
    check measures both eager's and compiled's errors against; None for float32, or when the model
    cannot run in float64 (the check then falls back to the tolerance against eager)."""
    if cfg.dtype not in accuracy.LOW_PRECISION:
        return None
    try:
        return accuracy.to_host(accuracy.float64_reference(model, inputs))
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def _latency_fields(samples_s: list[float]) -> dict:
    summary = summarize(samples_s)
    return {"latency_ms_mean": summary.mean_ms, "latency_ms_median": summary.median_ms}


def _profile(fn, device: str, trace_path: Path | None) -> dict:
    """The profiler pass after timing; a profiler failure is noted, the timing stands."""
    try:
        return profiling.profile_calls(fn, device, trace_path)
    except Exception as err:  # noqa: BLE001 - the cell's numbers do not depend on the profiler
        return {"profile_error": error_text(err)}


def load_for_process(cfg: BenchConfig, model_name: str, device: str, fields: dict):
    """(spec, LoadedModel) of `model_name` as every measuring process loads it: the device checked
    first, weights in weights_dtype(cfg); the weights used and why go into `fields`."""
    spec = cfg.spec(model_name)
    if device == "cuda":
        environment.check_cuda_usable()  # a build without kernels for this GPU: one line, not a kernel error
    loaded = load_model(spec, cfg.size, cfg.weights, device, weights_dtype(cfg))
    fields.update(weights=loaded.weights, weights_note=loaded.note)
    return spec, loaded


def process_inputs(cfg: BenchConfig, spec, model, batch_size: int, device: str) -> dict:
    """A batch of `batch_size` for `model`, in the weights' dtype, channels_last when asked for."""
    inputs = build_inputs(spec, cfg.size, batch_size, device, TORCH_DTYPES[weights_dtype(cfg)], cfg.image)
    return to_channels_last(model, inputs) if cfg.channels_last else inputs


class CellProcess:
    """One mode of one cell in this process, the way a runner's round uses it: `prepare` builds the
    model (a compiled mode: compiles it and checks its output against eager), warms it up until
    steady; `time_block` times one block of calls whenever the runner asks (the other modes of the
    round take turns in their own processes); `finish` returns the row. A failure at any step is
    kept (`failed`) and becomes the row's status; what was measured before it stays in the row."""

    def __init__(self, task: Task):
        job = task.job
        self.task, self.cfg, self.mode, self.repeat = task, task.cfg, job.option, job.repeat
        model_name, batch_size, mode, repeat, cfg = job.model, job.batch_size, job.option, job.repeat, task.cfg
        self.model_name, self.batch_size = model_name, batch_size
        self.device = environment.resolve_device(cfg.device)
        self.identity = cell_fields(cfg, model_name, batch_size, mode, self.device, repeat)
        self.fault = faults.planned_fault(model_name, batch_size, mode)
        self.fields: dict = {"samples_s": [], "block_lengths": [], "process_round": repeat}
        self.failure: tuple[str, str] | None = None  # (status, error) of the first failure
        self.started = dt.datetime.now(dt.timezone.utc)
        self.clock = time.perf_counter()
        self.call = None
        self._contexts = contextlib.ExitStack()
        self._loads: list = []  # machine_load.Load of each block

    @property
    def failed(self) -> bool:
        return self.failure is not None

    def _guarded(self, step) -> None:
        if self.failed:
            return
        try:
            step()
        except Exception as err:  # noqa: BLE001 - every failure of a process must become its row
            self.failure = ("oom" if is_oom(err) else "error"), error_text(err)
        if self.failed:  # out of the except block: see recover_memory
            self.call = None
            self._contexts.close()
            recover_memory(self.device)

    def prepare(self) -> None:
        self._guarded(self._prepare)

    def _prepare(self) -> None:
        cfg, device = self.cfg, self.device
        faults.maybe_inject("load", self.fault)
        spec, loaded = load_for_process(cfg, self.model_name, device, self.fields)
        self.fields["num_params"] = loaded.num_params
        inputs = process_inputs(cfg, spec, loaded.model, self.batch_size, device)
        self._contexts.enter_context(torch.inference_mode())
        self._contexts.enter_context(precision_context(cfg, device))
        eager = lambda: loaded.model(**inputs)  # noqa: E731
        faults.maybe_inject("eager", self.fault)
        if self.mode == "eager":
            self.call = eager
            self.fields.update(warm_up(eager, cfg, device, 0, block_window_s(cfg)))
        else:
            # a cold compile's cache is merged before the worker replies "ready", not at its exit, where
            # a merge longer than workers.EXIT_WAIT_S (max-autotune's) would be killed half-done
            with compiler_cache(empty=cfg.cold_compile and self.repeat == 0):
                self.call = self._compile(loaded.model, inputs, spec.task)
        _reset_peak_memory(device)  # the peak of the timed blocks: steady-state inference only

    def _compile(self, model, inputs: dict, task: str):
        """Compile `model`, time its first call (compile_s), warm it up, then compare one output with
        eager's before any timing, so no reference output stays on the device while timing."""
        from torch._dynamo.utils import counters

        cfg, device, fields = self.cfg, self.device, self.fields
        reference = accuracy.to_host(model(**inputs))  # on the host: nothing of it on the device while timing
        fp64_reference = _fp64_reference(model, inputs, cfg)
        # in the cold cache (_prepare) until warm-up ends: CUDA-graph recording and autotuning may still
        # write kernels to the cache after the first call. Later rounds compile in new processes with
        # the cache it filled: their compile_s is the warm compile a new process pays
        # (results/aggregate.py), every in-process cache included
        forget_compiled()  # a fresh start: nothing compiled for another job is reused in-process
        faults.maybe_inject("compile", self.fault)
        compiled_model = torch.compile(model, mode=self.mode, fullgraph=cfg.fullgraph, dynamic=cfg.compile_dynamic())
        compiled = lambda: compiled_model(**inputs)  # noqa: E731
        fields["compile_s"] = time_once(compiled, device)
        fields.update(fx_cache_counts())  # of the first compile, the one compile_s timed
        frames_after_first_call = int(counters["frames"]["total"])
        fields.update(warm_up(compiled, cfg, device, EXTRA_WARMUP_CALLS[self.mode], block_window_s(cfg)))
        output = accuracy.to_host(compiled())  # copy now: CUDA-graph outputs are overwritten by the next replay
        fields["max_abs_diff"] = accuracy.max_abs_diff(reference, output)
        if fp64_reference is not None:
            fields["accuracy_ok"] = accuracy.as_accurate_as_eager(reference, output, fp64_reference, cfg.dtype)
            fields["accuracy_reference"] = "float64"
        else:
            fields["accuracy_ok"] = accuracy.within_tolerance(reference, fields["max_abs_diff"],
                                                              accuracy_numerics(cfg, device))
            fields["accuracy_reference"] = "eager"
        fields["task_agreement"] = accuracy.task_agreement(task, reference, output)
        del output, reference, fp64_reference
        fields.update(graph_stats(frames_after_first_call), cudagraphs_recorded=cudagraphs_recorded(device))
        return compiled

    def time_block(self, after_switch: bool = True, hand_over: bool = False) -> None:
        """One timed block: at least cfg.block_calls() calls and cfg.block_s() seconds; with `hand_over`
        (the next turn is another worker's), the CUDA cache is given back after it (hand_over_memory)."""
        self._guarded(lambda: self._time_block(after_switch))
        if hand_over and not self.failed:
            hand_over_memory(self.device)

    def _time_block(self, after_switch: bool) -> None:
        # one untimed call first when another worker ran since this one's last block: caches and
        # OpenMP threads are cold then, and the first call after a switch runs 10-50% slower
        # (docs/method.md); a block right after this worker's own (ABBA's middle) starts warm
        if after_switch:
            self.call()
        before = machine_load.snapshot()
        samples = time_calls(self.call, self.device, self.cfg.block_calls(), self.cfg.block_s())
        self._loads.append(machine_load.between(before, machine_load.snapshot()))
        self.fields["samples_s"] += samples
        self.fields["block_lengths"].append(len(samples))

    def next_round(self, repeat: int) -> None:
        """Measure round `repeat` in this process too: a new row, the same built, compiled and warm
        model. What describes the process (its weights, compiled graphs and their accuracy) carries
        over; what the first round did once (compile, warm-up) does not: a later round's row has no
        compile_s, so a cell's warm compile comes from fresh processes only."""
        if self.failed:
            raise RuntimeError("a failed cell process measures no further round")
        self.repeat = repeat
        self.identity = cell_fields(self.cfg, self.model_name, self.batch_size, self.mode, self.device, repeat)
        self.fields = {"samples_s": [], "block_lengths": []} | {
            name: value for name, value in self.fields.items() if name in PROCESS_FIELDS}
        self._loads = []
        self.started = dt.datetime.now(dt.timezone.utc)
        self.clock = time.perf_counter()
        _reset_peak_memory(self.device)

    def finish(self) -> BenchResult:
        """The row: latency and peak memory of the timed blocks; a failure at any step before is the
        row's status. The profiler's pass (`profile`) comes after."""
        self._guarded(self._finish)
        status, error = self.failure or ("ok", "")
        return BenchResult(**self.identity, status=status, error=error, env=environment.collect(self.device),
                           started_at=self.started.isoformat(timespec="seconds"),
                           duration_s=time.perf_counter() - self.clock, **self.fields)

    def close(self) -> None:
        """Leave inference mode and autocast (a cold compile's cache was merged when it prepared)."""
        self._contexts.close()
        faults.maybe_inject("exit", self.fault)

    def profile(self) -> dict:
        """The profiler's pass over the prepared callable (after the row: it cannot cost the timing)."""
        if self.call is None:
            return {"profile_error": "nothing to profile: the cell failed"}
        fields = _profile(self.call, self.device, self.task.trace_path(self.repeat))
        hand_over_memory(self.device)  # the next turn is another worker's
        return fields

    def _finish(self) -> None:
        if not self.fields["samples_s"]:
            return
        loads = [load for load in self._loads if load is not None]
        self.fields.update(_latency_fields(self.fields["samples_s"]), **_peak_mem_mb(self.device))
        if loads:  # the blocks' mean: each block is about as long as the others
            self.fields["others_cpu_pct"] = sum(load.others_cpu_pct for load in loads) / len(loads)
            self.fields["steal_pct"] = sum(load.steal_pct for load in loads) / len(loads)


# a process's fields that hold for every round it measures (next_round keeps them)
PROCESS_FIELDS = ("process_round", "weights", "weights_note", "num_params", "max_abs_diff", "accuracy_ok",
                  "accuracy_reference", "task_agreement", "graph_breaks", "graph_count", "recompiles",
                  "break_reasons", "recompile_reasons", "cudagraph_skips", "cudagraphs_recorded")

OOM_MARKERS = ("out of memory", "can't allocate memory", "cublas_status_alloc_failed", "cudnn_status_alloc_failed")


def is_oom(err: BaseException) -> bool:
    if isinstance(err, (torch.cuda.OutOfMemoryError, MemoryError)):
        return True
    # CPU allocator failures, cuBLAS/cuDNN workspace allocations and some CUDA paths raise a plain
    # RuntimeError whose text names the allocation failure.
    text = str(err).lower()
    return isinstance(err, RuntimeError) and any(marker in text for marker in OOM_MARKERS)


def error_text(err: BaseException) -> str:
    """Exception type, message and the innermost frame, kept short enough for a table cell."""
    message = str(err).strip().splitlines()[0] if str(err).strip() else ""
    frames = traceback.extract_tb(err.__traceback__)
    where = f" [{frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}]" if frames else ""
    return f"{type(err).__name__}: {message[:500]}{where}{_cache_hint(err)}"


# What a damaged entry of Inductor's on-disk cache (a run killed mid-write, a full disk) raises when it
# is loaded: a truncated generated module lacks its `call`, a truncated library is no ELF file, a
# truncated pickle ends early. Torch wraps these in an InductorError that names none of the cache.
DAMAGED_CACHE = re.compile(r"compile_tasks\.\w+' has no attribute|file too short|invalid ELF header|"
                           r"pickle data was truncated|Ran out of input")


def _cache_hint(err: BaseException) -> str:
    """For an error that looks like a damaged Inductor cache entry: which folder to delete."""
    chain = []
    while err is not None and err not in chain and len(chain) < 10:  # the exception and its causes
        chain.append(err)
        err = err.__cause__ or err.__context__
    if not any(DAMAGED_CACHE.search(str(failure)) for failure in chain):
        return ""
    folder = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or "the Inductor cache folder"
    return f" (a damaged Inductor cache entry? delete {folder} and run again)"


def hand_over_memory(device: str) -> None:
    """CUDA: give this worker's cached free blocks back to the device when its turn ends, so the workers
    that share the GPU (a round's other modes, the idle workers of the other live groups) never find
    it filled by another's cache: torch.cuda.empty_cache is the only call that hands "unoccupied cached
    memory" to other processes (torch/cuda/memory.py, empty_cache). The CUDA-graph pools stay (their
    graphs own them); the untimed call that begins the worker's next turn allocates again. Blocks end
    synchronized (timing.time_calls), so no block still in use by a queued kernel is kept back."""
    if device == "cuda":
        release_cuda_memory()


def recover_memory(device: str) -> None:
    """After a failure, once its `except` block is left: inside it the exception's traceback still holds
    the frames of the failed call, and with them its tensors (an OOM's half-built activations), so
    nothing could be freed. Out of it, a collection frees what only reference cycles kept, and on CUDA
    the cached blocks go back to the device for the other workers on it."""
    gc.collect()
    if device == "cuda":
        release_cuda_memory()


def release_cuda_memory() -> None:
    """After a failed cell: give cached blocks back. A sticky CUDA error (e.g. an illegal address)
    makes every later CUDA call raise too; the row must still say what went wrong first."""
    try:
        torch.cuda.empty_cache()
    except RuntimeError:
        pass


def measured_row(row_type, identity: dict, device: str, work):
    """Run `work(fields)` and return its row (`row_type`: BenchResult or a study's row): any failure
    becomes the row's status, "oom" or "error", with its text, and what `work` had put in `fields`
    before it is kept; the row carries the environment, its start time and duration (seconds)."""
    started = dt.datetime.now(dt.timezone.utc)
    clock = time.perf_counter()
    fields: dict = {}
    status, error = "ok", ""
    try:
        work(fields)
    except Exception as err:  # noqa: BLE001 - every failure of a process must become a row
        status, error = ("oom" if is_oom(err) else "error"), error_text(err)
    if status != "ok":  # out of the except block: see recover_memory
        recover_memory(device)
    return row_type(**identity, status=status, error=error, env=environment.collect(device),
                    started_at=started.isoformat(timespec="seconds"), duration_s=time.perf_counter() - clock,
                    **fields)
