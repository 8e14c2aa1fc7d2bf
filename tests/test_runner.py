"""The sweep engine: rounds in real worker processes on CPU (tiny models, eager + default, two rounds
per cell), and one round's choreography with stand-in workers (no process, no torch)."""

import math
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import bench_utils.sweep.runner as runner
import bench_utils.sweep.sessions as sessions_module
from bench_utils.config.bench_config import BenchConfig
from bench_utils.config.parameters_file import load_config
from bench_utils.results.aggregate import cells, load_dataframe
from bench_utils.results.rows import BenchResult, cell_fields, read_results
from bench_utils.results.stats import block_medians_ms
from bench_utils.sweep.jobs import Round, read_cell_rows
from bench_utils.sweep.runner import SettingsMismatchError, run_profile, run_sweep
from bench_utils.sweep.workers import WorkerLost
from conftest import REPO, run_cli, summary_line, tiny_params

BLOCKS = 2


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    params = tiny_params(tmp, models=["vit", "resnet"], batch_sizes=[1], modes=["eager", "default"],
                         iterations=8, repeats=3, blocks=BLOCKS, settle_s=0.05)
    results = tmp / "results.jsonl"
    proc = run_cli("run", params, "--results", results)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return params, results, proc


def test_every_process_yields_a_complete_row_in_round_order(sweep):
    params, results, proc = sweep
    rows = read_results(results).rows
    # round r of every cell before round r + 1; within a round, one row per mode
    assert [(r.model, r.batch_size, r.mode, r.repeat) for r in rows] == load_config(params).runs() == [
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


def test_a_rounds_modes_run_side_by_side_each_in_a_worker_of_its_own(sweep):
    _, results, _ = sweep
    rows = read_results(results).rows
    for eager, compiled in zip(rows[::2], rows[1::2]):  # the two processes of one round
        assert (eager.model, eager.repeat) == (compiled.model, compiled.repeat)
        assert eager.started_at == compiled.started_at or abs(eager.duration_s - compiled.duration_s) < 5
    logs = results.parent / "logs"
    # rounds 0 and 1 in the workers round 0 started; the first pass's last round (2) in fresh ones
    assert [row.process_round for row in rows] == [0] * 8 + [2] * 4
    for row in rows:
        text = (logs / f"{row.model}-bs1-{row.mode}-r{row.process_round}.log").read_text()
        commands = [line for line in text.splitlines() if line.startswith("worker: ")]
        # prepared once (no worker ever runs a second mode), its blocks timed when asked, then its row, and
        # in round 0 (profile: true) the profiler's pass once the row is safe with the runner; round 1 in
        # the same process, its blocks only; then the worker is asked to exit
        first = ["worker: cell", *["worker: block"] * BLOCKS, "worker: finish"]
        if row.process_round == 0:
            assert commands == [*first, "worker: profile", "worker: round", *["worker: block"] * BLOCKS,
                                "worker: finish", "worker: exit"]
        else:
            assert commands == [*first, "worker: exit"]


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
            e, c = [next(r for r in rows if (r.model, r.mode, r.repeat) == (model, m, repeat))
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
    compiled = [r for r in read_results(results).rows if r.mode == "default"]
    assert len(compiled) == 6
    for row in compiled:
        # what describes the process's compiled model holds for each of its rounds
        assert row.accuracy_ok and row.max_abs_diff < 1e-3 and row.task_agreement == 1.0
        assert row.graph_breaks == 0 and row.graph_count >= 1 and row.recompiles == 0
        if row.repeat != 1:  # the rounds that compiled: round 0 (the first compile), round 2 (fresh workers)
            assert row.compile_s > 0.1  # tracing + code generation + the first call, seconds
            assert row.fx_cache_hits + row.fx_cache_misses >= 1  # Inductor's cache was asked for the graph
            assert row.warmup_calls >= 1
        else:  # a later round of the same process: neither compiled nor warmed up again
            assert row.compile_s is None and row.fx_cache_hits is None and row.warmup_calls is None


def test_progress_and_one_line_per_process(sweep):
    _, results, proc = sweep
    assert "%|" in proc.stderr and "round/s" in proc.stderr  # the progress bar, by round
    lines = [line for line in proc.stdout.splitlines() if " ms median of " in line]
    assert len(lines) == 12
    assert any(line.startswith("vit bs=1 default #0: ") and "compile" in line for line in lines)
    assert any(line.startswith("vit bs=1 default #1: ") and "compile" not in line for line in lines)
    assert any(line.startswith("vit bs=1 default #2: ") and "compile" in line for line in lines)
    last = proc.stdout.strip().splitlines()[-1]
    assert summary_line(last, "6 jobs: 0 already done, 12 ok", results), last


def test_rerun_resumes_without_repeating_rounds(sweep):
    params, results, _ = sweep
    before = results.read_bytes()
    proc = run_cli("run", params, "--results", results)
    assert proc.returncode == 0 and proc.stdout.strip() == f"6 jobs: 6 already done, nothing new -> {results}"
    assert results.read_bytes() == before


def test_changed_settings_refuse_to_mix_into_the_same_file(sweep, tmp_path):
    params, results, _ = sweep
    other = tiny_params(tmp_path, models=["vit"], batch_sizes=[1], modes=["eager"], iterations=9)
    with pytest.raises(SettingsMismatchError, match="other settings"):
        read_cell_rows(load_config(other), results)
    proc = run_cli("run", other, "--results", results)
    assert proc.returncode == 2 and "other settings" in proc.stderr


def test_sweep_killed_between_rounds_loses_and_repeats_nothing(tmp_path):
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
    last = proc.stdout.strip().splitlines()[-1]
    assert summary_line(last, f"3 jobs: {len(first)} already done, {3 - len(first)} ok", results), last
    lines = results.read_text().splitlines()
    assert lines[: len(first)] == first  # finished rows intact
    assert sorted(r.batch_size for r in read_results(results).rows) == [1, 2, 3]
    assert len(lines) == 3  # nothing measured twice


def test_the_summary_line_counts_rounds_statuses_and_the_timed_share(tmp_path):
    summary = runner.SweepSummary(tmp_path / "r.jsonl", total=6, skipped=2, extra_rounds=1, seconds=200.0)
    summary.count([BenchResult(**cell_fields(BenchConfig(), "vit", 1, mode, "cpu", repeat), status=status,
                               samples_s=[2.5] * 4, compile_s=None if mode == "eager" else 40.0)
                   for mode, repeat, status in (("eager", 0, "ok"), ("default", 0, "ok"), ("default", 1, "ok"),
                                                ("eager", 1, "crashed"))])
    # 40 s of samples; round 0's compile (40 s) is the first compile, round 1's a warm one
    assert (summary.statuses, summary.timed_s, summary.cold_compile_s) == ({"ok": 3, "crashed": 1}, 40.0, 40.0)
    assert summary.line() == (f"6 jobs: 2 already done, 1 crashed, 3 ok, 1 extra round(s) for precision; timed calls "
                              f"40 s of 200 s (20%; 25% without the first compiles) -> {tmp_path / 'r.jsonl'}")
    nothing = runner.SweepSummary(tmp_path / "r.jsonl", total=6, skipped=6, seconds=0.5)
    assert nothing.line() == f"6 jobs: 6 already done, nothing new -> {tmp_path / 'r.jsonl'}"


def test_in_process_sweep_api(tmp_path):
    cfg = load_config(tiny_params(tmp_path, iterations=3))
    summary = run_sweep(cfg, tmp_path / "r.jsonl", progress=False)
    assert summary.statuses == {"ok": 1} and summary.skipped == 0 and summary.total == 1
    assert 0 < summary.timed_s < summary.seconds
    again = run_profile(cfg, tmp_path / "r.jsonl", progress=False)  # no studies asked for: the sweep only
    assert len(again) == 1 and again[0].skipped == 1 and again[0].statuses == {}


# --- one round with stand-in workers: the order of the blocks, failures, lost workers ----------------

class FakeWorker:
    """Stands in for sweep/workers.Worker: records what it is asked, answers as its plan says."""

    def __init__(self, events: list, plan: dict, cfg: BenchConfig):
        self.events, self.plan, self.cfg = events, plan, cfg
        self.seconds, self.mode, self.blocks, self.exit_code, self.repeat = 1.5, None, 0, 0, None

    def send(self, command, payload=None):
        if command == "cell":
            self.mode, self.repeat = payload["mode"], payload["repeat"]
            assert payload["model"] == "vit" and payload["config"] == self.cfg.to_dict()
        if command == "round":
            self.repeat = payload["repeat"]
        self.events.append((self.mode, "send " + command))

    def new_deadline(self):
        self.events.append((self.mode, "new deadline"))

    def receive(self):
        self.events.append((self.mode, "receive"))
        if self.plan.get(self.mode) == "fails to prepare":
            return "failed", self._row("error", "RuntimeError: no")
        return "ready", None

    def ask(self, command, payload=None):
        if command == "block" and payload["after_switch"]:
            self.events.append((self.mode, "untimed call"))
        self.events.append((self.mode, command))
        if command == "block":
            self.blocks += 1
            if self.plan.get(self.mode) == "crashes in block 2" and self.blocks == 2:
                raise WorkerLost("crashed", "worker process killed by SIGSEGV; log: boom")
            return "timed", None
        return "row", self._row("ok", "")

    def close(self):
        self.events.append((self.mode, "close"))

    def _row(self, status, error):
        return BenchResult(**cell_fields(self.cfg, "vit", 1, self.mode, "cpu", self.repeat), status=status,
                           error=error).to_json()


def fake_round(monkeypatch, tmp_path, plan: dict, modes=("eager", "default", "max-autotune"), blocks=3,
               device="auto"):
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), modes=modes, blocks=blocks, settle_s=0.5,
                      device=device)
    events = []
    monkeypatch.setattr(sessions_module, "Worker", lambda log_path, timeout_s: FakeWorker(events, plan, cfg))
    monkeypatch.setattr(runner.time, "sleep", lambda s: events.append((None, f"settle {s}")))
    rows = runner.run_round(cfg, Round("vit", 1, 3, modes), tmp_path)
    return rows, events


def test_on_a_cpu_fresh_workers_prepare_one_at_a_time(monkeypatch, tmp_path):
    # a warm-up beside another worker's compile is starved on shared cores: each prepares alone, its
    # timeout counting from its own turn; a worker that fails to prepare is left out of the blocks
    rows, events = fake_round(monkeypatch, tmp_path, {"default": "fails to prepare"}, device="cpu")
    assert [what for _, what in events[:9]] == ["new deadline", "send cell", "receive"] * 3
    assert [mode for mode, what in events[:9] if what == "send cell"] == ["eager", "default", "max-autotune"]
    assert [r.status for r in rows] == ["ok", "error", "ok"]
    assert [m for m, what in events if what == "block"] == ["eager", "max-autotune", "max-autotune", "eager", "eager",
                                                            "max-autotune"]


def test_a_round_prepares_every_mode_then_times_blocks_in_abba_order(monkeypatch, tmp_path):
    rows, events = fake_round(monkeypatch, tmp_path, {})
    assert [(r.mode, r.repeat, r.status) for r in rows] == [("eager", 3, "ok"), ("default", 3, "ok"),
                                                            ("max-autotune", 3, "ok")]
    # every worker is sent its cell before any is waited for: they build and compile at once
    assert events[:6] == [("eager", "send cell"), ("default", "send cell"), ("max-autotune", "send cell"),
                          ("eager", "receive"), ("default", "receive"), ("max-autotune", "receive")]
    timed = [(mode, what) for mode, what in events[6:] if what in ("block", "settle 0.5")]
    settle = (None, "settle 0.5")
    # A B C, C B A, A B C: each handoff to another worker after settle_s of quiet, none within a worker
    assert timed == [settle, ("eager", "block"), settle, ("default", "block"), settle, ("max-autotune", "block"),
                     ("max-autotune", "block"), settle, ("default", "block"), settle, ("eager", "block"),
                     ("eager", "block"), settle, ("default", "block"), settle, ("max-autotune", "block")]
    # an untimed call where a turn begins, none in a block right after the worker's own
    turns = [what for _, what in events if what in ("untimed call", "block")]
    assert turns == ["untimed call", "block"] * 3 + ["block"] + ["untimed call", "block"] * 2 + ["block"] + [
        "untimed call", "block"] * 2
    assert events[-6:] == [("eager", "finish"), ("default", "finish"), ("max-autotune", "finish"),
                           ("eager", "close"), ("default", "close"), ("max-autotune", "close")]


def test_a_failed_or_lost_worker_becomes_its_row_and_the_others_go_on(monkeypatch, tmp_path):
    plan = {"default": "fails to prepare", "max-autotune": "crashes in block 2"}
    rows, events = fake_round(monkeypatch, tmp_path, plan)
    eager, default, autotune = rows
    assert eager.status == "ok"
    assert (default.status, default.error) == ("error", "RuntimeError: no")  # the worker's own row
    assert (autotune.status, autotune.error) == ("crashed", "worker process killed by SIGSEGV; log: boom")
    assert autotune.duration_s == 1.5 and autotune.settings == eager.settings and autotune.repeat == 3
    assert ("default", "block") not in events  # a failed preparation times nothing
    assert [m for m, what in events if what == "block"] == ["eager", "max-autotune", "max-autotune", "eager", "eager"]
    assert [m for m, what in events if what == "finish"] == ["eager"]  # the lost worker is not asked again
    assert sorted(m for m, what in events if what == "close") == ["default", "eager", "max-autotune"]


def test_a_round_of_one_mode_times_its_blocks_back_to_back(monkeypatch, tmp_path):
    rows, events = fake_round(monkeypatch, tmp_path, {}, modes=("eager",), blocks=4)
    assert [r.status for r in rows] == ["ok"]
    assert [what for _, what in events if what in ("block", "settle 0.5")] == ["settle 0.5"] + ["block"] * 4


def test_a_profile_runs_its_cells_then_its_studies(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(runner, "run_sweep", lambda cfg, path, retry, progress: calls.append(("sweep", path)) or 1)
    monkeypatch.setattr(runner, "run_studies", lambda cfg, path, progress: calls.append(("studies", path)) or 2)
    results = tmp_path / "r.jsonl"
    assert run_profile(BenchConfig(), results, progress=False) == [1] and calls == [("sweep", results)]
    calls.clear()
    studies = BenchConfig(serving_batch_sizes=(1, 4))
    assert run_profile(studies, str(results), progress=False) == [1, 2]
    assert calls == [("sweep", results), ("studies", results)]  # the cells first, in the same results folder


def fake_workers(monkeypatch, cfg) -> tuple[list, list]:
    """Sessions start FakeWorkers: (their events, the log names of the workers started, in order)."""
    events, started = [], []

    def worker(log_path, timeout_s):
        started.append(log_path.name)
        return FakeWorker(events, {}, cfg)

    monkeypatch.setattr(sessions_module, "Worker", worker)
    return events, started


def test_a_groups_workers_measure_rounds_per_process_rounds_then_fresh_ones(monkeypatch, tmp_path):
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), modes=("eager", "default"), blocks=1,
                      settle_s=0.0, rounds_per_process=2)
    events, started = fake_workers(monkeypatch, cfg)
    with sessions_module.Sessions(cfg, tmp_path) as live:
        rows = [runner.run_round(cfg, Round("vit", 1, repeat, cfg.modes), tmp_path, live, keep=True)
                for repeat in range(3)]
    # rounds 0 and 1 in the workers round 0 started, round 2 in fresh ones (named after their first job)
    assert started == ["vit-bs1-eager-r0.log", "vit-bs1-default-r0.log", "vit-bs1-eager-r2.log",
                       "vit-bs1-default-r2.log"]
    assert [what for mode, what in events if mode == "eager" and what.startswith(("send", "new", "close"))] == [
        "send cell", "new deadline", "send round", "close", "send cell", "close"]
    assert [[row.repeat for row in round_rows] for round_rows in rows] == [[0, 0], [1, 1], [2, 2]]
    # the workers that ended after a round give that round's rows their exit status; rows of a round
    # after which they went on have none
    assert [rows[i][0].exit_code for i in range(3)] == [None, 0, None]


def test_a_failed_round_ends_its_workers_and_the_next_round_starts_fresh(monkeypatch, tmp_path):
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), modes=("eager", "default"), blocks=1,
                      settle_s=0.0)
    events = []
    plan = {"default": "crashes in block 2"}  # the fake counts blocks over its life: round 1's block
    monkeypatch.setattr(sessions_module, "Worker", lambda log_path, timeout_s: FakeWorker(events, plan, cfg))
    with sessions_module.Sessions(cfg, tmp_path) as live:
        first = runner.run_round(cfg, Round("vit", 1, 0, cfg.modes), tmp_path, live, keep=True)
        second = runner.run_round(cfg, Round("vit", 1, 1, cfg.modes), tmp_path, live, keep=True)
        assert not live.live  # a failure in a round ends its group's workers
        third = runner.run_round(cfg, Round("vit", 1, 2, cfg.modes), tmp_path, live, keep=True)
    assert [r.status for r in first + second + third] == ["ok", "ok", "ok", "crashed", "ok", "ok"]
    assert [what for mode, what in events if mode == "eager" and what.startswith("send c")] == [
        "send cell", "send cell"]  # round 2: fresh workers


def test_live_groups_bounds_the_workers_alive_at_once(monkeypatch, tmp_path):
    cfg = BenchConfig(label="test", models=("vit", "resnet", "segformer"), batch_sizes=(1,), modes=("eager",),
                      live_groups=2, repeats=2)
    closed = []

    class Counted(FakeWorker):
        def close(self):
            closed.append(self.repeat)

    monkeypatch.setattr(sessions_module, "Worker", lambda log_path, timeout_s: Counted([], {}, cfg))
    live = sessions_module.Sessions(cfg, tmp_path)
    for model in cfg.models:
        session, fresh = live.open(Round(model, 1, 0, cfg.modes))
        session.workers["eager"].repeat = model
    assert fresh and list(live.live) == [("resnet", 1), ("segformer", 1)] and closed == ["vit"]  # least recent
    live.close_all()
    assert closed == ["vit", "resnet", "segformer"]
    # and the sweep's order follows: chunks of live_groups groups, round-major within a chunk
    from bench_utils.sweep.jobs import first_rounds
    assert [(r.model, r.repeat) for r in first_rounds(cfg)] == [
        ("vit", 0), ("resnet", 0), ("vit", 1), ("resnet", 1), ("segformer", 0), ("segformer", 1)]


def test_after_round_runs_after_each_round_outside_the_budget(monkeypatch, tmp_path):
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), modes=("eager",), blocks=1, settle_s=0.0,
                      repeats=2, target_halfwidth=0.0)
    monkeypatch.setattr(sessions_module, "Worker", lambda log_path, timeout_s: FakeWorker([], {}, cfg))
    seen = []

    def aside(round_):
        seen.append(round_.repeat)
        time.sleep(0.3)

    summary = run_sweep(cfg, tmp_path / "r.jsonl", progress=False, after_round=aside)
    assert seen == [0, 1] and summary.seconds < 0.3  # the hook's 0.6 s are not the sweep's


class LostStudyWorker:
    """A study's worker that never replies: its deadline passes."""

    def __init__(self, log_path, timeout_s):
        self.seconds = 12.5

    def ask(self, command, payload=None):
        raise WorkerLost("timeout", "no reply within 300 s; log: study.log")

    def close(self):
        pass


@pytest.mark.parametrize("kind, option", [("serving", "auto"), ("compile-cost", "regional")])
def test_a_lost_study_worker_becomes_its_row_by_the_rule_of_a_lost_cell_worker(monkeypatch, tmp_path, kind, option):
    import dataclasses

    from bench_utils.sweep.jobs import Job, study_key

    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), serving_batch_sizes=(1, 4),
                      compile_strategies=("regional",))
    monkeypatch.setattr(runner, "Worker", LostStudyWorker)
    job = Job(kind, "vit", 1, option)
    row = runner.run_study(cfg, job, tmp_path / "results.jsonl")
    assert (row.status, row.error, row.duration_s) == ("timeout", "no reply within 300 s; log: study.log", 12.5)
    assert study_key(cfg, job) == (type(row), row.key)  # found as done by the next run's pending_study_jobs
    same = runner.failure_row(cfg, job, "timeout", "no reply within 300 s; log: study.log", 12.5)
    assert dataclasses.replace(row, started_at="") == dataclasses.replace(same, started_at="")
    cell = runner.failure_row(cfg, Job("cell", "vit", 1, "default", 3), "timeout", "no reply", 12.5)
    assert type(cell) is BenchResult and (cell.mode, cell.repeat, cell.status, cell.duration_s) == (
        "default", 3, "timeout", 12.5)


def test_a_round_asking_for_new_workers_ends_the_groups_pair_and_starts_one(monkeypatch, tmp_path):
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), modes=("eager", "default"), blocks=1,
                      settle_s=0.0, rounds_per_process=4)
    events, started = fake_workers(monkeypatch, cfg)
    with sessions_module.Sessions(cfg, tmp_path) as live:
        runner.run_round(cfg, Round("vit", 1, 0, cfg.modes), tmp_path, live, keep=True)
        rows = runner.run_round(cfg, Round("vit", 1, 1, cfg.modes, new_workers=True), tmp_path, live, keep=True)
    assert started == ["vit-bs1-eager-r0.log", "vit-bs1-default-r0.log", "vit-bs1-eager-r1.log",
                       "vit-bs1-default-r1.log"]  # round 1 in fresh workers, though rounds_per_process is 4
    assert [what for mode, what in events if mode == "eager" and what.startswith("send")] == [
        "send cell", "send cell"]  # prepared again: a build and a compile, not a "round"
    assert [row.status for row in rows] == ["ok", "ok"]
