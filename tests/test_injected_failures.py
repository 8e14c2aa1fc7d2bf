"""Fault injection end to end: what each fault a cell can meet does to a sweep, through the CLI.

Faults come from the hooks in bench_utils/measure/injected_failures.py (BENCH_UTILS_FAULT) and results/writer.py
(BENCH_UTILS_TORN_WRITE), in real worker processes. Already covered elsewhere, not repeated here: a sweep SIGKILLed between rounds
(test_runner.py), a hung worker interrupted, killed or timed out (test_interrupts.py), the writer's
lock and a torn last line in-process (test_results.py), config messages in-process (test_config.py).
Several faults share one sweep to keep this file fast.
"""

import json
import re
import shutil
import signal

import pytest

from bench_utils.config.parameters_file import load_config
from bench_utils.measure.injected_failures import ENV_VAR as FAULT
from bench_utils.results.writer import TORN_WRITE_ENV_VAR as TORN
from bench_utils.report.index_page import ProfileLine, rows_or_refusal, write_index
from bench_utils.report.tables import failures_table, latency_table, missing_cells
from bench_utils.results.aggregate import to_dataframe
from bench_utils.results.rows import read_results
from conftest import KILLED, make_row, rows_by_batch, run_cli, summary_line, tiny_params

# bs1 ok; bs2..bs5 each meet one fault; the 5th row appended is torn (half written, sweep SIGKILLed).
CELL_FAULTS = "vit/2/eager=eager-error;vit/3/eager=segfault;vit/4/eager=sigkill;vit/5/eager=oom"


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
    assert rows[2].error.startswith("InjectedFault: injected fault: eager-error [injected_failures.py:")
    assert rows[2].weights == "random" and rows[2].num_params > 1000  # what ran before the fault is kept
    assert re.fullmatch(KILLED.format("SIGSEGV"), rows[3].error)
    assert re.fullmatch(KILLED.format("SIGKILL"), rows[4].error)
    assert rows[5].error.startswith("MemoryError: injected fault: out of memory [injected_failures.py:")
    settings = load_config(fault_sweep["params"]).settings_fingerprint()
    for row in rows.values():
        assert row.settings == settings and row.label == "test" and row.duration_s > 0
    for row in (rows[2], rows[3], rows[4], rows[5]):  # a failed cell has no numbers to mislead
        assert row.latency_ms_median is None and row.samples_s == [] and row.warmup_calls is None
        assert row.block_lengths == []
    assert rows[1].error == "" and len(rows[1].samples_s) >= 4 and rows[1].latency_ms_median > 0
    assert sum(rows[1].block_lengths) == len(rows[1].samples_s)


def test_the_sweep_goes_on_after_each_fault(fault_sweep):
    torn = fault_sweep["torn"]
    assert torn.returncode == -signal.SIGKILL  # the torn-write hook killed the sweep itself
    lines = fault_sweep["after_torn"].decode().split("\n")
    # four whole rows: the rounds after the error, the segfault and the SIGKILL all ran and were kept
    assert [json.loads(line)["batch_size"] for line in lines[:4]] == [1, 2, 3, 4]
    assert lines[4].startswith('{"') and len(lines) == 5  # the 5th row (bs5 ran too) is half written


def test_torn_write_is_reported_ignored_and_the_torn_cell_measured_again(fault_sweep):
    resumed, results = fault_sweep["resumed"], fault_sweep["results"]
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"warning: {results}: skipped 1 unreadable line(s): [5]" in resumed.stderr.splitlines()
    # the error, the segfault, the SIGKILL and the OOM: a re-run leaves them unless asked, and the line says so
    assert resumed.stdout.splitlines()[-1] == (f"1 round measured, 4 already done; 4 in the file failed: --retry-failed "
                                               f"measures them again -> {results}")
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
    assert again.stdout.splitlines()[-1] == (f"nothing measured, 5 already done; 4 in the file failed: --retry-failed "
                                             f"measures them again -> {fault_sweep['results']}")
    assert fault_sweep["results"].read_bytes() == fault_sweep["after_resume"]


def test_retry_failed_measures_only_the_failed_cells_again(fault_sweep, tmp_path):
    results = tmp_path / "results.jsonl"
    shutil.copy(fault_sweep["results"], results)
    subset = tiny_params(tmp_path, batch_sizes=[1, 2], iterations=4)  # bs1 ok, bs2 error; no faults now
    proc = run_cli("run", subset, "--results", results, "--retry-failed", "--quiet")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert summary_line(proc.stdout, "1 round measured, 1 already done", results), proc.stdout
    with pytest.warns(UserWarning):
        rows = rows_by_batch(results)
    assert rows[2].status == "ok" and rows[2].error == "" and len(rows[2].samples_s) >= 4
    assert rows[1].to_json() == final_rows(fault_sweep)[1].to_json()  # not re-measured
    assert results.read_bytes().count(b"\n") == 7  # one row more, nothing else


def test_report_counts_failed_and_missing_cells_of_a_partial_run(fault_sweep, tmp_path):
    partial = tmp_path / "results.jsonl"
    partial.write_bytes(fault_sweep["after_torn"])  # the sweep as the kill left it: bs5 torn
    with pytest.warns(UserWarning, match=r"\[5\]"):
        rows, refused = rows_or_refusal(partial)
    assert refused == ""  # a torn line is skipped, not a refusal
    cfg = load_config(fault_sweep["params"])
    line = ProfileLine("test", "test/report.html", "params.yaml", "", len(cfg.cells()), rows)
    page = write_index([line, ProfileLine("gone", "g.html", "g.yaml", "", 3, rows_or_refusal(tmp_path / "none")[0])],
                       tmp_path / "index.html", None).read_text()
    assert "<td class=num>1 ok<br>3 failed<br>1 missing</td>" in page  # ok, failed, missing
    assert "3 failed, 1 missing" in page
    assert "<td class=num>0 ok<br>0 failed<br>3 missing</td>" in page  # no results file yet
    df = to_dataframe(rows)
    assert failures_table(df)[["batch_size", "status"]].values.tolist() == [
        [2, "ERROR"], [3, "CRASHED"], [4, "CRASHED"]]
    assert missing_cells(df, cfg.cells())[["batch_size", "configuration"]].values.tolist() == [[5, "eager"]]


def test_compile_error_becomes_an_error_row(tmp_path):
    params = tiny_params(tmp_path, configurations=["eager", "default"], iterations=4)
    results = tmp_path / "results.jsonl"
    proc = run_cli("run", params, "--results", results, "--quiet", env={FAULT: "vit/1/default=compile-error"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    # one round: the compiled worker fails while preparing, the eager one times its blocks alone
    assert summary_line(proc.stdout, "1 round measured, 0 already done", results, not_ok=1), proc.stdout
    eager, row = read_results(results).rows
    assert eager.configuration == "eager" and eager.status == "ok" and sum(eager.block_lengths) == len(eager.samples_s)
    assert row.configuration == "default" and row.status == "error"
    assert row.error.startswith("InjectedFault: injected fault: compile-error [injected_failures.py:")
    assert row.compile_s is None and row.latency_ms_median is None and row.weights == "random"


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
    assert list(table.index) == ["ViT-B/16", "BEiT-B/16", "ConvNeXt-L", "ResNet-50"]
    assert table.values.tolist() == [["10.0", "8.00"], ["CRASHED", "OOM"], ["ERROR", "—"], ["—", "TIMEOUT"]]
    assert failures_table(df)["status"].tolist() == ["CRASHED", "OOM", "ERROR", "TIMEOUT"]


def test_latency_table_when_every_compile_failed():
    df = to_dataframe([_measured_row("vit", "eager", ms=10.0), _measured_row("vit", "default", "error")])
    assert latency_table(df, 1).values.tolist() == [["10.0", "ERROR"]]
