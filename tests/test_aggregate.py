"""A cell's notes from its process rows (aggregate.py): what a compile mode did not do. Rows are made
with the test row builder; the rules read the row fields a CUDA process writes."""

import pytest

from bench_utils.results.aggregate import bf16_compiles, cells, kernels_outside_graphs
from conftest import COMPILED_FIXTURE, make_row

GPU_ENV = {"device": "cuda", "device_name": "NVIDIA T4", "torch": "2.fixture", "transformers": "5.fixture",
           "compute_capability": "7.5"}


def _note(mode: str = "reduce-overhead", device: str = "cuda", **fields) -> str:
    row = make_row("vit", 1, mode, 1.0, device=device, env=GPU_ENV, **(COMPILED_FIXTURE | fields))
    (record,) = cells([row])
    return record["cudagraph_note"]


def test_full_cuda_graph_coverage_leaves_no_note():
    # 200 kernels per call, 2 replays each copying its inputs (one launch), nothing else launched
    assert _note(cudagraphs_recorded=2, cudagraph_skips=0, profile_kernels_per_call=200.0,
                 profile_launches_per_call=2.0, profile_graph_replays_per_call=2.0) == ""


def test_kernels_launched_outside_graph_replays_are_partial_coverage():
    note = _note(cudagraphs_recorded=1, cudagraph_skips=0, profile_kernels_per_call=200.0,
                 profile_launches_per_call=61.0, profile_graph_replays_per_call=1.0)
    assert note == "partial CUDA-graph coverage: 60 of 200 kernels per call launched outside CUDA graphs"
    assert _note(cudagraphs_recorded=1, cudagraph_skips=0, profile_kernels_per_call=200.0,
                 profile_launches_per_call=0.0, profile_graph_replays_per_call=0.0) == (
        "no CUDA-graph replay in the profiled calls")


def test_recorded_nothing_or_skipped_is_said_and_default_mode_gets_no_graph_note():
    assert _note(cudagraphs_recorded=0) == "ran without CUDA graphs (none recorded)"
    assert _note(cudagraphs_recorded=1, cudagraph_skips=2) == "2 graph(s) skipped CUDA graphs"
    assert _note("default", cudagraphs_recorded=0, profile_kernels_per_call=200.0, profile_launches_per_call=200.0,
                 profile_graph_replays_per_call=0.0) == ""
    assert _note(device="cpu", cudagraphs_recorded=None) == ""  # CPU: no CUDA graphs to expect


def test_a_compile_that_made_no_graph_ran_eager_and_bfloat16_below_sm80_says_why():
    assert _note("default", device="cpu", graph_count=0) == "compiled no graph, ran eager (graph_count 0)"
    assert _note("default", dtype="bfloat16", graph_count=0) == (
        "compiled no graph, ran eager: Inductor does not compile bfloat16 below compute capability 8.0 "
        "(this GPU: 7.5; SkipFrame)")
    assert _note("max-autotune", dtype="bfloat16", graph_count=0, cudagraphs_recorded=0).startswith(
        "compiled no graph, ran eager: Inductor does not compile bfloat16")
    assert _note("default", dtype="bfloat16", graph_count=1) == ""


@pytest.mark.parametrize("dtype, device, capability, compiles", [
    ("bfloat16", "cuda", "7.5", False), ("bfloat16", "cuda", "7.0", False), ("bfloat16", "cuda", "8.0", True),
    ("bfloat16", "cuda", "9.0", True), ("bfloat16", "cpu", "", True), ("float16", "cuda", "7.5", True),
    ("bfloat16", "cuda", "", True)])
def test_bf16_compiles_from_compute_capability_8(dtype, device, capability, compiles):
    assert bf16_compiles(dtype, device, capability) is compiles


def test_kernels_outside_graphs_needs_a_cuda_profile():
    assert kernels_outside_graphs({"profile_launches_per_call": 5.0, "profile_graph_replays_per_call": 2.0}) == 3.0
    assert kernels_outside_graphs({"profile_launches_per_call": 1.0, "profile_graph_replays_per_call": 2.0}) == 0.0
    assert kernels_outside_graphs({"profile_launches_per_call": None, "profile_graph_replays_per_call": None}) is None
