"""A row's core count is the CPUs its process may run on (taskset), not the machine's."""

import os
import subprocess
import sys

import pytest

from conftest import REPO


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two CPUs to pin to one")
def test_a_process_pinned_to_one_cpu_records_one_core():
    cpu = min(os.sched_getaffinity(0))
    code = ("import os; os.sched_setaffinity(0, {%d}); "
            "from bench_utils.measure import environment; print(environment.ALLOWED_CPUS, os.cpu_count())" % cpu)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    allowed, machine = map(int, out.stdout.split())
    assert allowed == 1 and machine >= 2
