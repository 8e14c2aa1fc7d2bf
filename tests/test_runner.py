"""The sweep engine end to end on CPU: tiny models, eager + default, two processes per cell, real subprocesses."""

import signal
import subprocess
import sys
import time

import pytest

from bench_utils.config.parameters_file import load_config
from bench_utils.results.aggregate import load_dataframe
from bench_utils.results.rows import read_results
from bench_utils.sweep.runner import SettingsMismatchError, pending_runs, run_sweep
from conftest import REPO, run_cli, tiny_params


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    params = tiny_params(tmp, models=["vit", "resnet"], batch_sizes=[1], modes=["eager", "default"],
                         iterations=8, repeats=2)
    results = tmp / "results.jsonl"
    proc = run_cli("run", params, "--results", results)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return params, results, proc


def test_every_process_yields_a_complete_row_in_alternating_order(sweep):
    params, results, proc = sweep
    rows = read_results(results).rows
    # one pass over every cell per repeat: a cell's processes are spread over the run, eager next to compiled
    assert [(r.model, r.batch_size, r.mode, r.repeat) for r in rows] == load_config(params).runs() == [
        ("vit", 1, "eager", 0), ("vit", 1, "default", 0), ("resnet", 1, "eager", 0), ("resnet", 1, "default", 0),
        ("vit", 1, "eager", 1), ("vit", 1, "default", 1), ("resnet", 1, "eager", 1), ("resnet", 1, "default", 1)]
    for row in rows:
        assert row.status == "ok", row.error
        assert row.weights == "random" and "tiny config" in row.weights_note
        assert row.device == "cpu" and row.env["torch"] and row.env["transformers"] and row.env["device_name"]
        # at least `iterations` calls and at least min_time_s (0.1 s) of them
        assert len(row.samples_s) >= 8 and all(s > 0 for s in row.samples_s) and sum(row.samples_s) >= 0.09
        assert row.latency_ms_mean == pytest.approx(sum(row.samples_s) / len(row.samples_s) * 1000)
        assert row.warmup_calls >= 1 and row.warmup_s > 0
        assert row.peak_mem_mb > 100  # the cell process's peak RSS: torch alone is more than this
        assert row.num_params > 1000


def test_cells_combine_their_processes_and_read_one_eager_number(sweep):
    _, results, _ = sweep
    df = load_dataframe(results).set_index(["model", "mode"])
    for model in ("vit", "resnet"):
        eager, compiled = df.loc[(model, "eager")], df.loc[(model, "default")]
        assert eager["repeats"] == compiled["repeats"] == 2 and bool(compiled["between_process"])
        assert eager["latency_ms_ci95_low"] <= eager["latency_ms_median"] <= eager["latency_ms_ci95_high"]
        assert compiled["eager_ms_median"] == eager["latency_ms_median"]  # the eager cell's, exactly
        assert compiled["speedup"] == pytest.approx(eager["latency_ms_median"] / compiled["latency_ms_median"])
        assert compiled["speedup_ci95_low"] <= compiled["speedup"] <= compiled["speedup_ci95_high"]


def test_compiled_rows_carry_compile_accuracy_and_graph_facts(sweep):
    _, results, _ = sweep
    compiled = [r for r in read_results(results).rows if r.mode == "default"]
    assert len(compiled) == 4
    for row in compiled:
        assert row.compile_s > 0.1  # tracing + code generation + the first call, seconds
        assert row.fx_cache_hits + row.fx_cache_misses >= 1  # Inductor's cache was asked for the graph
        assert row.accuracy_ok and row.max_abs_diff < 1e-3 and row.task_agreement == 1.0
        assert row.graph_breaks == 0 and row.graph_count >= 1 and row.recompiles == 0


def test_progress_and_one_line_per_process(sweep):
    _, results, proc = sweep
    assert "%|" in proc.stderr and "process/s" in proc.stderr  # the progress bar
    lines = [line for line in proc.stdout.splitlines() if " ms median of " in line]
    assert len(lines) == 8
    assert any(line.startswith("vit bs=1 default #1: ") and "compile" in line for line in lines)
    assert proc.stdout.strip().endswith(f"8 cell processes: 0 already done, 8 ok -> {results}")


def test_rerun_resumes_without_repeating_cells(sweep):
    params, results, _ = sweep
    before = results.read_bytes()
    proc = run_cli("run", params, "--results", results)
    assert proc.returncode == 0 and "8 already done, nothing new" in proc.stdout
    assert results.read_bytes() == before


def test_changed_settings_refuse_to_mix_into_the_same_file(sweep, tmp_path):
    params, results, _ = sweep
    other = tiny_params(tmp_path, models=["vit"], batch_sizes=[1], modes=["eager"], iterations=9)
    with pytest.raises(SettingsMismatchError, match="other settings"):
        pending_runs(load_config(other), results)
    proc = run_cli("run", other, "--results", results)
    assert proc.returncode == 2 and "other settings" in proc.stderr


def test_sweep_killed_between_cells_loses_and_repeats_nothing(tmp_path):
    params = tiny_params(tmp_path, batch_sizes=[1, 2, 3], iterations=4)
    results = tmp_path / "results.jsonl"
    sweep = subprocess.Popen([sys.executable, "-m", "bench_utils", "run", str(params), "--results",
                              str(results), "--quiet"], cwd=REPO, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline and not (results.exists() and results.read_text().count("\n") >= 1):
        time.sleep(0.2)
    sweep.send_signal(signal.SIGKILL)
    sweep.wait()
    first = results.read_text().splitlines()
    assert 1 <= len(first) < 3
    proc = run_cli("run", params, "--results", results)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = results.read_text().splitlines()
    assert lines[: len(first)] == first  # finished rows intact
    assert sorted(r.batch_size for r in read_results(results).rows) == [1, 2, 3]
    assert len(lines) == 3  # nothing measured twice


def test_in_process_sweep_api(tmp_path):
    cfg = load_config(tiny_params(tmp_path, iterations=3))
    summary = run_sweep(cfg, tmp_path / "r.jsonl", progress=False)
    assert summary.statuses == {"ok": 1} and summary.skipped == 0
    assert run_sweep(cfg, tmp_path / "r.jsonl", progress=False).skipped == 1
