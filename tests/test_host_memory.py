"""The measuring process's allocator (bench_utils/measure/host_memory.py): with keep_freed_memory a
large tensor made and freed again and again page-faults once, not every time. Each case runs in a
process of its own: mallopt changes the whole process, for good."""

import subprocess
import sys

import pytest

from bench_utils.measure.host_memory import allocator_state

# a 48 MiB float32 tensor made, written and freed 20 times (above the largest mmap threshold, 32 MiB:
# glibc maps such a block fresh each time by default); minor page faults of each of the last 5 times.
# Kept memory needs a few calls to settle: torch asks for 64-byte aligned blocks, a bit more than the
# hole a freed one leaves, until freed neighbours merge
PROBE = """
import resource, sys, torch
from bench_utils.measure.host_memory import keep_freed_memory
state = keep_freed_memory() if sys.argv[1] == "keep" else "defaults"
faults = []
for _ in range(20):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    torch.empty(12 * 2 ** 20).fill_(1.0)
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(state, *faults[-5:], sep="|")
"""


def _last_faults(how: str) -> tuple[str, list[int]]:
    out = subprocess.run([sys.executable, "-c", PROBE, how], capture_output=True, text=True, check=True)
    state, *faults = out.stdout.strip().split("|")
    return state, [int(f) for f in faults]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_process_that_keeps_freed_memory_does_not_fault_its_tensors_in_again():
    state, kept = _last_faults("keep")
    assert state == "glibc, freed memory kept (mallopt: no mmap, no trimming)"
    assert max(kept) < 100  # the memory freed is the memory reused
    _, default = _last_faults("defaults")
    assert min(default) > 10_000  # 48 MiB in 4 KiB pages: 12,288 faults every time


def test_a_process_that_was_not_asked_says_defaults():
    assert allocator_state() == "allocator defaults"  # the test process: nothing asked it to keep memory
