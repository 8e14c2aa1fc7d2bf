"""Why a speedup: torch.profiler over a few calls of a process's model, after its timing (never during
it: the profiler's own overhead would be in the samples).

Per call, from the profiler's events on the calling thread:
- operators: the dispatcher's operators at the top of their nesting (aten::conv2d counts once, not
  again for the aten::convolution it calls): what eager Python dispatches one by one, and what a
  compiled graph still hands to library kernels (oneDNN convolutions, matmuls);
- time inside those operators, time inside compiled graphs but outside operators (Inductor's fused
  kernels: on CPU they are generated C++ the profiler does not name), and the rest of the call
  (Python, module calls, dynamo's guards): the overhead compiling removes;
- on CUDA also the kernels run, the kernel launches by the host, CUDA-graph replays and the device's
  busy time: a call the device spends idle waiting for the host is host-bound, which CUDA graphs fix.
  Device work is what torch's own tables total (autograd/profiler_util.py, _build_table: device
  events `and not evt.is_user_annotation`): Kineto also emits GPU-side spans for record_function
  ranges (our CALL_MARK, Inductor's "## Call CompiledFxGraph ##"), which are not kernels;
- the operators (or CUDA kernels) with the most self time.
The trace is written for Perfetto (ui.perfetto.dev) or TensorBoard.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import torch

from ..results.record import FUSED_KERNELS  # the top-ops name of time in compiled graphs outside operators
from .timing import synchronize

PROFILE_CALLS = 3  # profiled calls: the counts are equal every call, the times are indicative only
PROFILER_WARMUP_CALLS = 2  # traced and discarded: the profiler's start-up is in them
TOP_OPS = 8  # operators listed per process
CALL_MARK = "bench_utils::call"  # record_function around each profiled call
COMPILED_MARKS = ("Torch-Compiled Region", "## Call CompiledFxGraph")  # dynamo's and Inductor's annotations
GRAPH_LAUNCH = "cudaGraphLaunch"
KERNEL_LAUNCHES = ("cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx", "cudaLaunchKernelExC")
DEVICE_COPIES = ("gpu_memcpy", "gpu_memset")  # Kineto activity types of device work that is no kernel
COPY_NAMES = (("Memcpy", "gpu_memcpy"), ("Memset", "gpu_memset"))  # ... and their events' names (Kineto)


def profile_calls(fn, device: str, trace_path: Path | None, calls: int = PROFILE_CALLS) -> dict:
    """Run `fn` `calls` times under torch.profiler; the row's profile fields (ms per call)."""
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    # the profiler's first traced calls pay for starting its collectors: trace and discard those first
    steps = schedule(wait=0, warmup=PROFILER_WARMUP_CALLS, active=calls, repeat=1)
    with profile(activities=activities, schedule=steps) as prof:
        for _ in range(PROFILER_WARMUP_CALLS + calls):
            with record_function(CALL_MARK):
                fn()
                synchronize(device)  # the call ends when its kernels do
            prof.step()
    fields = summarize_events(prof.events(), calls, device)
    if trace_path is not None:
        write_trace(prof, trace_path)
        fields["profile_trace"] = trace_path.name
    return fields


def write_trace(prof, trace_path: Path) -> None:
    """The Chrome trace at `trace_path` (files.write_file: no link followed, 0644), naming itself by its
    file name: torch writes the path it exported to into the trace ("traceName"), and a published
    folder holds no absolute path of this machine. torch exports to a private folder first."""
    import tempfile

    from ..files import write_file

    with tempfile.TemporaryDirectory(prefix="bench-trace-") as private:
        exported = Path(private) / trace_path.name
        prof.export_chrome_trace(str(exported))
        text = exported.read_text(encoding="utf-8", errors="replace")
    write_file(trace_path, text.replace(str(exported), trace_path.name), trace_path.parent)


def _is_compiled(event) -> bool:
    return event.name.startswith(COMPILED_MARKS)


def _is_operator(event) -> bool:
    """A dispatcher operator ("aten::addmm", "mkldnn::_convolution_pointwise") on the host."""
    return (event.device_type == torch.autograd.DeviceType.CPU and "::" in event.name
            and not event.is_user_annotation and event.name != CALL_MARK and not _is_compiled(event))


def is_device_work(event) -> bool:
    """A kernel, memcpy or memset on the GPU; not a GPU-side user annotation. torch's rule for its
    device totals: autograd/profiler_util.py, _build_table (`evt.device_type in [DeviceType.CUDA, ...]
    and not evt.is_user_annotation`); the flag comes from KinetoEvent.is_user_annotation()
    (autograd/profiler.py, _parse_kineto_results). activity_type is Kineto's category, as in the
    Chrome trace ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", ...)."""
    return (event.device_type == torch.autograd.DeviceType.CUDA and not event.is_user_annotation
            and activity_type(event) != "gpu_user_annotation")


def activity_type(event) -> str | None:
    """Kineto's category of a device event. Older torches have no FunctionEvent.activity_type (torch 2.11:
    benchmarks/README.md#gpu-h200-probe); there a copy or fill is known by the name Kineto gives it
    ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)"), and is_user_annotation alone marks the
    annotations."""
    if hasattr(event, "activity_type"):
        return event.activity_type
    for prefix, kind in COPY_NAMES:
        if event.name.startswith(prefix):
            return kind
    return None


def is_kernel(event) -> bool:
    """Device work that is a kernel: copies and fills (gpu_memcpy, gpu_memset) are not launched kernels."""
    return is_device_work(event) and activity_type(event) not in DEVICE_COPIES


def _ancestors(event):
    parent = event.cpu_parent
    while parent is not None:
        yield parent
        parent = parent.cpu_parent


def summarize_events(events, calls: int, device: str) -> dict:
    """The profile fields from torch.profiler's events (FunctionEvent list) of `calls` calls."""
    marks = [e for e in events if e.name == CALL_MARK]
    if not marks:
        raise ValueError(f"no {CALL_MARK} events: the profiled calls did not run under the profiler")
    thread = marks[0].thread
    host = [e for e in events if e.device_type == torch.autograd.DeviceType.CPU and e.thread == thread]
    top_ops = [e for e in host if _is_operator(e) and not any(_is_operator(a) for a in _ancestors(e))]
    regions = [e for e in host if _is_compiled(e) and not any(_is_compiled(a) for a in _ancestors(e))]
    in_region_ops = [e for e in top_ops if any(_is_compiled(a) for a in _ancestors(e))]
    call_us = sum(e.cpu_time_total for e in marks)
    op_us = sum(e.cpu_time_total for e in top_ops)
    compiled_us = sum(e.cpu_time_total for e in regions) - sum(e.cpu_time_total for e in in_region_ops)
    fields = {"profile_calls": calls, "profile_call_ms": call_us / calls / 1e3,
              "profile_ops_per_call": len(top_ops) / calls, "profile_op_ms": op_us / calls / 1e3,
              "profile_compiled_ms": compiled_us / calls / 1e3,
              "profile_overhead_ms": max(call_us - op_us - compiled_us, 0.0) / calls / 1e3}
    if device == "cuda":
        work = [e for e in events if is_device_work(e)]
        kernels = [e for e in work if is_kernel(e)]
        fields |= {"profile_kernels_per_call": len(kernels) / calls,
                   "profile_device_ms": sum(e.device_time_total for e in work) / calls / 1e3,
                   "profile_launches_per_call": sum(e.name in KERNEL_LAUNCHES for e in host) / calls,
                   "profile_graph_replays_per_call": sum(e.name == GRAPH_LAUNCH for e in host) / calls}
        fields["profile_top_ops"] = _top_named([(e.name, e.device_time_total) for e in work], calls)
    else:
        self_us = [(e.name, e.self_cpu_time_total) for e in host if _is_operator(e)]
        self_us += [(FUSED_KERNELS, e.self_cpu_time_total) for e in host if _is_compiled(e)]
        fields["profile_top_ops"] = _top_named(self_us, calls)
    return fields


def _top_named(named_us, calls: int) -> list[list]:
    """[[name, ms per call], ...] of the TOP_OPS names with the most time, largest first."""
    totals: Counter = Counter()
    for name, us in named_us:
        totals[name] += us
    return [[name[:80], us / calls / 1e3] for name, us in totals.most_common(TOP_OPS) if us > 0]
