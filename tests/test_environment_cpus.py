"""A row's core count is the CPUs its process may run on (taskset), not the machine's, and a GPU
worker's launching thread pinned to one CPU later does not make it one."""

import os
import subprocess
import sys

import pytest

from conftest import REPO

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                                reason="needs Linux and two CPUs to pin to one")


def _cores(code: str) -> list[int]:
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    return [int(word) for word in out.stdout.split()]


def test_a_process_pinned_to_one_cpu_records_one_core():
    cpu = min(os.sched_getaffinity(0))
    recorded, machine = _cores(f"import os; os.sched_setaffinity(0, {{{cpu}}}); "
                               "from bench_utils.measure import environment; "
                               "print(environment.collect('cpu')['cpu_count'], os.cpu_count())")
    assert recorded == 1 and machine >= 2


def test_a_launching_thread_pinned_after_import_keeps_the_processs_count():
    allowed, pinned_to, recorded = _cores(
        "import os; from bench_utils.measure import environment, launch_thread; "
        "allowed = len(os.sched_getaffinity(0)); cpu = launch_thread.pin(); "
        "print(allowed, len(os.sched_getaffinity(0)), environment.collect('cpu')['cpu_count'])")
    assert pinned_to == 1 and recorded == allowed >= 2
