"""Fault injection end to end: what each fault a cell can meet does to a sweep, through the CLI.

Faults come from the hooks in bench_utils/faults.py (BENCH_UTILS_FAULT, BENCH_UTILS_TORN_WRITE), in
real subprocesses. Already covered elsewhere, not repeated here: a sweep SIGKILLed between cells
(test_runner.py), the writer's lock and a torn last line in-process (test_results.py), config
messages in-process (test_config.py). Several faults share one sweep to keep this file fast.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench_utils.config import load_config
from bench_utils.faults import ENV_VAR as FAULT, TORN_WRITE_ENV_VAR as TORN
from bench_utils.index_page import ProfileLine, load_rows, write_index
from bench_utils.results import read_results, to_dataframe
from bench_utils.runner import signal_name
from bench_utils.tables import failures_table, latency_table, missing_cells
from conftest import REPO, make_row, one_error_line, run_cli, tiny_params

# bs1 ok; bs2..bs5 each meet one fault; the 5th row appended is torn (half written, sweep SIGKILLed).
CELL_FAULTS = "vit/2/eager=eager-error;vit/3/eager=segfault;vit/4/eager=sigkill;vit/5/eager=oom"
HANG_TIMEOUT_S = 12  # timeout_s of the hang sweep; the hang starts ~5 s into the cell process
TIMEOUT_SLACK_S = 5  # killing the process group and writing the row, seconds


def rows_by_batch(path: Path) -> dict:
    return {row.batch_size: row for row in read_results(path).rows}


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


# --- crashes, errors and a torn write in one sweep, then resumed -------------------------------------

@pytest.fixture(scope="module")
def fault_sweep(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("faults")
    params = tiny_params(tmp, batch_sizes=[1, 2, 3, 4, 5], iterations=4)
    results = tmp / "results.jsonl"
    torn = run_cli("run", params, "--results", results, "--quiet", env={FAULT: CELL_FAULTS, TORN: "5"})
    after_torn = results.read_bytes()
    resumed = run_cli("run", params, "--results", results, env={FAULT: CELL_FAULTS})
    after_resume = results.read_bytes()
    again = run_cli("run", params, "--results", results)  # no faults planned: must measure nothing
    return dict(params=params, results=results, torn=torn, after_torn=after_torn, resumed=resumed,
                after_resume=after_resume, again=again)


def final_rows(fault_sweep) -> dict:
    with pytest.warns(UserWarning, match=r"skipped 1 unreadable line\(s\): \[5\]"):  # the torn line
        return rows_by_batch(fault_sweep["results"])


def test_each_fault_becomes_its_status_with_the_error_text(fault_sweep):
    rows = final_rows(fault_sweep)
    assert {b: r.status for b, r in rows.items()} == {1: "ok", 2: "error", 3: "crashed", 4: "crashed", 5: "oom"}
    assert rows[2].error.startswith("InjectedFault: injected fault: eager-error [faults.py:")
    assert rows[2].weights == "random" and rows[2].num_params > 1000  # what ran before the fault is kept
    assert rows[3].error.startswith("cell process killed by SIGSEGV; log: ")
    assert rows[4].error.startswith("cell process killed by SIGKILL; log: ")
    assert rows[5].error.startswith("MemoryError: injected fault: out of memory [faults.py:")
    settings = load_config(fault_sweep["params"]).settings_fingerprint()
    for row in rows.values():
        assert row.settings == settings and row.label == "test" and row.duration_s > 0
    for row in (rows[2], rows[3], rows[4], rows[5]):  # a failed cell has no numbers to mislead
        assert row.latency_ms_median is None and row.samples_s == [] and row.warmup_calls is None
    assert rows[1].error == "" and len(rows[1].samples_s) >= 4 and rows[1].latency_ms_median > 0


def test_the_sweep_goes_on_after_each_fault(fault_sweep):
    torn = fault_sweep["torn"]
    assert torn.returncode == -signal.SIGKILL  # the torn-write hook killed the sweep itself
    lines = fault_sweep["after_torn"].decode().split("\n")
    # four whole rows: the cells after the error, the segfault and the SIGKILL all ran and were kept
    assert [json.loads(line)["batch_size"] for line in lines[:4]] == [1, 2, 3, 4]
    assert lines[4].startswith('{"') and len(lines) == 5  # the 5th row (bs5 ran too) is half written


def test_torn_write_is_reported_ignored_and_the_torn_cell_measured_again(fault_sweep):
    resumed, results = fault_sweep["resumed"], fault_sweep["results"]
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"warning: {results}: skipped 1 unreadable line(s): [5]" in resumed.stderr.splitlines()
    assert resumed.stdout.splitlines()[-1] == f"5 cell processes: 4 already done, 1 oom -> {results}"
    assert "vit bs=5 eager #0: OOM MemoryError: injected fault: out of memory" in resumed.stdout
    before, after = fault_sweep["after_torn"], fault_sweep["after_resume"]
    assert after.startswith(before)  # finished rows and the torn half are left as they were
    assert after.count(b"\n") == 6  # 4 rows, the torn line (now ended), the re-measured bs5 row
    with pytest.warns(UserWarning, match=r"skipped 1 unreadable line\(s\): \[5\]"):
        loaded = read_results(results)
    assert loaded.skipped_lines == [5] and [r.batch_size for r in loaded.rows] == [1, 2, 3, 4, 5]


def test_rerun_repeats_no_cell_failed_cells_included(fault_sweep):
    again = fault_sweep["again"]
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stdout.splitlines()[-1] == f"5 cell processes: 5 already done, nothing new -> {fault_sweep['results']}"
    assert fault_sweep["results"].read_bytes() == fault_sweep["after_resume"]


def test_retry_failed_measures_only_the_failed_cells_again(fault_sweep, tmp_path):
    results = tmp_path / "results.jsonl"
    shutil.copy(fault_sweep["results"], results)
    subset = tiny_params(tmp_path, batch_sizes=[1, 2], iterations=4)  # bs1 ok, bs2 error; no faults now
    proc = run_cli("run", subset, "--results", results, "--retry-failed", "--quiet")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == f"2 cell processes: 1 already done, 1 ok -> {results}"
    with pytest.warns(UserWarning):
        rows = rows_by_batch(results)
    assert rows[2].status == "ok" and rows[2].error == "" and len(rows[2].samples_s) >= 4
    assert rows[1].to_json() == final_rows(fault_sweep)[1].to_json()  # not re-measured
    assert results.read_bytes().count(b"\n") == 7  # one row more, nothing else


def test_report_counts_failed_and_missing_cells_of_a_partial_run(fault_sweep, tmp_path):
    partial = tmp_path / "results.jsonl"
    partial.write_bytes(fault_sweep["after_torn"])  # the sweep as the kill left it: bs5 torn
    with pytest.warns(UserWarning, match=r"\[5\]"):
        rows = load_rows(partial)
    cfg = load_config(fault_sweep["params"])
    line = ProfileLine("test", "test/report.html", "params.yaml", "", len(cfg.cells()), rows)
    page = write_index([line, ProfileLine("gone", "g.html", "g.yaml", "", 3, load_rows(tmp_path / "none"))],
                       tmp_path / "index.html", None).read_text()
    assert "<td class=num>1</td><td class=num>3</td><td class=num>1</td>" in page  # ok, failed, missing
    assert "3 failed, 1 missing" in page
    assert "<td class=num>0</td><td class=num>0</td><td class=num>3</td>" in page  # no results file yet
    df = to_dataframe(rows)
    assert failures_table(df)[["batch_size", "status"]].values.tolist() == [
        [2, "ERROR"], [3, "CRASHED"], [4, "CRASHED"]]
    assert missing_cells(df, cfg.cells())[["batch_size", "mode"]].values.tolist() == [[5, "eager"]]


def test_compile_error_becomes_an_error_row(tmp_path):
    params = tiny_params(tmp_path, modes=["eager", "default"], iterations=4)
    results = tmp_path / "results.jsonl"
    proc = run_cli("run", params, "--results", results, "--quiet", env={FAULT: "vit/1/default=compile-error"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == f"2 cell processes: 0 already done, 1 error, 1 ok -> {results}"
    eager, row = read_results(results).rows
    assert eager.mode == "eager" and eager.status == "ok"
    assert row.mode == "default" and row.status == "error"
    assert row.error.startswith("InjectedFault: injected fault: compile-error [faults.py:")
    assert row.compile_s is None and row.latency_ms_median is None and row.weights == "random"


def test_signal_names_for_crash_messages():
    assert signal_name(signal.SIGSEGV) == "SIGSEGV" and signal_name(9) == "SIGKILL"
    assert signal_name(40) == "signal 40"  # a real-time signal has no name; the sweep must not crash


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


# --- failed cells in the report tables: the status, never a number --------------------------------

def _measured_row(model, mode, status="ok", ms=None, **extra):
    return make_row(model, 1, mode, ms, status, **extra)


def test_latency_table_shows_failed_statuses_never_numbers():
    df = to_dataframe([
        _measured_row("vit", "eager", ms=10.0),
        _measured_row("vit", "default", ms=8.0),
        _measured_row("beit", "eager", "crashed"),
        _measured_row("beit", "default", "oom"),
        # failed after its timing ran (e.g. a check that raised): the numbers must stay hidden
        _measured_row("convnext", "eager", "error", latency_ms_mean=4.0, samples_s=[0.004] * 5),
        _measured_row("resnet", "default", "timeout", latency_ms_mean=20.0),
    ])
    table = latency_table(df, 1)
    assert list(table.index) == ["Image Classification/ViT", "Image Classification/BeiT",
                                 "Image Classification/ConvNeXT", "Image Classification/ResNet"]
    assert table.values.tolist() == [["10.000", "8.000"], ["CRASHED", "OOM"], ["ERROR", "—"], ["—", "TIMEOUT"]]
    numeric = latency_table(df, 1, numeric=True)
    assert numeric.iloc[0].tolist() == pytest.approx([10.0, 8.0]) and int(numeric.isna().sum().sum()) == 6
    assert failures_table(df)["status"].tolist() == ["CRASHED", "OOM", "ERROR", "TIMEOUT"]


def test_latency_table_when_every_compile_failed():
    df = to_dataframe([_measured_row("vit", "eager", ms=10.0), _measured_row("vit", "default", "error")])
    assert latency_table(df, 1).values.tolist() == [["10.000", "ERROR"]]
