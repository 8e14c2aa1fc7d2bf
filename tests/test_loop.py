"""The sweep engine: rounds in real worker processes on CPU (tiny models, eager + default, two rounds
per cell), and one round's choreography with stand-in workers (no process, no torch)."""

import dataclasses
import math
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import datetime as dt

import bench_utils.sweep.loop as loop_module
import bench_utils.sweep.rounds as rounds_module
from bench_utils.config.bench_config import BenchConfig
from bench_utils.config.parameters_file import load_config
from bench_utils.results.aggregate import cells, load_dataframe
from bench_utils.results.rows import BenchResult, cell_fields, read_results
from bench_utils.results.stats import block_medians_ms
from bench_utils.sweep.jobs import Round, SettingsMismatchError, read_cell_rows
from bench_utils.sweep.loop import SweepSummary, run_sweep
from conftest import REPO, run_cli, summary_line, tiny_params
from test_rounds import FakeWorker

BLOCKS = 2


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    params = tiny_params(tmp, models=["vit", "resnet"], batch_sizes=[1], configurations=["eager", "default"],
                         iterations=8, repeats=3, blocks=BLOCKS, settle_s=0.05)
    results = tmp / "results.jsonl"
    proc = run_cli("run", params, "--results", results)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return params, results, proc


def test_every_process_yields_a_complete_row_in_round_order(sweep):
    params, results, proc = sweep
    rows = read_results(results).rows
    # round r of every cell before round r + 1; within a round, one row per mode
    assert [(r.model, r.batch_size, r.configuration, r.repeat) for r in rows] == load_config(params).runs() == [
        (model, 1, mode, repeat) for repeat in range(3) for model in ("vit", "resnet") for mode in ("eager", "default")]
    for row in rows:
        assert row.status == "ok", row.error
        assert row.weights == "random" and "tiny config" in row.weights_note
        assert row.device == "cpu" and row.env["torch"] and row.env["transformers"] and row.env["device_name"]
        assert row.env["allocator"].startswith("glibc, freed memory kept")  # keep_freed_memory, the default
        # `blocks` blocks of at least ceil(iterations / blocks) calls and min_time_s / blocks seconds each
        assert len(row.block_lengths) == BLOCKS and sum(row.block_lengths) == len(row.samples_s)
        assert min(row.block_lengths) >= 4 and len(row.samples_s) >= 8
        assert all(s > 0 for s in row.samples_s) and sum(row.samples_s) >= 0.09
        assert row.latency_ms_mean == pytest.approx(sum(row.samples_s) / len(row.samples_s) * 1000)
        assert row.repeat > 0 or (row.warmup_calls >= 1 and row.warmup_s > 0)  # later rounds: warm already
        assert row.peak_mem_mb > 100  # the worker's peak RSS: torch alone is more than this
        assert row.num_params > 1000
        # freed memory kept: a timed call of a tiny model touches no new page, or hardly one
        assert row.page_faults_per_call is not None and 0 <= row.page_faults_per_call < 100


def test_a_rounds_modes_run_side_by_side_each_in_a_worker_of_its_own(sweep):
    _, results, _ = sweep
    rows = read_results(results).rows
    for eager, compiled in zip(rows[::2], rows[1::2]):  # the two processes of one round overlap in time
        assert (eager.model, eager.repeat) == (compiled.model, compiled.repeat)
        spans = [(dt.datetime.fromisoformat(row.started_at).timestamp(), row.duration_s) for row in (eager, compiled)]
        # started_at is to the second: each process began before the other ended, within that second
        assert all(start <= other + duration + 1 for start, _ in spans for other, duration in spans)
    logs = results.parent / "logs"
    # every round in a process of its own, forked from the one round 0 prepared (a CPU's template): no
    # fresh start at the first pass's end on a CPU (jobs.needs_fresh_workers)
    assert [row.process_round for row in rows] == [0] * 4 + [1] * 4 + [2] * 4
    assert [row.template_round for row in rows] == [0] * 12
    for row in rows:
        text = (logs / f"{row.model}-bs1-{row.configuration}-r{row.template_round}.log").read_text()
        commands = [line for line in text.splitlines() if line.startswith("worker: ")]
        # prepared once (no worker ever runs a second mode); each round's fork times its blocks when asked,
        # then its row, and in round 1 (profiler: true; the first after the selection round) the profiler's
        # pass once the row is safe with the runner; released, the template forks the next round's; then
        # the worker is asked to exit
        def forked_round(r, *more):
            return [*[f"worker: block (round {r}, forked)"] * BLOCKS, f"worker: finish (round {r}, forked)",
                    *[f"worker: {command} (round {r}, forked)" for command in more]]

        assert commands == ["worker: cell", *forked_round(0, "release"), "worker: round",
                            *forked_round(1, "profile", "release"), "worker: round", *forked_round(2, "exit")]


def test_cells_combine_their_rounds_and_read_one_eager_number(sweep):
    _, results, _ = sweep
    rows = read_results(results).rows
    df = load_dataframe(results).set_index(["model", "mode"])
    for model in ("vit", "resnet"):
        eager, compiled = df.loc[(model, "eager")], df.loc[(model, "default")]
        assert eager["repeats"] == compiled["repeats"] == 3 and bool(compiled["between_process"])
        assert eager["latency_ms_ci95_low"] <= eager["latency_ms_median"] <= eager["latency_ms_ci95_high"]
        assert compiled["eager_ms_median"] == eager["latency_ms_median"]  # the eager cell's, exactly
        # the speedup pairs block i of both modes in each round, then averages the rounds (log scale)
        rounds = []
        for repeat in (0, 1, 2):
            e, c = [next(r for r in rows if (r.model, r.configuration, r.repeat) == (model, m, repeat))
                    for m in ("eager", "default")]
            ratios = block_medians_ms(e.samples_s, e.block_lengths) / block_medians_ms(c.samples_s, c.block_lengths)
            rounds.append(np.log(ratios).mean())
        assert compiled["speedup"] == pytest.approx(math.exp(np.mean(rounds)))
        assert compiled["speedup_ci95_low"] <= compiled["speedup"] <= compiled["speedup_ci95_high"]
        record = next(r for r in cells(rows) if (r["model"], r["mode"]) == (model, "default"))
        assert record["paired_rounds"] == 3 and record["speedup"] == compiled["speedup"]
        assert record["speedup_halfwidth"] == pytest.approx(
            math.sqrt(compiled["speedup_ci95_high"] / compiled["speedup_ci95_low"]) - 1)


def test_compiled_rows_carry_compile_accuracy_and_graph_facts(sweep):
    _, results, _ = sweep
    compiled = [r for r in read_results(results).rows if r.configuration == "default"]
    assert len(compiled) == 6
    for row in compiled:
        # what describes the process's compiled model holds for each of its rounds
        assert row.accuracy_ok and row.max_abs_diff < 1e-3 and row.task_agreement == 1.0
        assert row.graph_breaks == 0 and row.graph_count >= 1 and row.recompiles == 0
        if row.repeat == 0:  # the round that compiled
            assert row.compile_s > 0.1  # tracing + code generation + the first call, seconds
            assert row.fx_cache_hits + row.fx_cache_misses >= 1  # Inductor's cache was asked for the graph
            assert row.compile_warm_s is None and row.warmup_calls >= 1
        else:  # a process forked from round 0's prepared one: warmed up, never compiled; before the first
            # of them, the template compiled again warm in another fork (the race kept it)
            assert row.compile_s is None and row.fx_cache_hits is None and row.warmup_calls >= 1
            assert (row.process_round, row.template_round) == (row.repeat, 0)
            assert (row.compile_warm_s is not None) == (row.repeat == 1)


def test_progress_and_one_line_per_process(sweep):
    _, results, proc = sweep
    # the progress bar: the sweep's time against a total fixed when it starts
    assert "%|" in proc.stderr and re.search(r"\d\d:\d\d of about \d+ min", proc.stderr)
    lines = [line for line in proc.stdout.splitlines() if " ms median of " in line]
    assert len(lines) == 12
    assert any(line.startswith("vit bs=1 default #0: ") and "compile" in line for line in lines)
    assert any(line.startswith("vit bs=1 default #1: ") and "compile" not in line for line in lines)
    assert any(line.startswith("vit bs=1 default #2: ") and "compile" not in line for line in lines)
    last = proc.stdout.strip().splitlines()[-1]
    assert summary_line(last, "6 rounds measured, 0 already done", results), last


def test_rerun_resumes_without_repeating_rounds(sweep):
    params, results, _ = sweep
    before = results.read_bytes()
    proc = run_cli("run", params, "--results", results)
    assert proc.returncode == 0 and proc.stdout.strip() == f"nothing measured, 6 already done -> {results}"
    assert results.read_bytes() == before


def test_changed_settings_refuse_to_mix_into_the_same_file(sweep, tmp_path):
    params, results, _ = sweep
    other = tiny_params(tmp_path, models=["vit"], batch_sizes=[1], configurations=["eager"], iterations=9)
    with pytest.raises(SettingsMismatchError, match="other settings"):
        read_cell_rows(load_config(other), results)
    proc = run_cli("run", other, "--results", results)
    assert proc.returncode == 2 and "other settings" in proc.stderr


def test_a_resume_on_another_number_of_cpus_is_refused_and_says_both(sweep, tmp_path):
    """The file's rows measured on one CPU more than this process may use (as if under another taskset):
    their rounds would join this run's in the same cells."""
    import json

    from bench_utils.measure import environment

    params, results, _ = sweep
    moved = tmp_path / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for row in rows:
        row["env"]["cpu_count"] = environment.ALLOWED_CPUS + 1
    moved.write_text("".join(json.dumps(row) + "\n" for row in rows))
    proc = run_cli("run", params, "--results", moved)
    theirs, ours = environment.ALLOWED_CPUS + 1, environment.ALLOWED_CPUS
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert f"another number of CPUs ({theirs} cores there, {ours} core{'' if ours == 1 else 's'} here" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_resume_under_another_omp_num_threads_is_refused_and_says_both(sweep, tmp_path):
    """Rounds measured at five torch threads, resumed with OMP_NUM_THREADS=1: one cell would blend both
    (the page said "torch threads 1"), as a resume under another taskset would; the same threads resume."""
    import json

    params, results, _ = sweep
    moved = tmp_path / "results.jsonl"

    def rows_at(threads: int) -> str:
        rows = [json.loads(line) for line in results.read_text().splitlines()]
        return "".join(json.dumps(row | {"env": row["env"] | {"torch_threads": threads}}) + "\n" for row in rows)

    moved.write_text(rows_at(5))
    proc = run_cli("run", params, "--results", moved, env={"OMP_NUM_THREADS": "1"})
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert ("holds rows measured with another number of torch threads (5 threads there, 1 thread here: "
            "OMP_NUM_THREADS or MKL_NUM_THREADS)") in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and moved.read_text() == rows_at(5)
    moved.write_text(rows_at(1))
    proc = run_cli("run", params, "--results", moved, env={"OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0 and "nothing measured, 6 already done" in proc.stdout, proc.stderr[-2000:]


def test_threads_differing_compares_cpu_rows_of_this_cpu_only():
    from bench_utils.sweep.jobs import threads_differing
    from conftest import FIXTURE_ENV, make_row

    rows = [make_row(env=FIXTURE_ENV | {"cpu": "X", "torch_threads": 1}),
            make_row(env=FIXTURE_ENV | {"cpu": "X", "torch_threads": 1}, device="cuda"),
            make_row(env=FIXTURE_ENV | {"cpu": "Y", "torch_threads": 4}), make_row(status="timeout", env={})]
    assert threads_differing(rows, "X", 2) == "1 thread there, 2 threads here"
    assert threads_differing(rows, "X", 1) == ""
    assert threads_differing(rows[1:2], "X", 2) == ""  # a GPU worker sets its own threads
    assert threads_differing(rows, "Z", 2) == "" and threads_differing(rows, "X", None) == ""


def test_cores_differing_compares_rows_of_this_cpu_only():
    from bench_utils.sweep.jobs import cores_differing
    from conftest import FIXTURE_ENV, make_row

    rows = [make_row(env=FIXTURE_ENV | {"cpu": "X", "cpu_count": 1}), make_row(env=FIXTURE_ENV | {"cpu": "Y", "cpu_count": 4}),
            make_row(status="timeout", env={})]
    assert cores_differing(rows, "X", 2) == "1 core there, 2 cores here"
    assert cores_differing(rows, "X", 1) == ""  # as measured
    assert cores_differing(rows, "Z", 2) == ""  # another CPU model's rows are cells of their own
    assert cores_differing(rows, "X", None) == ""  # this process's count unknown

def test_sweep_killed_between_rounds_loses_and_repeats_nothing(tmp_path):
    """The kill comes at a point the test chooses: the third round's worker hangs (a fault) after the
    first two rounds' rows are written, and the sweep is killed then."""
    from bench_utils.measure.injected_failures import ENV_VAR as FAULT

    params = tiny_params(tmp_path, batch_sizes=[1, 2, 3], iterations=4)
    results = tmp_path / "results.jsonl"
    hung = tmp_path / "logs" / "vit-bs3-eager-r0.log"
    sweep = subprocess.Popen([sys.executable, "-m", "bench_utils", "run", str(params), "--results",
                              str(results), "--quiet"], cwd=REPO, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env={**os.environ, FAULT: "vit/3/eager=hang"})
    deadline = time.time() + 600  # a guard against a sweep that never gets there, not a margin
    while time.time() < deadline and not (hung.exists() and "injected fault: hang" in hung.read_text()):
        time.sleep(0.2)
    sweep.send_signal(signal.SIGKILL)
    sweep.wait()
    first = results.read_text().splitlines()
    assert len(first) == 2
    proc = run_cli("run", params, "--results", results)
    assert proc.returncode == 0, proc.stderr[-2000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert summary_line(last, "1 round measured, 2 already done", results), last
    lines = results.read_text().splitlines()
    assert lines[: len(first)] == first  # finished rows intact
    assert sorted(r.batch_size for r in read_results(results).rows) == [1, 2, 3]
    assert len(lines) == 3  # nothing measured twice


def test_the_summary_line_counts_rounds_what_failed_and_the_timed_share(tmp_path):
    summary = SweepSummary(tmp_path / "r.jsonl", total=6, skipped=2, rounds=2, extra_rounds=1, seconds=200.0)
    summary.count([BenchResult(**cell_fields(BenchConfig(), "vit", 1, mode, "cpu", repeat), status=status,
                               samples_s=[2.5] * 4, compile_s=None if mode == "eager" else 40.0)
                   for mode, repeat, status in (("eager", 0, "ok"), ("default", 0, "ok"), ("default", 1, "ok"),
                                                ("eager", 1, "crashed"))])
    # 40 s of samples; round 0's compile (40 s) is the first compile, round 1's a warm one
    assert (summary.statuses, summary.timed_s, summary.cold_compile_s) == ({"ok": 3, "crashed": 1}, 40.0, 40.0)
    summary.not_retried = 1
    assert summary.line() == (f"2 rounds measured (1 extra for precision), 2 already done; 1 in the file failed: "
                              f"--retry-failed measures them again; timed calls 20% of 200 s (25% without the first compiles) -> "
                              f"{tmp_path / 'r.jsonl'}")
    nothing = SweepSummary(tmp_path / "r.jsonl", total=6, skipped=6, seconds=0.5)
    assert nothing.line() == f"nothing measured, 6 already done -> {tmp_path / 'r.jsonl'}"
    # the budget's left-out configurations are rows no process measured: said apart from the rounds
    fitted_out = SweepSummary(tmp_path / "r.jsonl", total=3, rounds=1, study_runs=2, seconds=0.0)
    fitted_out.count([BenchResult(**cell_fields(BenchConfig(), "vit", 1, mode, "cpu", 0), status=status,
                                  samples_s=[] if status == "skipped" else [0.1])
                      for mode, status in (("eager", "ok"), ("default", "ok"), ("max-autotune", "skipped"))])
    assert fitted_out.line() == (f"1 round and 2 study processes measured, 0 already done; 1 configuration left out "
                                 f"to fit the budget -> {tmp_path / 'r.jsonl'}")
    assert len(summary.line()) - len(str(tmp_path / "r.jsonl")) < 200  # a line a user reads


def test_in_process_sweep_api(tmp_path):
    cfg = load_config(tiny_params(tmp_path, iterations=3))
    summary = run_sweep(cfg, tmp_path / "r.jsonl", progress=False)
    assert summary.statuses == {"ok": 1} and summary.skipped == 0 and summary.total == 1
    assert 0 < summary.timed_s < summary.seconds
    again = run_sweep(cfg, tmp_path / "r.jsonl", progress=False)  # no studies asked for: the cells only
    assert again.skipped == 1 and again.statuses == {}


# --- the loop with stand-in workers or launchers ---------------------------------------------------

def test_after_round_runs_after_each_round_outside_the_budget(monkeypatch, tmp_path):
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), configurations=("eager",), blocks=1, settle_s=0.0,
                      repeats=2, target_halfwidth=0.0)
    monkeypatch.setattr(rounds_module, "Worker", lambda log_path, timeout_s, device="cpu": FakeWorker([], {}, cfg))
    seen, clock = [], {"hook_s": 0.0}
    real = time.perf_counter
    monkeypatch.setattr(loop_module.time, "perf_counter", lambda: real() + clock["hook_s"])

    def aside(round_):  # a hook that takes 1,000 s of the sweep's clock
        seen.append(round_.repeat)
        clock["hook_s"] += 1000.0

    summary = run_sweep(cfg, tmp_path / "r.jsonl", progress=False, after_round=aside)
    assert seen == [0, 1] and summary.seconds < 1000.0  # the hook's 2,000 s are not the sweep's


class ListLauncher:
    """Stands in for a launcher: records the units it is given, answers each with made-up rows."""

    capacity = 1

    def __init__(self, cfg):
        self.cfg, self.units, self.started = cfg, [], None

    def start(self, unit, keep):
        self.started = unit

    def finished(self):
        from bench_utils.sweep.jobs import failure_row
        from synthetic import synthetic_round

        unit, self.started = self.started, None
        self.units.append(unit.name)
        if isinstance(unit, Round):  # made-up ok rows: the race keeps its contender
            return [(unit, synthetic_round(self.cfg, unit, "stand-in", None, True))]
        return [(unit, [failure_row(self.cfg, unit, "error", "stand-in", 0.1)])]

    def take_ended_rows(self):
        return []

    def close(self):
        return []


def test_a_profile_runs_its_cells_then_its_studies_through_one_loop(tmp_path):
    from bench_utils.results.studies import study

    cfg = BenchConfig(label="test", models=("vit",), configurations=("eager", "default"), repeats=2, target_halfwidth=0.0,
                      serving_batch_sizes=(1, 4))
    launcher = ListLauncher(cfg)
    summary = run_sweep(cfg, tmp_path / "r.jsonl", progress=False, launcher=launcher)
    assert launcher.units == ["vit-bs1-r0", "vit-bs1-r1", "serving-vit-eager", "serving-vit-static",
                              "serving-vit-dynamic", "serving-vit-auto"]  # the cells first, then the study
    assert summary.total == 6 and summary.statuses == {"ok": 4, "error": 4}
    assert len(read_results(tmp_path / "r.jsonl").rows) == 4  # a study's rows go to its own file
    assert [r.setting for r in read_rows_of(study("serving"), tmp_path / "r.jsonl")] == [
        "eager", "static", "dynamic", "auto"]
    again = run_sweep(cfg, tmp_path / "r.jsonl", progress=False, launcher=ListLauncher(cfg))
    assert again.skipped == 6 and again.statuses == {}  # resumed: failed studies too, without --retry-failed
    retried = ListLauncher(cfg)
    run_sweep(cfg, tmp_path / "r.jsonl", retry_failed=True, progress=False, launcher=retried)
    assert len(retried.units) == 4  # the failed study jobs only


def read_rows_of(each, results_path):
    from bench_utils.results.rows import read_rows

    return read_rows(each.path(results_path), each.row).rows


class ClockLauncher(ListLauncher):
    """ListLauncher whose rounds each take ROUND_S on a made-up clock (their rows' started_at), so the
    budget is met after a known number of rounds whatever the machine's speed."""

    def __init__(self, cfg, clock):
        super().__init__(cfg)
        self.clock = clock

    def finished(self):
        import dataclasses

        from synthetic import ROUND_S

        done = super().finished()
        stamp = dt.datetime(2026, 11, 24, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=self.clock[0])
        self.clock[0] += ROUND_S + 1.0  # a second between rounds: writing, the next round's start
        return [(unit, [dataclasses.replace(row, started_at=stamp.isoformat(timespec="milliseconds"))
                        for row in rows]) for unit, rows in done]


def test_the_budget_is_the_profiles_a_rerun_of_a_finished_sweep_adds_nothing(tmp_path):
    from synthetic import ROUND_S

    # a target no cell reaches and room for 30 rounds: only the budget stops the sweep (8 rounds of 2 s
    # and the 7 seconds between them: the sweep's own work between rows counts on its clock)
    cfg = BenchConfig(label="test", models=("vit",), configurations=("eager", "default"), repeats=3,
                      target_halfwidth=0.001, budget_min=(8 * ROUND_S + 7 * 1.0) / 60, max_repeats=30)
    clock = [0.0]
    first = run_sweep(cfg, tmp_path / "r.jsonl", progress=False, launcher=ClockLauncher(cfg, clock))
    rows = read_results(tmp_path / "r.jsonl").rows
    assert first.extra_rounds == 5 and {row.repeat for row in rows} == set(range(8))  # 8 x 2 s + 7 x 1 s
    again = ClockLauncher(cfg, clock)
    second = run_sweep(cfg, tmp_path / "r.jsonl", progress=False, launcher=again)
    assert again.units == [] and second.extra_rounds == 0  # the budget is spent: the same answer as `plan`
    assert len(read_results(tmp_path / "r.jsonl").rows) == len(rows)
    more = dataclasses.replace(cfg, budget_min=(10 * ROUND_S + 9 * 1.0) / 60)  # a larger budget buys more rounds
    third = run_sweep(more, tmp_path / "r.jsonl", progress=False, launcher=ClockLauncher(more, clock))
    assert third.extra_rounds == 2


def test_every_launcher_satisfies_the_launcher_protocol(tmp_path):
    """The loop's interface is one Protocol (sweep/launchers/__init__.py), not prose: each launcher has
    its methods with their parameters."""
    import inspect

    from bench_utils.sweep.launchers import Launcher
    from bench_utils.sweep.launchers.local import LocalLauncher
    from bench_utils.sweep.launchers.ray import RayLauncher

    methods = ("start", "finished", "take_ended_rows", "close")
    for launcher in (LocalLauncher, RayLauncher):
        for name in methods:
            assert list(inspect.signature(getattr(launcher, name)).parameters) == list(
                inspect.signature(getattr(Launcher, name)).parameters), (launcher.__name__, name)
    cfg = load_config(tiny_params(tmp_path, models=["vit"], configurations=["eager"]))
    assert isinstance(LocalLauncher(cfg, tmp_path / "r.jsonl"), Launcher)
    assert "capacity" in inspect.getsource(RayLauncher.__init__)


def test_the_progress_bar_counts_the_sweeps_seconds_against_a_total_that_does_not_move(tmp_path):
    """One bar whose total is fixed when the sweep starts (the budget extra rounds fill, or plan's first
    pass if longer): extra rounds move it on, never its total; a resume starts where the rows' clock stands."""
    from types import SimpleNamespace

    from bench_utils.sweep.loop import SweepClock

    cfg = load_config(tiny_params(tmp_path, configurations=["eager", "default"], target_halfwidth=0.05,
                                  budget_min=5.0))
    clock = SweepClock.of(cfg, tmp_path / "r.jsonl", [])
    assert clock.spent_s == 0 and clock.total_s == 300.0  # the budget: a tiny profile's first pass is shorter
    bar = SimpleNamespace(n=0, refresh=lambda: None)
    clock.show(bar, 120.4)
    assert bar.n == 120
    clock.show(bar, 900.0)  # a slower sweep than planned: full, the total unmoved
    assert bar.n == 300 and clock.total_s == 300.0
