"""benchmarks/timer_comparison.py runs with tiny settings and its two timers agree on the same model."""

import math
import re
import subprocess
import sys

from conftest import REPO


def test_engine_and_torch_timer_agree_on_a_tiny_model():
    proc = subprocess.run([sys.executable, "benchmarks/timer_comparison.py", "--iterations", "6", "--rounds", "2",
                           "--min-run-time", "0.2", "--noop-calls", "2000", "--threads", "1"],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert out.startswith("vit (tiny, random weights), batch size 1, float32 on cpu, eager;")
    assert re.search(r"time_calls \+ summarize +median +[\d.]+ ms +\(12 calls\)", out)
    assert re.search(r"Timer\.timeit\(1\) +median +[\d.]+ ms +\(12 calls\)", out)
    ratio = float(re.search(r"ratio engine / Timer\.timeit: ([\d.]+)", out).group(1))
    assert math.isfinite(ratio) and 0.5 < ratio < 2.0  # same calls, alternating: within 2x even on a busy CPU
    overhead = float(re.search(r"no-op callable, 2000 calls\): median ([\d.]+) us", out).group(1))
    assert 0 < overhead < 50  # two perf_counter reads and a call: well under 50 microseconds
