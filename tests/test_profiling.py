"""The profiler pass: what a call is made of, eager against compiled, on real tiny models."""

import json

import pytest
import torch

from bench_utils.config.bench_config import BenchConfig
from bench_utils.measure import profiling
from conftest import measure_cell

FAST = dict(target_halfwidth=0.0, models=("resnet",), size="tiny", device="cpu", weights="random", batch_sizes=(1,),
            configurations=("eager", "default"), warmup=1, iterations=2,
            min_time_s=0.0, max_warmup_s=0.0, repeats=1, profiler=True)


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    """Eager and compiled processes of tiny ResNet at batch 1, profiled, with their traces."""
    folder = tmp_path_factory.mktemp("results")
    cfg = BenchConfig(**FAST)
    return {mode: (measure_cell(cfg, "resnet", 1, mode, 0, folder / "results.jsonl"),
                   folder / "traces" / f"resnet-bs1-{mode}-r0.json") for mode in ("eager", "default")}


def test_compiling_fuses_operators_into_compiled_code(profiled):
    eager, compiled = profiled["eager"][0], profiled["default"][0]
    assert eager.status == compiled.status == "ok", (eager.error, compiled.error, compiled.profile_error)
    assert eager.profile_calls == compiled.profile_calls == profiling.PROFILE_CALLS
    # tiny ResNet eager dispatches every conv, batch norm, relu and pool itself; compiled code hands
    # only the convolutions (and the classifier's matmul) to library operators
    assert eager.profile_ops_per_call >= 20 and eager.profile_ops_per_call == int(eager.profile_ops_per_call)
    assert compiled.profile_ops_per_call < eager.profile_ops_per_call / 2
    assert eager.profile_compiled_ms == 0 and compiled.profile_compiled_ms > 0
    names = [name for name, _ in compiled.profile_top_ops]
    assert profiling.FUSED_KERNELS in names and all(ms > 0 for _, ms in compiled.profile_top_ops)
    assert any(name.startswith("aten::") for name, _ in eager.profile_top_ops)
    assert profiling.FUSED_KERNELS not in [name for name, _ in eager.profile_top_ops]


def test_the_parts_of_a_call_add_up_to_the_call(profiled):
    for row, _ in profiled.values():
        parts = row.profile_op_ms + row.profile_compiled_ms + row.profile_overhead_ms
        assert parts == pytest.approx(row.profile_call_ms, rel=1e-6)
        assert row.profile_kernels_per_call is None  # CUDA only


def test_the_row_says_how_long_its_pass_took_for_plan(profiled):
    # plan.PROFILE_S's figure, measured: a few calls, their summary and the trace
    for row, _ in profiled.values():
        assert row.profile_calls * row.profile_call_ms / 1e3 < row.profile_s < 120


def test_trace_is_written_for_perfetto(profiled):
    row, path = profiled["default"]
    assert row.profile_trace == path.name
    trace = json.loads(path.read_text())
    names = {event.get("name") for event in trace["traceEvents"]}
    assert profiling.CALL_MARK in names


def test_profile_runs_in_repeat_zero_only(tmp_path):
    cfg = BenchConfig(**(FAST | {"configurations": ("eager",)}))
    later = measure_cell(cfg, "resnet", 1, "eager", 1, tmp_path / "results.jsonl")
    assert later.status == "ok" and later.profile_calls is None and not (tmp_path / "traces").exists()


def test_events_without_the_call_mark_are_refused():
    with torch.profiler.profile() as prof:
        torch.ones(3).sum()
    with pytest.raises(ValueError, match="no bench_utils::call events"):
        profiling.summarize_events(prof.events(), 1, "cpu")


def _device_event(name: str, us: float, **kind):
    """A real FunctionEvent of GPU work, as torch.autograd.profiler builds it from a Kineto event."""
    import inspect

    from torch.autograd.profiler_util import FunctionEvent

    if "activity_type" not in inspect.signature(FunctionEvent).parameters:  # torch 2.11 has none
        kind.pop("activity_type", None)
    return FunctionEvent(id=99, name=name, thread=7, start_us=0, end_us=us, use_device="cuda",
                         device_type=torch.autograd.DeviceType.CUDA, **kind)


@pytest.fixture(scope="module")
def cuda_shaped_events():
    """A real CPU profile of one marked call, plus the GPU events Kineto adds on CUDA: a kernel, a
    memcpy, and the GPU-side spans of two record_function ranges (user annotations, not kernels)."""
    with torch.profiler.profile() as prof:
        with torch.profiler.record_function(profiling.CALL_MARK):
            torch.ones(3).sum()
    gpu = [_device_event("void gemm_kernel", 100.0, activity_type="kernel"),
           _device_event(profiling.CALL_MARK, 300.0, is_user_annotation=True, activity_type="gpu_user_annotation"),
           _device_event("## Call CompiledFxGraph fx ##", 250.0, is_user_annotation=True,
                         activity_type="gpu_user_annotation"),
           _device_event("Memcpy HtoD (Pageable -> Device)", 20.0, activity_type="gpu_memcpy")]
    return list(prof.events()), gpu


def test_gpu_user_annotations_are_not_kernels_nor_device_time(cuda_shaped_events):
    host, gpu = cuda_shaped_events
    fields = profiling.summarize_events(host + gpu, 1, "cuda")
    assert fields["profile_kernels_per_call"] == 1  # the gemm; the memcpy is device work but no kernel
    assert fields["profile_device_ms"] == pytest.approx(0.120)  # 100 + 20 us; not the 550 us of annotations
    assert fields["profile_top_ops"] == [["void gemm_kernel", pytest.approx(0.1)],
                                         ["Memcpy HtoD (Pageable -> Device)", pytest.approx(0.02)]]
    assert [profiling.is_kernel(e) for e in gpu] == [True, False, False, False]
    assert [profiling.is_device_work(e) for e in gpu] == [True, False, False, True]


def test_a_torch_without_activity_type_tells_copies_from_kernels_by_their_names(cuda_shaped_events):
    """torch 2.11's FunctionEvent has no activity_type (the first GPU run's profiler failed on it)."""
    from types import SimpleNamespace

    _, gpu = cuda_shaped_events
    old = [SimpleNamespace(name=e.name, device_type=e.device_type, is_user_annotation=e.is_user_annotation)
           for e in gpu] + [SimpleNamespace(name="Memset (Device)", device_type=gpu[0].device_type,
                                            is_user_annotation=False)]
    assert [profiling.activity_type(e) for e in old] == [None, None, None, "gpu_memcpy", "gpu_memset"]
    assert [profiling.is_kernel(e) for e in old] == [True, False, False, False, False]
    assert [profiling.is_device_work(e) for e in old] == [True, False, False, True, True]


def test_device_time_is_torchs_own_total(cuda_shaped_events):
    """torch's table sums the same events (profiler_util._build_table: device events that are not user
    annotations): its "Self CUDA time total" is our GPU execution time."""
    from torch.autograd.profiler_util import EventList

    host, gpu = cuda_shaped_events
    fields = profiling.summarize_events(host + gpu, 1, "cuda")
    table = EventList(gpu, use_device="cuda").table()
    assert f"Self CUDA time total: {fields['profile_device_ms'] * 1000:.3f}us" in table
