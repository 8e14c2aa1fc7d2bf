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


def test_cudagraphs_recorded_counts_the_tree_of_the_current_device(monkeypatch):
    """The CUDA-graph trees' count, as torch 2.11 (device index required) and 2.14 (optional) both take
    it: on the H200 the call without it raised and every row's count was None (unknown)."""
    import inspect
    import types

    import torch
    from torch._inductor import cudagraph_trees

    from bench_utils.measure.compile_stats import cudagraphs_recorded

    assert list(inspect.signature(cudagraph_trees.get_manager).parameters)[:2] == ["device_index",
                                                                                  "create_if_none_exists"]
    node = lambda *kids: types.SimpleNamespace(children={"fn": list(kids)})  # noqa: E731
    manager = types.SimpleNamespace(roots={"fn": [node(node(), node())], "fn2": [node()]})
    asked = []

    def get_manager(device_index, create_if_none_exists=True):  # torch 2.11's signature
        asked.append((device_index, create_if_none_exists))
        return manager

    monkeypatch.setattr(torch.cuda, "current_device", lambda: 3)
    monkeypatch.setattr(cudagraph_trees, "get_manager", get_manager)
    assert cudagraphs_recorded("cuda") == 4 and asked == [(3, False)]
    monkeypatch.setattr(cudagraph_trees, "get_manager", lambda device_index, create_if_none_exists=True: None)
    assert cudagraphs_recorded("cuda") == 0  # no tree: the mode ran without CUDA graphs
    assert cudagraphs_recorded("cpu") is None

    def other_thread(device_index, create_if_none_exists=True):  # get_obj asserts the importing thread (2.11)
        raise AssertionError
    monkeypatch.setattr(cudagraph_trees, "get_manager", other_thread)
    assert cudagraphs_recorded("cuda") is None  # unknown, not a crash
