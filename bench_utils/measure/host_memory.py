"""What the measuring process's C allocator does with freed memory. No torch.

PyTorch's CPU allocator takes every tensor from the C allocator and gives it back when the tensor dies. With
glibc's defaults a block above the mmap threshold (128 KiB, raised by use up to 32 MiB) is mapped fresh and
unmapped when freed, and free memory at an arena's top goes back to the kernel (trimming): each eager call of
a full-size model then page-faults its activations in again, tens of thousands of minor faults a call for
DeepLabV3-MobileNetV2 at 513x513, about a third of its eager time, and how much a fault costs moved with the
process's allocator state and the host: a source of disagreement between worker pairs
(benchmarks/README.md#allocator-and-new-pairs). `keep_freed_memory` turns glibc's mmap of large blocks and its
trimming off (mallopt; a block above the threshold's 32 MiB ceiling would otherwise still be mapped per call),
so what one call frees the next reuses: no fault after the first calls, eager and compiled alike. PyTorch's
CPU benchmarks reach the same with jemalloc or tcmalloc (torch.backends.xeon.run_cpu); a user who runs with
glibc's defaults sees the faults.
"""

from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD = -1  # glibc's <malloc.h>
M_MMAP_MAX = -4
TRIM_THRESHOLD_MAX = 2 ** 31 - 1  # bytes: mallopt takes an int; 2 GiB of free top is never trimmed here

_state = "allocator defaults"


def keep_freed_memory() -> str:
    """Ask glibc to keep freed memory for reuse (module docstring); what the process's allocator now
    does, as rows record it (environment.collect: "allocator")."""
    global _state
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (macOS, musl without it): its defaults stay
        _state = "allocator defaults (no glibc mallopt)"
        return _state
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    if mallopt(M_MMAP_MAX, 0) and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_MAX):
        _state = "glibc, freed memory kept (mallopt: no mmap, no trimming)"
    return _state


def allocator_state() -> str:
    """What this process's allocator does with freed memory, as keep_freed_memory left it."""
    return _state
