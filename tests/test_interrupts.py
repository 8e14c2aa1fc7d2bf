"""A hung cell, end to end through the CLI: Ctrl-C and SIGTERM stop the sweep and its cell, a SIGKILLed
sweep leaves no orphan, a second sweep on the same file is refused, and the timeout kills the cell and
the sweep goes on. The hang comes from the fault hook in bench_utils/measure/faults.py, in real
subprocesses; one scenario feeds every test to keep this file fast.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench_utils.measure.faults import ENV_VAR as FAULT
from conftest import REPO, one_error_line, rows_by_batch, run_cli, tiny_params

HANG_TIMEOUT_S = 12  # timeout_s of the hang sweep; the hang starts ~5 s into the cell process
TIMEOUT_SLACK_S = 5  # killing the process group and writing the row, seconds


def cell_processes(marker: str) -> list[int]:
    """Live `bench_utils cell` processes whose command line holds `marker` (a test's own folder)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if b"cell" in argv and any(marker.encode() in arg for arg in argv) and state != "Z":
            pids.append(int(entry.name))
    return pids


def wait_for(condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} after {timeout_s} s")
        time.sleep(0.1)


# --- a hung cell: Ctrl-C, SIGKILL of the sweep, a second sweep on the same file, the timeout ---------

def _start_sweep(params: Path, results: Path, env: dict) -> subprocess.Popen:
    # SIGINT back to default in the child, so Python turns it into KeyboardInterrupt even when the
    # test runner itself runs in the background with SIGINT ignored.
    return subprocess.Popen([sys.executable, "-m", "bench_utils", "run", str(params), "--results", str(results),
                             "--quiet"], cwd=REPO, env={**os.environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.fixture(scope="module")
def hang_sweep(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hang")
    started: list[subprocess.Popen] = []
    try:
        yield _hang_scenario(tmp, started)
    finally:
        for sweep in started:  # only on a failure above: a hung sweep must not outlive the tests
            if sweep.poll() is None:
                sweep.kill()
                sweep.wait()


def _hang_scenario(tmp: Path, started: list) -> dict:
    results, log = tmp / "results.jsonl", tmp / "logs" / "vit-bs1-eager-r0.log"
    # TMPDIR: the cell's config lands under `tmp`, so its command line names this test's folder
    env = {FAULT: "vit/*/eager=hang", "TMPDIR": str(tmp)}
    hung = lambda: log.exists() and "injected fault: hang" in log.read_text()  # noqa: E731
    outcome = {"tmp": tmp, "results": results}

    long_wait = tiny_params(tmp, "long.yaml", batch_sizes=[1, 2], timeout_s=300)
    sweep = _start_sweep(long_wait, results, env)
    started.append(sweep)
    wait_for(hung, 120, "hang in the first cell")
    outcome["pids_while_hung"] = cell_processes(str(tmp))
    outcome["second"] = run_cli("run", long_wait, "--results", results)
    sweep.send_signal(signal.SIGINT)
    outcome["interrupted"] = (sweep.wait(30), *sweep.communicate())
    outcome["pids_after_interrupt"] = cell_processes(str(tmp))

    log.unlink()
    sweep = _start_sweep(long_wait, results, env)
    started.append(sweep)
    wait_for(hung, 120, "hang after the restart")
    outcome["pids_before_kill"] = cell_processes(str(tmp))
    sweep.kill()
    sweep.wait()
    start = time.monotonic()
    wait_for(lambda: not cell_processes(str(tmp)), 10, "end of the orphaned cell")
    outcome["orphan_lived_s"] = time.monotonic() - start
    outcome["results_after_kills"] = results.exists() and results.read_text()

    log.unlink()
    outcome["cell_dirs_before"] = sorted(p.name for p in tmp.glob("bench-cell-*"))  # SIGKILL left its own
    sweep = _start_sweep(long_wait, results, env)
    started.append(sweep)
    wait_for(hung, 120, "hang before SIGTERM")
    outcome["cell_dirs_while_hung"] = sorted(p.name for p in tmp.glob("bench-cell-*"))
    sweep.terminate()  # SIGTERM, as a scheduler or `kill` stops a job
    outcome["terminated"] = (sweep.wait(30), *sweep.communicate())
    outcome["pids_after_terminate"] = cell_processes(str(tmp))
    outcome["cell_dirs_after_terminate"] = sorted(p.name for p in tmp.glob("bench-cell-*"))

    start = time.monotonic()
    outcome["timed"] = run_cli("run", tiny_params(tmp, "short.yaml", batch_sizes=[1, 2], timeout_s=HANG_TIMEOUT_S),
                               "--results", results, "--quiet", env=env)
    outcome["timed_wall_s"] = time.monotonic() - start
    outcome["pids_at_end"] = cell_processes(str(tmp))
    return outcome


def test_second_sweep_on_the_same_file_is_refused_not_interleaved(hang_sweep):
    line = one_error_line(hang_sweep["second"])
    assert line.startswith(f"error: {hang_sweep['results']} is being written by another run (pid ")
    assert hang_sweep["results_after_kills"] is False  # no row from either sweep


def test_ctrl_c_stops_the_sweep_and_its_cell(hang_sweep):
    code, stdout, stderr = hang_sweep["interrupted"]
    assert len(hang_sweep["pids_while_hung"]) == 1
    assert code == 130 and stdout == ""
    assert stderr.strip() == "interrupted: finished cells are saved; run the same command again to resume"
    assert hang_sweep["pids_after_interrupt"] == []


def test_sigterm_stops_like_ctrl_c_and_cleans_up(hang_sweep):
    code, stdout, stderr = hang_sweep["terminated"]
    assert code == 130 and stdout == "" and "Traceback" not in stderr
    assert stderr.strip() == "interrupted: finished cells are saved; run the same command again to resume"
    before = hang_sweep["cell_dirs_before"]  # what the SIGKILLed sweep could not remove
    assert len(hang_sweep["cell_dirs_while_hung"]) == len(before) + 1  # the cell's config folder...
    assert hang_sweep["cell_dirs_after_terminate"] == before and hang_sweep["pids_after_terminate"] == []  # ...gone


def test_sigkilled_sweep_leaves_no_orphan_cell(hang_sweep):
    assert len(hang_sweep["pids_before_kill"]) == 1
    assert hang_sweep["orphan_lived_s"] < 5  # PR_SET_PDEATHSIG: the kernel kills the cell with its sweep


def test_hung_cells_time_out_and_the_sweep_goes_on(hang_sweep):
    timed, results = hang_sweep["timed"], hang_sweep["results"]
    assert timed.returncode == 0, timed.stderr[-2000:]
    assert timed.stdout.strip() == f"2 cell processes: 0 already done, 2 timeout -> {results}"
    rows = rows_by_batch(results)
    for row in rows.values():
        assert row.status == "timeout"
        assert row.error.startswith(f"no result after timeout_s={HANG_TIMEOUT_S} s; log: injected fault: hang")
        assert HANG_TIMEOUT_S <= row.duration_s < HANG_TIMEOUT_S + TIMEOUT_SLACK_S
    assert hang_sweep["timed_wall_s"] < 2 * (HANG_TIMEOUT_S + TIMEOUT_SLACK_S)
    assert hang_sweep["pids_at_end"] == []  # the timeout killed each cell's whole process group
