"""benchmarks/gpu_probe.sh, the one device call of a GPU session: its steps in order, each within its cap
and the call's deadline, and what each wrote left in OUTDIR. The stand-in for the GPU machine's python is
a shell script that logs its arguments, writes what the real step writes and sleeps as long as it is told
(the real steps need CUDA; what this checks is the script's arithmetic of seconds)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_probe.sh"

# python -c (the machine's versions), selfcheck, the profile (-m bench_utils run), the method check, A/A
STAND_IN = """#!/usr/bin/env bash
echo "$*" >> calls.log
case "$*" in
  *selfcheck*) echo "selfcheck line"; sleep "$SLEEP_SELFCHECK";;
  *" run "*) [ -n "${NO_ROWS:-}" ] || { mkdir -p reports/gpu-probe; echo '{"row": 1}' > reports/gpu-probe/results.jsonl; }
             sleep "$SLEEP_PROFILE";;
  *method_check*) echo "method line"; sleep "$SLEEP_METHOD";;
  *aa_check*) mkdir -p reports/gpu-aa; echo '{"aa": 1}' > reports/gpu-aa/results.jsonl; sleep "$SLEEP_AA";;
  *) echo "versions";;
esac
"""

pytestmark = pytest.mark.skipif(not (shutil.which("bash") and shutil.which("timeout")),
                                reason="needs bash and coreutils' timeout")


def _probe(tmp_path: Path, promises: tuple[int, ...], deadline_s: int, sleeps: tuple[float, ...], **more_env):
    """Run the script in `tmp_path` (its paths are the repository's, relative) with the stand-in python:
    (seconds it took, the stand-in's calls, OUTDIR)."""
    (tmp_path / "benchmarks").mkdir()
    shutil.copy(SCRIPT, tmp_path / "benchmarks" / SCRIPT.name)
    python = tmp_path / "python"
    python.write_text(STAND_IN)
    python.chmod(0o755)
    env = {**os.environ, "PYTHON": str(python), "GPU_PROBE_DEADLINE_S": str(deadline_s),
           **{f"SLEEP_{step}": str(s) for step, s in zip(("SELFCHECK", "PROFILE", "METHOD", "AA"), sleeps)}, **more_env}
    started = time.monotonic()
    subprocess.run(["bash", f"benchmarks/{SCRIPT.name}", "out", *map(str, promises)], cwd=tmp_path, env=env,
                   check=True, capture_output=True, timeout=120)
    calls = (tmp_path / "calls.log").read_text().splitlines()
    return time.monotonic() - started, calls, tmp_path / "out"


def _cut_at(log: str) -> int:
    """The cap of a step that ran to it: its "step: N s (cap N s)" line's N."""
    took, cap = map(int, re.search(r"step: (\d+) s \(cap (\d+) s\)", log).groups())
    assert took in (cap, cap + 1), log  # whole seconds of `date`
    return cap


def _step(call: str) -> str:
    return next(name for name in ("selfcheck", " run ", "method_check", "aa_check", "-c ") if name in call).strip()


def test_the_probe_runs_selfcheck_the_profile_and_both_checks_in_order_and_leaves_their_output(tmp_path):
    took, calls, out = _probe(tmp_path, (5, 5, 5, 5), 60, (0, 0, 0, 0))
    assert [_step(c) for c in calls] == ["-c", "selfcheck", "run", "method_check", "aa_check"]
    assert "--device cuda --quick" in calls[1] and "--engine-results reports/gpu-probe/results.jsonl" in calls[3]
    assert (out / "results.jsonl").read_text() == '{"row": 1}\n'  # the profile's rows, for docs/gpu.md
    assert (out / "aa-results.jsonl").read_text() == '{"aa": 1}\n'
    assert "selfcheck line" in (out / "selfcheck.txt").read_text()
    assert "method line" in (out / "method_check.txt").read_text()
    assert took < 10


def test_a_step_is_cut_where_the_later_steps_promises_begin_and_they_still_run(tmp_path):
    # a 12-s deadline, 3 s promised to each step: the 30-s selfcheck is cut at 12 - 9 = 3 s
    took, calls, out = _probe(tmp_path, (3, 3, 3, 3), 12, (30, 0, 0, 0))
    assert [_step(c) for c in calls] == ["-c", "selfcheck", "run", "method_check", "aa_check"]
    assert _cut_at((out / "selfcheck.txt").read_text()) in (2, 3)  # a second of clock may have passed first
    assert 2 <= took < 9  # the 30-s selfcheck cut, not waited for


def test_what_a_step_leaves_unused_goes_to_the_next(tmp_path):
    # the selfcheck ends at once: the profile gets its 3 s and the selfcheck's 5, less a second of clock
    took, calls, out = _probe(tmp_path, (5, 3, 3, 3), 14, (0, 30, 0, 0))
    assert _cut_at((out / "profile.txt").read_text()) in (7, 8)
    assert [_step(c) for c in calls] == ["-c", "selfcheck", "run", "method_check", "aa_check"]


def test_no_step_runs_past_the_deadline_and_one_left_no_time_is_skipped_saying_so(tmp_path):
    # an 8-s deadline with 3 s promised to each of the three later steps leaves the selfcheck none
    took, calls, out = _probe(tmp_path, (3, 3, 3, 3), 8, (0, 30, 30, 30))
    assert "selfcheck step skipped: no time left before the deadline" in (out / "selfcheck.txt").read_text()
    assert [_step(c) for c in calls] == ["-c", "run", "method_check", "aa_check"]
    assert _cut_at((out / "profile.txt").read_text()) in (1, 2)
    assert took < 8 + 2  # the deadline, and the script's own copying


def test_a_profile_that_left_no_rows_skips_the_method_check_saying_so_and_the_a_a_check_still_runs(tmp_path):
    took, calls, out = _probe(tmp_path, (3, 3, 3, 3), 30, (0, 0, 0, 0), NO_ROWS="1")
    assert [_step(c) for c in calls] == ["-c", "selfcheck", "run", "aa_check"]
    assert "method_check step skipped: the profile left no rows to check" in (out / "method_check.txt").read_text()


def test_a_second_call_resumes_and_measures_failed_rows_again_and_a_fresh_one_removes_the_last_calls(tmp_path):
    # the device tool keeps ignored folders on a warm machine: a rerun after a fix must not read stale rows
    _, calls, _ = _probe(tmp_path, (5, 5, 5, 5), 60, (0, 0, 0, 0))
    assert "--retry-failed" in calls[2] and "--keep .cache/selfcheck" in calls[1]
    stale = [tmp_path / ".cache" / "selfcheck" / "profile0.jsonl", tmp_path / "reports" / "gpu-probe" / "old.jsonl"]
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
    script = tmp_path / "benchmarks" / SCRIPT.name
    env = {**os.environ, "PYTHON": str(tmp_path / "python"), "GPU_PROBE_DEADLINE_S": "60",
           **{f"SLEEP_{step}": "0" for step in ("SELFCHECK", "PROFILE", "METHOD", "AA")}}
    subprocess.run(["bash", str(script), "out", "5", "5", "5", "5"], cwd=tmp_path, env=env, check=True,
                   capture_output=True, timeout=120)
    assert all(path.exists() for path in stale)  # a plain second call resumes
    subprocess.run(["bash", str(script), "out", "5", "5", "5", "5"], cwd=tmp_path, env={**env, "GPU_PROBE_FRESH": "1"},
                   check=True, capture_output=True, timeout=120)
    assert not any(path.exists() for path in stale)
