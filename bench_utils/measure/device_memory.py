"""What a cell's process holds in memory while it times, and giving the device's cache back.

A row's memory is read over its own timed calls: on CUDA the caching allocator's peaks, allocated and
reserved, since the last reset (torch/cuda/memory.py: max_memory_allocated, max_memory_reserved count
every allocation since reset_peak_memory_stats), and what the CUDA-graph pools hold; on a CPU the
process's peak resident memory, which nothing resets (its page says "process peak", compile included).

Where a configuration's worker also times eager float32 between its own blocks (eager_in_process, a
GPU's default), eager's activations share the allocator: read at the row's end, the peaks would be the
larger of eager's and the configuration's, and a compiled row would hold eager's memory. So the peaks
are reset before each stretch of the configuration's own calls that follows eager's, read at its end
(`OwnPeaks`), and the row keeps the largest; eager's cached blocks are given back at that reset, and the
untimed call that begins each stretch after a switch (cell.CellProcess._time_block) allocates again.
"""

from __future__ import annotations

import gc
import resource

import torch

from .compile_stats import cudagraph_pool_mb

MIB = 2**20


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak_memory(device: str) -> None:
    """CUDA: the next peak counts from here. Cached free blocks (compile and autotune scratch, the float64
    reference's, eager's beside) are released first, so the reserved peak is what timing holds:
    empty_cache releases "unoccupied cached memory" only (torch/cuda/memory.py, empty_cache); the
    CUDA-graph pool stays, its graphs own it."""
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def peaks_mb(device: str, before_fork_mb: float = 0.0) -> dict:
    """The peaks since the last reset, MiB: CUDA allocated and reserved (the caching allocator's
    footprint, see BenchResult.peak_mem_mb); CPU the process's peak RSS, and for a process forked from a
    prepared one, that one's peak up to the fork (`before_fork_mb`: a fork's own count starts at the
    fork, without the compile that came before)."""
    if device == "cuda":
        return {"peak_mem_mb": torch.cuda.max_memory_allocated() / MIB,
                "peak_reserved_mb": torch.cuda.max_memory_reserved() / MIB}
    return {"peak_mem_mb": max(peak_rss_mb(), before_fork_mb)}


def held_now_mb(device: str) -> dict:
    """What the CUDA-graph pools hold now, MiB (CUDA only): their graphs own it, no reset touches it."""
    return {"cudagraph_pool_mb": cudagraph_pool_mb(device)} if device == "cuda" else {}


class OwnPeaks:
    """A row's peaks over its own stretches of calls (see the module docstring): `start` before a stretch
    that follows another callable's calls in this process, `end` after every stretch, `of_row` at its end."""

    def __init__(self, device: str):
        self.device, self.largest = device, {}

    def start(self) -> None:
        reset_peak_memory(self.device)

    def end(self) -> None:
        if self.device == "cuda":  # a CPU's peak RSS cannot be reset: read once, at the row's end
            for name, mib in peaks_mb(self.device).items():
                self.largest[name] = max(self.largest.get(name, 0.0), mib)

    def of_row(self, before_fork_mb: float = 0.0) -> dict:
        """CUDA: the largest over the row's stretches; CPU: the process's peak now (peaks_mb)."""
        return dict(self.largest) if self.device == "cuda" else peaks_mb(self.device, before_fork_mb)


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
    hand_over_memory(device)


def release_cuda_memory() -> None:
    """Give cached blocks back. After a failed cell a sticky CUDA error (e.g. an illegal address) makes
    every later CUDA call raise too; the row must still say what went wrong first."""
    try:
        torch.cuda.empty_cache()
    except RuntimeError:
        pass
