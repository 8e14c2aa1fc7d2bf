"""The profiler pass: what a call is made of, eager against compiled, on real tiny models."""

import json

import pytest
import torch

from bench_utils.config.bench_config import BenchConfig
from bench_utils.measure import profiling
from bench_utils.measure.cell import measure_cell

FAST = dict(models=("resnet",), size="tiny", device="cpu", weights="random", batch_sizes=(1,),
            modes=("eager", "default"), warmup=1, iterations=2,
            min_time_s=0.0, max_warmup_s=0.0, repeats=1, cold_compile=False, profile=True)


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    """Eager and compiled processes of tiny ResNet at batch 1, profiled, with their traces."""
    folder = tmp_path_factory.mktemp("traces")
    cfg = BenchConfig(**FAST)
    return {mode: (measure_cell(cfg, "resnet", 1, mode, 0, folder / f"{mode}.json"), folder / f"{mode}.json")
            for mode in ("eager", "default")}


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


def test_trace_is_written_for_perfetto(profiled):
    row, path = profiled["default"]
    assert row.profile_trace == path.name
    trace = json.loads(path.read_text())
    names = {event.get("name") for event in trace["traceEvents"]}
    assert profiling.CALL_MARK in names


def test_profile_runs_in_repeat_zero_only(tmp_path):
    cfg = BenchConfig(**(FAST | {"modes": ("eager",)}))
    later = measure_cell(cfg, "resnet", 1, "eager", 1, tmp_path / "r1.json")
    assert later.status == "ok" and later.profile_calls is None and not (tmp_path / "r1.json").exists()


def test_events_without_the_call_mark_are_refused():
    with torch.profiler.profile() as prof:
        torch.ones(3).sum()
    with pytest.raises(ValueError, match="no bench_utils::call events"):
        profiling.summarize_events(prof.events(), 1, "cpu")
