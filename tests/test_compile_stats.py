"""What dynamo did, read from its own counters: graphs, breaks with reasons, recompiles with failed guards."""

import torch


def test_graph_stats_name_graph_breaks_and_failed_guards_from_dynamo():
    from bench_utils.measure.compile_stats import clear_graph_stats, graph_stats

    def breaks(x):
        x = x * 2
        torch._dynamo.graph_break()  # explicit: how dynamo words a print() break varied with earlier tests (CI)
        return x + 1

    torch._dynamo.reset()
    clear_graph_stats()
    compiled = torch.compile(breaks, dynamic=False, backend="eager")  # dynamo only: no codegen, fast
    compiled(torch.ones(2))
    first = graph_stats(frames_after_first_call=0)
    assert first["graph_breaks"] >= 1 and first["graph_count"] == 2
    assert first["break_reasons"] == ["Call to `torch._dynamo.graph_break()`"]
    frames = int(torch._dynamo.utils.counters["frames"]["total"])
    compiled(torch.ones(3))  # a new static shape: the size guard fails and dynamo compiles again
    again = graph_stats(frames)
    assert again["recompiles"] >= 1
    assert any("size mismatch" in reason and "expected 2, actual 3" in reason for reason in again["recompile_reasons"])
    torch._dynamo.reset()


def test_forget_compiled_drops_inductors_loaded_modules_as_a_new_process_would():
    """torch._dynamo.reset() alone keeps Inductor's loaded modules (PyCodeCache): a warm compile after it
    would skip loading them, which a new process pays."""
    from torch._inductor.async_compile import CompiledTritonKernels
    from torch._inductor.codecache import PyCodeCache
    from torch._inductor.utils import _registered_caches

    from bench_utils.measure.compile_stats import forget_compiled

    assert CompiledTritonKernels in _registered_caches  # the GPU kernels a warm compile loads go too
    forget_compiled()
    torch.compile(lambda x: x * 2 + 1, dynamic=False)(torch.ones(4))
    assert len(PyCodeCache.modules) == 1  # the compiled graph's module is loaded
    torch._dynamo.reset()
    assert len(PyCodeCache.modules) == 1  # still loaded: reset is not enough
    forget_compiled()
    assert not PyCodeCache.modules
    assert not torch._dynamo.utils.counters["stats"]


def test_cudagraph_pool_counts_private_pool_segments_only():
    """Segments as torch.cuda.memory_snapshot() returns them (torch/cuda/memory.py, _snapshot's Segment)."""
    from bench_utils.measure.compile_stats import cudagraph_pool_mb, private_pool_mb

    mib = 2**20
    segments = [{"total_size": 20 * mib, "segment_pool_id": (0, 0)},  # the allocator's own pool
                {"total_size": 2 * mib, "segment_pool_id": (1, 0)},  # a CUDA-graph pool
                {"total_size": 6 * mib, "segment_pool_id": [0, 1]}]  # another private pool (ids as a list)
    assert private_pool_mb(segments) == 8.0
    assert private_pool_mb(segments[:1]) == 0.0
    assert cudagraph_pool_mb("cpu") is None
