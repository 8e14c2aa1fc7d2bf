"""What dynamo and Inductor did while compiling: graphs, graph breaks and their reasons, recompiles
and the guards that failed, the recompile limit, the FX-graph cache's hits and misses, and the CUDA
graphs recorded. Read from torch's own counters; clear them before the compile you want to describe.
"""

from __future__ import annotations


def clear_graph_stats() -> None:
    """Forget dynamo's and Inductor's counts and guard failures, so that graph_stats speaks of what
    follows only."""
    from torch._dynamo.utils import counters, guard_failures

    counters.clear()
    guard_failures.clear()


def forget_compiled() -> None:
    """Forget what this process compiled, as a new process would not have it: dynamo's code caches
    (torch._dynamo.reset) and Inductor's in-memory caches, which reset leaves alone: its loaded
    modules and kernels (torch/_inductor/utils.py, clear_caches: every @clear_on_fresh_cache class,
    e.g. codecache.PyCodeCache, async_compile.CompiledTritonKernels), the portable cache artifacts recorded;
    then the counts (clear_graph_stats).
    The on-disk compiler cache stays: a warm compile reads it."""
    import torch
    from torch._inductor.utils import clear_caches
    from torch.compiler._cache import CacheArtifactManager

    torch._dynamo.reset()
    clear_caches()
    CacheArtifactManager.clear()  # the cache artifacts recorded so far: a new process has none
    clear_graph_stats()


def graphs_compiled() -> int:
    """Graphs dynamo compiled since the counters were cleared."""
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def graph_stats(frames_after_first_call: int) -> dict:
    """Graph breaks and their reasons (dynamo's counters), graphs compiled, recompiles after the
    first call with the guard that failed for each (why dynamo compiled again), and the graphs that
    ran without CUDA graphs (reduce-overhead skipped them)."""
    from torch._dynamo.utils import counters, guard_failures

    breaks = [reason.strip().splitlines()[0] for reason in counters["graph_break"]]
    failed_guards = [reason.strip().splitlines()[0] for reasons in guard_failures.values() for reason in reasons]
    return {"graph_breaks": int(sum(counters["graph_break"].values())),
            "graph_count": graphs_compiled(),
            "recompiles": int(counters["frames"]["total"]) - frames_after_first_call,
            "break_reasons": sorted(set(breaks)), "recompile_reasons": sorted(set(failed_guards)),
            "cudagraph_skips": int(counters["inductor"]["cudagraph_skips"])}


def cudagraphs_recorded(device: str) -> int | None:
    """CUDA graphs recorded in this process by Inductor's CUDA-graph trees (reduce-overhead and
    max-autotune): 0 means the mode ran without them. None off CUDA, or if torch's internals moved
    (torch._inductor.cudagraph_trees: manager.roots and node.children, both FunctionID -> nodes)."""
    if device != "cuda":
        return None
    try:
        import torch
        from torch._inductor import cudagraph_trees

        # the device index given: torch 2.11's get_manager requires it (without, every row read None)
        manager = cudagraph_trees.get_manager(torch.cuda.current_device(), create_if_none_exists=False)
        if manager is None:
            return 0

        def count(nodes) -> int:
            return sum(1 + count([c for kids in node.children.values() for c in kids]) for node in nodes)

        return count([node for nodes in manager.roots.values() for node in nodes])
    # RuntimeError: no CUDA device to ask; AssertionError: asked from a thread other than the one that
    # imported cudagraph_trees (its get_obj asserts the thread: torch 2.11, cudagraph_trees.py)
    except (AttributeError, ImportError, TypeError, RuntimeError, AssertionError):
        return None


DEFAULT_POOL = (0, 0)  # the caching allocator's own pool id; CUDA graphs record into private pools


def private_pool_mb(segments: list[dict]) -> float:
    """MiB reserved in private memory pools, from torch.cuda.memory_snapshot()'s segments (the Segment
    dict of torch/cuda/memory.py, _snapshot: total_size, segment_pool_id). Inductor finds its
    CUDA-graph pool's segments the same way (cudagraph_trees.py, get_cudagraph_segments)."""
    return sum(seg["total_size"] for seg in segments if tuple(seg["segment_pool_id"]) != DEFAULT_POOL) / 2**20


def cudagraph_pool_mb(device: str) -> float | None:
    """CUDA: MiB the CUDA-graph pools hold now (None off CUDA): memory a graph's replays use that the
    allocated peak does not count (a replay allocates nothing: cudagraph_trees.py, run_graph)."""
    if device != "cuda":
        return None
    import torch

    return private_pool_mb(torch.cuda.memory_snapshot(include_traces=False))


RECOMPILE_LIMIT_MARKER = "recompile limit"  # in dynamo's "unimplemented" counter when a frame hit the limit


def hit_recompile_limit() -> bool:
    """Did a frame hit dynamo's recompile limit since the counters were cleared? Dynamo then runs the
    frame's new shapes eagerly, silently."""
    from torch._dynamo.utils import counters

    return any(RECOMPILE_LIMIT_MARKER in str(message).lower() for message in counters["unimplemented"])


def compile_lowered() -> bool:
    """Did Inductor generate code for a graph since the counters were cleared (an FX-graph cache miss,
    or a graph the cache does not take, e.g. a frozen one), rather than load every graph from its cache?"""
    from torch._dynamo.utils import counters

    return counters["inductor"]["fxgraph_cache_miss"] + counters["inductor"]["fxgraph_cache_bypass"] > 0


def fx_cache_counts() -> dict:
    """Inductor's FX graph cache hits and misses so far: was a compile cold (misses) or warm (hits)?"""
    from torch._dynamo.utils import counters

    return {"fx_cache_hits": int(counters["inductor"]["fxgraph_cache_hit"]),
            "fx_cache_misses": int(counters["inductor"]["fxgraph_cache_miss"])}
