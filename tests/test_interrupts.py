"""A hung worker, end to end through the CLI: Ctrl-C and SIGTERM stop the sweep and kill its workers,
a SIGKILLed sweep leaves no orphan (neither a worker nor the fork server it came from), a second sweep
on the same file is refused, and the timeout kills the worker and the sweep goes on. The hang comes
from the fault hook in bench_utils/measure/injected_failures.py, in real processes; one scenario feeds every
test to keep this file fast.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench_utils.measure.injected_failures import ENV_VAR as FAULT
from conftest import REPO, one_error_line, rows_by_batch, run_cli, tiny_params

HANG_TIMEOUT_S = 12  # timeout_s of the hang sweep; the hang starts as the worker loads its model
# How long a process may take to end (a guard against one that never does), not a margin a test
# hopes to win: what each test asserts is the rule (killed, no orphan, a timeout row), not a duration.
END_GUARD_S = 60


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process."""
    table = {}
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            table[int(entry.name)] = (int(fields[1]), fields[0])
        except (OSError, IndexError, ValueError):
            continue
    return table


def alive(pids) -> list[int]:
    table = _processes()
    return [pid for pid in pids if pid in table and table[pid][1] != "Z"]


def descendants(pid: int) -> list[int]:
    """Every live process started by `pid`, at any depth (the fork server, its workers, ...)."""
    table = _processes()
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        children = [p for p, (ppid, state) in table.items() if ppid == parent and state != "Z"]
        found += children
        todo += children
    return found


def worker_processes(folder: Path) -> list[int]:
    """Live processes whose output goes to a log under `folder` (a test's own): its workers, and any
    compile worker they started."""
    pids = []
    for pid in alive(_processes()):
        try:
            out = os.readlink(f"/proc/{pid}/fd/1")
        except OSError:
            continue
        if out.startswith(str(folder)):
            pids.append(pid)
    return pids


def workers_of(pids: list[int]) -> list[int]:
    """Of `pids` (worker_processes), the workers themselves: not the processes a worker started (the copy
    of itself it keeps to start new processes from, measure/startup.py; a compile worker), whose parent is
    one of them."""
    table = _processes()
    return [pid for pid in pids if table.get(pid, (0, ""))[0] not in pids]


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
    # TMPDIR: whatever temporary folder the sweep or its workers make lands under `tmp`
    env = {FAULT: "vit/*/eager=hang", "TMPDIR": str(tmp)}
    prefixes = ("tmp", "bench-", "inductor-", "pymp-")  # tempfile's, ours, Inductor's, multiprocessing's
    temporary = lambda: sorted(p.name for p in tmp.iterdir() if p.name.startswith(prefixes))  # noqa: E731
    hung = lambda: log.exists() and "injected fault: hang" in log.read_text()  # noqa: E731
    outcome = {"tmp": tmp, "results": results}

    long_wait = tiny_params(tmp, "long.yaml", batch_sizes=[1, 2], timeout_s=300)
    sweep = _start_sweep(long_wait, results, env)
    started.append(sweep)
    wait_for(hung, 120, "hang in the first round")
    outcome["pids_while_hung"] = worker_processes(tmp)
    outcome["workers_while_hung"] = workers_of(outcome["pids_while_hung"])
    family = descendants(sweep.pid)  # the fork server, the worker, multiprocessing's resource tracker
    outcome["family_while_hung"] = family
    outcome["second"] = run_cli("run", long_wait, "--results", results)
    sweep.send_signal(signal.SIGINT)
    outcome["interrupted"] = (sweep.wait(END_GUARD_S), *sweep.communicate())
    outcome["pids_after_interrupt"] = worker_processes(tmp)
    wait_for(lambda: not alive(family), END_GUARD_S, "end of the interrupted sweep's processes")

    log.unlink()
    sweep = _start_sweep(long_wait, results, env)
    started.append(sweep)
    wait_for(hung, 120, "hang after the restart")
    outcome["pids_before_kill"] = worker_processes(tmp)
    outcome["workers_before_kill"] = workers_of(outcome["pids_before_kill"])
    family = descendants(sweep.pid)
    outcome["family_before_kill"] = family
    sweep.kill()
    sweep.wait()
    # no orphan: the fork server ends with its sweep, and PR_SET_PDEATHSIG ends the worker with it (a
    # worker without them would live on: the guard would fail)
    wait_for(lambda: not alive(family), END_GUARD_S, "end of the orphaned worker and fork server")
    outcome["results_after_kills"] = results.exists() and results.read_text()

    log.unlink()
    outcome["temporary_before"] = temporary()
    sweep = _start_sweep(long_wait, results, env)
    started.append(sweep)
    wait_for(hung, 120, "hang before SIGTERM")
    family = descendants(sweep.pid)
    outcome["pids_before_terminate"] = worker_processes(tmp)
    outcome["workers_before_terminate"] = workers_of(outcome["pids_before_terminate"])
    sweep.terminate()  # SIGTERM, as a scheduler or `kill` stops a job
    outcome["terminated"] = (sweep.wait(END_GUARD_S), *sweep.communicate())
    outcome["pids_after_terminate"] = worker_processes(tmp)
    wait_for(lambda: not alive(family), END_GUARD_S, "end of the terminated sweep's processes")
    outcome["temporary_after_terminate"] = temporary()

    outcome["timed"] = run_cli("run", tiny_params(tmp, "short.yaml", batch_sizes=[1, 2], timeout_s=HANG_TIMEOUT_S),
                               "--results", results, "--quiet", env=env)
    outcome["pids_at_end"] = worker_processes(tmp)
    return outcome


def test_second_sweep_on_the_same_file_is_refused_not_interleaved(hang_sweep):
    line = one_error_line(hang_sweep["second"])
    assert line.startswith(f"error: {hang_sweep['results']} is being written by another run (pid ")
    assert hang_sweep["results_after_kills"] is False  # no row from either sweep


def test_ctrl_c_stops_the_sweep_and_kills_its_workers(hang_sweep):
    code, stdout, stderr = hang_sweep["interrupted"]
    assert len(hang_sweep["workers_while_hung"]) == 1  # one round of one mode: one worker
    assert set(hang_sweep["pids_while_hung"]) <= set(hang_sweep["family_while_hung"])  # forked by the sweep's server
    assert code == 130 and stdout == ""
    assert stderr.strip() == "interrupted: finished cells are saved; run the same command again to resume"
    assert hang_sweep["pids_after_interrupt"] == []  # killed before the sweep returned (after EXIT_WAIT_S)


def test_sigterm_stops_like_ctrl_c_and_cleans_up(hang_sweep):
    code, stdout, stderr = hang_sweep["terminated"]
    assert code == 130 and stdout == "" and "Traceback" not in stderr
    assert stderr.strip() == "interrupted: finished cells are saved; run the same command again to resume"
    assert len(hang_sweep["workers_before_terminate"]) == 1 and hang_sweep["pids_after_terminate"] == []
    # no temporary folder left behind (the fork server's included), and no process
    assert hang_sweep["temporary_after_terminate"] == hang_sweep["temporary_before"]


def test_sigkilled_sweep_leaves_no_orphan_worker(hang_sweep):
    assert len(hang_sweep["workers_before_kill"]) == 1
    assert set(hang_sweep["pids_before_kill"]) < set(hang_sweep["family_before_kill"])  # the fork server too
    # the fork server exits when its sweep is gone, and PR_SET_PDEATHSIG kills the worker with it: the
    # scenario waited for both to end (END_GUARD_S)


def test_hung_workers_time_out_and_the_sweep_goes_on(hang_sweep):
    timed, results = hang_sweep["timed"], hang_sweep["results"]
    assert timed.returncode == 0, timed.stderr[-2000:]
    assert timed.stdout.strip() == (f"2 rounds measured, 0 already done; 2 in the file failed: --retry-failed "
                                    f"measures them again -> {results}")
    rows = rows_by_batch(results)
    for row in rows.values():
        assert row.status == "timeout"
        assert row.error.startswith(f"no result after timeout_s={HANG_TIMEOUT_S} s; log: injected fault: hang")
        assert row.duration_s >= HANG_TIMEOUT_S  # never killed before its deadline (after it: the machine's pace)
    assert hang_sweep["pids_at_end"] == []  # the timeout killed each worker's whole process group


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_during_a_cold_compile_leaves_no_temporary_folder(tmp_path, stop):
    """A fresh worker's temporary files (a package's build) live in the runner's scratch folder, which
    the runner removes after killing the worker: a worker killed mid-compile cannot remove its own."""
    params = tiny_params(tmp_path, configurations=["eager", "default"])
    log = tmp_path / "logs" / "vit-bs1-default-r0.log"
    sweep = _start_sweep(params, tmp_path / "results.jsonl", {FAULT: "vit/*/default=hang-in-compile",
                                                               "TMPDIR": str(tmp_path)})
    try:
        wait_for(lambda: log.exists() and "injected fault: hang" in log.read_text(), 180, "hang in the compile")
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith("bench-scratch-")]  # the cold cache's home
        sweep.send_signal(stop)
        code, _, stderr = sweep.wait(60), *sweep.communicate()
    finally:
        if sweep.poll() is None:
            sweep.kill()
    assert code == 130 and "Traceback" not in stderr
    left = sorted(p.name for p in tmp_path.rglob("*") if p.name.startswith(("inductor-cold-", "bench-scratch-")))
    assert left == []


def test_ctrl_c_while_report_only_builds_pages_says_interrupted_not_resume(monkeypatch, capsys):
    # nothing is measured there: "finished cells are saved; run the same command again to resume" misled
    import bench_utils.__main__ as cli

    def stopped(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_cmd_report", stopped)
    assert cli.main(["report", "parameters/cpu.yaml", "--report-only"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted"
    assert cli.main(["report", "parameters/cpu.yaml"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted: finished cells are saved; run the same command again to resume"
