"""One unit of a sweep in worker processes (sweep/rounds.py), with stand-in workers: the order of the
blocks, failures, lost workers, sessions across rounds."""

import dataclasses
import os
from pathlib import Path

import pytest

import bench_utils.sweep.rounds as rounds_module
from bench_utils.config.bench_config import BenchConfig
from bench_utils.measure.task import Job
from bench_utils.results.rows import BenchResult, cell_fields
from bench_utils.sweep.jobs import Round, failure_row
from bench_utils.sweep.workers import WorkerLost


class FakeWorker:
    """Stands in for sweep/workers.Worker: records what it is asked, answers as its plan says."""

    def __init__(self, events: list, plan: dict, cfg: BenchConfig, log_path="worker.log"):
        self.events, self.plan, self.cfg, self.log_path = events, plan, cfg, log_path
        self.seconds, self.configuration, self.blocks, self.exit_code, self.repeat = 1.5, None, 0, 0, None
        self.process = self  # is_alive(): a spare (workers.Spares) that is still there
        self.conn = self  # poll(0): a spare's answer to its ping has not arrived (it imports until waited for)
        self.pinged = False

    def is_alive(self):
        return True

    def poll(self, timeout=None):
        return False

    def allow(self, seconds):
        pass

    def kill(self):
        self.events.append((self.configuration, "killed"))

    def adopt(self, log_path, timeout_s):  # a spare given its job (workers.Worker.adopt)
        self.events.append((None, f"spare adopted for {Path(log_path).name}"))
        self.log_path = log_path

    def send(self, command, payload=None):
        if command == "ping":  # a spare's, sent at its start: answered once its imports are done
            self.pinged = True
        if command == "cell":  # the task, typed: the settings as validated once, never re-parsed
            self.configuration, self.repeat = payload.job.option, payload.job.repeat
            assert payload.job.model == "vit" and payload.cfg is self.cfg
        if command == "round":
            self.repeat = payload.repeat
            self.events.append((self.configuration, f"times its warm compile: {payload.time_warm_compile}"))
        self.events.append((self.configuration, "send " + command))

    def new_deadline(self):
        self.events.append((self.configuration, "new deadline"))

    def receive(self):
        if self.pinged:
            self.pinged = False
            self.events.append((self.configuration, "pong"))
            return "pong", None
        self.events.append((self.configuration, "receive"))
        if self.plan.get(self.configuration) == "fails to prepare":
            return "failed", self._row("error", "RuntimeError: no")
        return "ready", None

    def ask(self, command, payload=None):
        if command == "block" and payload.after_switch:
            self.events.append((self.configuration, "untimed call"))
        self.events.append((self.configuration, command))
        if command == "block":
            self.blocks += 1
            if self.plan.get(self.configuration) == "crashes in block 2" and self.blocks == 2:
                raise WorkerLost("crashed", "worker process killed by SIGSEGV; log: boom")
            if self.plan.get(self.configuration) == "oom in block 2" and self.blocks == 2:
                return "failed", self._row("oom", "OutOfMemoryError: CUDA out of memory")
            if payload.hand_over:
                self.events.append((self.configuration, "hand over"))
            return "timed", None
        return "row", self._row("ok", "")

    def close(self):
        self.events.append((self.configuration, "close"))

    def _row(self, status, error):
        return BenchResult(**cell_fields(self.cfg, "vit", 1, self.configuration, "cpu", self.repeat), status=status,
                           error=error)


def fake_round(monkeypatch, tmp_path, plan: dict, configurations=("eager", "default", "max-autotune"), blocks=3,
               device="auto"):
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), configurations=configurations, blocks=blocks,
                      settle_s=0.5, device=device)
    events = []
    monkeypatch.setattr(rounds_module, "Worker", lambda log_path, timeout_s, device="cpu": FakeWorker(events, plan, cfg))
    monkeypatch.setattr(rounds_module.time, "sleep", lambda s: events.append((None, f"settle {s}")))
    with rounds_module.Sessions(cfg, tmp_path / "results.jsonl") as live:
        rows = rounds_module.run_round(cfg, Round("vit", 1, 3, configurations), tmp_path / "results.jsonl", live,
                                       keep=False)
    return rows, events


def test_on_a_cpu_fresh_workers_prepare_one_at_a_time(monkeypatch, tmp_path):
    # a warm-up beside another worker's compile is starved on shared cores: each prepares alone, its
    # timeout counting from its own turn; a worker that fails to prepare is left out of the blocks
    rows, events = fake_round(monkeypatch, tmp_path, {"default": "fails to prepare"}, device="cpu")
    assert [what for _, what in events[:10]] == ["new deadline", "send cell", "receive"] * 2 + [
        "close"] + ["new deadline", "send cell", "receive"]  # a worker that failed is closed at once
    events = [event for event in events if event != ("default", "close")]
    assert [mode for mode, what in events[:9] if what == "send cell"] == ["eager", "default", "max-autotune"]
    assert [r.status for r in rows] == ["ok", "error", "ok"]
    assert [m for m, what in events if what == "block"] == ["eager", "max-autotune", "max-autotune", "eager", "eager",
                                                            "max-autotune"]


@pytest.mark.parametrize("device", ["cuda", "auto"])
def test_on_a_gpu_too_no_two_workers_compile_or_warm_up_at_once(monkeypatch, tmp_path, device):
    # Inductor times kernels while it compiles: beside another worker's warm-up or graph recording it
    # would pick them by disturbed timings, for every later process (rounds._RoundRun.prepare)
    rows, events = fake_round(monkeypatch, tmp_path, {}, device=device)
    events = [event for event in events if event[1] not in ("send ping", "pong")]  # the spares' (workers.Spares)
    assert [what for _, what in events[:9]] == ["new deadline", "send cell", "receive"] * 3  # each waited for
    assert [mode for mode, what in events[:9] if what == "send cell"] == ["eager", "default", "max-autotune"]
    assert [r.status for r in rows] == ["ok", "ok", "ok"]


def test_only_the_leaders_template_times_its_warm_compile(monkeypatch, tmp_path):
    # a later round's kept workers: the race's leader times its warm compile (once, measure/worker.py),
    # the other contenders do not (each would cost 5-15 s of a slow CPU's budget for a figure no page
    # shows); a round with no leader named asks every one, as before
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), device="cpu",
                      configurations=("eager", "default", "max-autotune"))
    events = []
    monkeypatch.setattr(rounds_module, "Worker", lambda log_path, timeout_s, device="cpu": FakeWorker(events, {}, cfg))
    monkeypatch.setattr(rounds_module.time, "sleep", lambda s: None)
    with rounds_module.Sessions(cfg, tmp_path / "results.jsonl") as live:
        for repeat, leaders in ((0, None), (1, ("max-autotune",)), (2, None)):
            round_ = Round("vit", 1, repeat, cfg.configurations, leaders=leaders)
            rounds_module.run_round(cfg, round_, tmp_path / "results.jsonl", live, keep=True)
    asked = [(mode, what.split(": ")[1]) for mode, what in events if what.startswith("times its warm compile")]
    assert asked == [("eager", "False"), ("default", "False"), ("max-autotune", "True"),
                     ("eager", "True"), ("default", "True"), ("max-autotune", "True")]


def test_a_round_prepares_every_mode_then_times_blocks_in_abba_order(monkeypatch, tmp_path):
    rows, events = fake_round(monkeypatch, tmp_path, {})
    assert [(r.configuration, r.repeat, r.status) for r in rows] == [("eager", 3, "ok"), ("default", 3, "ok"),
                                                            ("max-autotune", 3, "ok")]
    timed = [(mode, what) for mode, what in events[9:] if what in ("block", "settle 0.5")]
    settle = (None, "settle 0.5")
    # A B C, C B A, A B C: each handoff to another worker after settle_s of quiet, none within a worker
    assert timed == [settle, ("eager", "block"), settle, ("default", "block"), settle, ("max-autotune", "block"),
                     ("max-autotune", "block"), settle, ("default", "block"), settle, ("eager", "block"),
                     ("eager", "block"), settle, ("default", "block"), settle, ("max-autotune", "block")]
    # an untimed call where a turn begins, none in a block right after the worker's own
    turns = [what for _, what in events if what in ("untimed call", "block")]
    assert turns == ["untimed call", "block"] * 3 + ["block"] + ["untimed call", "block"] * 2 + ["block"] + [
        "untimed call", "block"] * 2
    # (a sleep of another thread's, e.g. the spares' ping, may land among the events: time is one module)
    assert [e for e in events if e[0] is not None][-6:] == [("eager", "finish"), ("default", "finish"), ("max-autotune", "finish"),
                           ("eager", "close"), ("default", "close"), ("max-autotune", "close")]


def test_a_worker_gives_its_cache_back_whenever_its_turn_passes_to_another(monkeypatch, tmp_path):
    # A B C, C B A, A B C: after every block but the middle ones of a pair (the same worker goes on),
    # and after the last (the next round is another group's)
    rows, events = fake_round(monkeypatch, tmp_path, {})
    turns = [(mode, what) for mode, what in events if what in ("block", "hand over")]
    A, B, C = ("eager", "default", "max-autotune")
    assert turns == [(A, "block"), (A, "hand over"), (B, "block"), (B, "hand over"), (C, "block"),
                     (C, "block"), (C, "hand over"), (B, "block"), (B, "hand over"), (A, "block"),
                     (A, "block"), (A, "hand over"), (B, "block"), (B, "hand over"), (C, "block"),
                     (C, "hand over")]
    for index, (mode, what) in enumerate(events):  # no worker begins a turn before the last one handed over
        before = [e for e in events[:index] if e[1] in ("block", "hand over")]
        if what == "untimed call" and before:
            assert before[-1][1] == "hand over"


def test_a_worker_that_ran_out_of_memory_is_closed_at_once_and_the_others_go_on(monkeypatch, tmp_path):
    # its memory (its cache, its CUDA context) is free for the turns left in the round
    rows, events = fake_round(monkeypatch, tmp_path, {"default": "oom in block 2"})
    assert [r.status for r in rows] == ["ok", "oom", "ok"]
    failed = events.index(("default", "block"), events.index(("default", "block")) + 1)  # its second block
    assert events[failed + 1] == ("default", "close")  # before anyone's next block
    assert events.count(("default", "close")) == 1  # and not closed a second time with the round
    assert [m for m, what in events if what == "block"].count("default") == 2


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
    assert [m for m, what in events if what == "close"] == ["default", "max-autotune", "eager"]  # each at once


def test_a_round_of_one_mode_times_its_blocks_back_to_back(monkeypatch, tmp_path):
    rows, events = fake_round(monkeypatch, tmp_path, {}, configurations=("eager",), blocks=4)
    assert [r.status for r in rows] == ["ok"]
    assert [what for _, what in events if what in ("block", "settle 0.5")] == ["settle 0.5"] + ["block"] * 4


def fake_workers(monkeypatch, cfg) -> tuple[list, list]:
    """Sessions start FakeWorkers: (their events, the log names of the workers started, in order)."""
    events, started = [], []

    def worker(log_path, timeout_s, device="cpu"):
        started.append(log_path.name)
        return FakeWorker(events, {}, cfg)

    monkeypatch.setattr(rounds_module, "Worker", worker)
    return events, started


def test_a_sessions_workers_start_for_the_profiles_device(monkeypatch, tmp_path):
    # the device decides how a worker starts (forked on a CPU, spawned on a GPU: workers._context)
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), configurations=("eager", "default"), blocks=1,
                      settle_s=0.0, device="cuda")
    devices = []

    def worker(log_path, timeout_s, device):
        devices.append(device)
        return FakeWorker([], {}, cfg)

    monkeypatch.setattr(rounds_module, "Worker", worker)
    with rounds_module.Sessions(cfg, tmp_path / "results.jsonl") as live:
        rounds_module.run_round(cfg, Round("vit", 1, 0, cfg.configurations), tmp_path / "results.jsonl", live, keep=True)
    assert devices == ["cuda"] * 4  # the round's two, and two spares for the next fresh round (workers.Spares)


def test_on_a_gpu_spares_import_beside_the_compiles_and_are_done_before_any_block(monkeypatch, tmp_path):
    # a spawned worker imports torch, Inductor and transformers itself (14-30 s a group on the H200's
    # host): the next fresh round's are started when this round's first compile starts, and the runner
    # waits for their imports before the first timed block (an import beside a launch-bound call slows
    # the host that launches it); the next group's fresh round takes them, and starts no worker itself
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1, 4), blocks=2, settle_s=0.0, device="cuda",
                      configurations=("eager", "default", "reduce-overhead"))
    events = []

    def worker(log_path, timeout_s, device="cpu"):
        events.append((None, f"start {log_path.name}"))
        return FakeWorker(events, {}, cfg, log_path)

    monkeypatch.setattr(rounds_module, "Worker", worker)
    monkeypatch.setattr(rounds_module.time, "sleep", lambda s: None)
    path = tmp_path / "results.jsonl"
    with rounds_module.Sessions(cfg, path) as live:
        rows_first = rounds_module.run_round(cfg, Round("vit", 1, 0, cfg.configurations), path, live, keep=True)
        first = list(events)
        events.clear()
        rounds_module.run_round(cfg, Round("vit", 4, 0, cfg.configurations), path, live, keep=True)
    spare = f"spare-{os.getpid()}"  # the runner's pid in its spares' log names: another runner's are apart
    starts = [what for _, what in first if what.startswith("start")]
    assert starts == ["start vit-bs1-eager-r0.log", "start vit-bs1-default-r0.log", "start vit-bs1-reduce-overhead-r0.log",
                      f"start {spare}-1.log", f"start {spare}-2.log", f"start {spare}-3.log"]
    at = first.index((None, f"start {spare}-1.log"))
    assert first.index(("eager", "receive")) < at  # eager compiles nothing: not beside its warm-up
    assert first[at + 1] == (None, "send ping") and first[at + 6] == ("default", "send cell")  # ... beside the first compile
    pongs = [i for i, event in enumerate(first) if event[1] == "pong"]
    prepared = max(i for i, (_, what) in enumerate(first) if what == "receive")
    blocks = [i for i, (_, what) in enumerate(first) if what == "block"]
    assert len(pongs) == 3 and prepared < min(pongs) and max(pongs) < min(blocks)
    # the compiles that began beside them say so in their rows (the page's compile table: "may read high")
    assert [row.compiled_beside_starts for row in rows_first] == [0, 3, 3]
    # the next group's fresh round: the spares, adopted for its jobs' logs; three more started beside its compile
    assert [what for _, what in events if what.startswith(("spare adopted", "start"))] == [
        "spare adopted for vit-bs4-eager-r0.log", "spare adopted for vit-bs4-default-r0.log",
        "spare adopted for vit-bs4-reduce-overhead-r0.log", f"start {spare}-4.log", f"start {spare}-5.log",
        f"start {spare}-6.log"]


def test_on_a_cpu_no_spares_start(monkeypatch, tmp_path):
    # a CPU's workers fork from the preloaded server in milliseconds: nothing to start ahead
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), configurations=("eager", "default"), blocks=1,
                      settle_s=0.0, device="cpu")
    events, started = fake_workers(monkeypatch, cfg)
    with rounds_module.Sessions(cfg, tmp_path / "results.jsonl") as live:
        assert live.spares is None
        rounds_module.run_round(cfg, Round("vit", 1, 0, cfg.configurations), tmp_path / "results.jsonl", live, keep=True)
    assert started == ["vit-bs1-eager-r0.log", "vit-bs1-default-r0.log"] and not any(w == "ping" for _, w in events)


def test_a_groups_workers_measure_rounds_per_process_rounds_then_fresh_ones(monkeypatch, tmp_path):
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), configurations=("eager", "default"), blocks=1,
                      settle_s=0.0, rounds_per_process=2)
    events, started = fake_workers(monkeypatch, cfg)
    with rounds_module.Sessions(cfg, tmp_path / "results.jsonl") as live:
        rows = [rounds_module.run_round(cfg, Round("vit", 1, repeat, cfg.configurations), tmp_path / "results.jsonl", live, keep=True)
                for repeat in range(3)]
    # rounds 0 and 1 in the workers round 0 started, round 2 in fresh ones (named after their first job)
    assert started == ["vit-bs1-eager-r0.log", "vit-bs1-default-r0.log", "vit-bs1-eager-r2.log",
                       "vit-bs1-default-r2.log"]
    assert [what for mode, what in events if mode == "eager" and what.startswith(("send", "new", "close"))] == [
        "send cell", "send release", "new deadline", "new deadline", "send round", "close", "send cell", "send release",
        "close"]  # a kept worker's deadline counts from its own turn to fork and warm up (one at a time on a CPU)
    assert [[row.repeat for row in round_rows] for round_rows in rows] == [[0, 0], [1, 1], [2, 2]]
    # the workers that ended after a round give that round's rows their exit status; rows of a round
    # after which they went on have none
    assert [rows[i][0].exit_code for i in range(3)] == [None, 0, None]


def test_a_failed_round_ends_its_workers_and_the_next_round_starts_fresh(monkeypatch, tmp_path):
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), configurations=("eager", "default"), blocks=1,
                      settle_s=0.0)
    events = []
    plan = {"default": "crashes in block 2"}  # the fake counts blocks over its life: round 1's block
    monkeypatch.setattr(rounds_module, "Worker", lambda log_path, timeout_s, device="cpu": FakeWorker(events, plan, cfg))
    with rounds_module.Sessions(cfg, tmp_path / "results.jsonl") as live:
        first = rounds_module.run_round(cfg, Round("vit", 1, 0, cfg.configurations), tmp_path / "results.jsonl", live, keep=True)
        second = rounds_module.run_round(cfg, Round("vit", 1, 1, cfg.configurations), tmp_path / "results.jsonl", live, keep=True)
        assert not live.live  # a failure in a round ends its group's workers
        third = rounds_module.run_round(cfg, Round("vit", 1, 2, cfg.configurations), tmp_path / "results.jsonl", live, keep=True)
    assert [r.status for r in first + second + third] == ["ok", "ok", "ok", "crashed", "ok", "ok"]
    assert [what for mode, what in events if mode == "eager" and what.startswith("send c")] == [
        "send cell", "send cell"]  # round 2: fresh workers


def test_live_groups_bounds_the_workers_alive_at_once(monkeypatch, tmp_path):
    cfg = BenchConfig(label="test", models=("vit", "resnet", "segformer"), batch_sizes=(1,), configurations=("eager",),
                      live_groups=2, repeats=2)
    closed = []

    class Counted(FakeWorker):
        def close(self):
            closed.append(self.repeat)

    monkeypatch.setattr(rounds_module, "Worker", lambda log_path, timeout_s, device="cpu": Counted([], {}, cfg))
    live = rounds_module.Sessions(cfg, tmp_path / "results.jsonl")
    for model in cfg.models:
        session, fresh = live.open(Round(model, 1, 0, cfg.configurations))
        session.workers["eager"].repeat = model
    assert fresh and list(live.live) == [("resnet", 1), ("segformer", 1)] and closed == ["vit"]  # least recent
    live.close_all()
    assert closed == ["vit", "resnet", "segformer"]
    # and the sweep's order follows: chunks of live_groups groups, round-major within a chunk
    from bench_utils.sweep.jobs import first_rounds

    assert [(r.model, r.repeat) for r in first_rounds(cfg)] == [
        ("vit", 0), ("resnet", 0), ("vit", 1), ("resnet", 1), ("segformer", 0), ("segformer", 1)]


class LostStudyWorker:
    """A study's worker that never replies: its deadline passes."""

    def __init__(self, log_path, timeout_s, device="cpu"):
        self.seconds = 12.5

    def ask(self, command, payload=None):
        raise WorkerLost("timeout", "no reply within 300 s; log: study.log")

    def close(self):
        pass


@pytest.mark.parametrize("kind, option", [("serving", "auto")])
def test_a_lost_study_worker_becomes_its_row_by_the_rule_of_a_lost_cell_worker(monkeypatch, tmp_path, kind, option):
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), serving_batch_sizes=(1, 4))
    from bench_utils.sweep.jobs import pending_study_jobs, rows_path
    from bench_utils.results.writer import ResultsWriter

    monkeypatch.setattr(rounds_module, "Worker", LostStudyWorker)
    job = Job(kind, "vit", 1, option)
    row = rounds_module.run_study(cfg, job, tmp_path / "results.jsonl")
    assert (row.status, row.error, row.duration_s) == ("timeout", "no reply within 300 s; log: study.log", 12.5)
    with ResultsWriter(rows_path(tmp_path / "results.jsonl", job)) as writer:
        writer.append(row)
    assert job not in pending_study_jobs(cfg, tmp_path / "results.jsonl")  # found as done by the next run
    same = failure_row(cfg, job, "timeout", "no reply within 300 s; log: study.log", 12.5)
    assert dataclasses.replace(row, started_at="") == dataclasses.replace(same, started_at="")
    cell = failure_row(cfg, Job("cell", "vit", 1, "default", 3), "timeout", "no reply", 12.5)
    assert type(cell) is BenchResult and (cell.configuration, cell.repeat, cell.status, cell.duration_s) == (
        "default", 3, "timeout", 12.5)


def test_a_round_asking_for_new_workers_ends_the_groups_pair_and_starts_one(monkeypatch, tmp_path):
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), configurations=("eager", "default"), blocks=1,
                      settle_s=0.0, rounds_per_process=4)
    events, started = fake_workers(monkeypatch, cfg)
    with rounds_module.Sessions(cfg, tmp_path / "results.jsonl") as live:
        rounds_module.run_round(cfg, Round("vit", 1, 0, cfg.configurations), tmp_path / "results.jsonl", live, keep=True)
        rows = rounds_module.run_round(cfg, Round("vit", 1, 1, cfg.configurations, new_workers=True), tmp_path / "results.jsonl", live, keep=True)
    assert started == ["vit-bs1-eager-r0.log", "vit-bs1-default-r0.log", "vit-bs1-eager-r1.log",
                       "vit-bs1-default-r1.log"]  # round 1 in fresh workers, though rounds_per_process is 4
    assert [what for mode, what in events if mode == "eager" and what.startswith("send")] == [
        "send cell", "send release", "send cell", "send release"]  # prepared again: a build and a compile, not a "round"
    assert [row.status for row in rows] == ["ok", "ok"]


def test_a_worker_that_leaves_the_race_gives_its_last_row_its_exit_code(monkeypatch, tmp_path):
    # on a GPU eager's own worker measures round 0 alone (jobs.eager_after_selection): it is closed when round 1
    # opens, and a crash at its teardown (CUDA graphs under CUPTI after its profiler's pass) reaches its row
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), configurations=("eager", "default"), blocks=1,
                      settle_s=0.0, device="cuda", repeats=3)
    workers = []

    def worker(log_path, timeout_s, device="cpu"):
        workers.append(FakeWorker([], {}, cfg, log_path))
        return workers[-1]

    monkeypatch.setattr(rounds_module, "Worker", worker)
    path = tmp_path / "results.jsonl"
    with rounds_module.Sessions(cfg, path) as live:
        first = rounds_module.run_round(cfg, Round("vit", 1, 0, cfg.configurations), path, live, keep=True)
        workers[0].exit_code = -11  # eager's: it dies as it is closed
        rounds_module.run_round(cfg, Round("vit", 1, 1, ("default",)), path, live, keep=True)
        ended = live.take_ended_rows()
    assert [(row.configuration, row.repeat, row.exit_code) for row in ended] == [("eager", 0, -11)]
    assert first[0].configuration == "eager" and first[0].exit_code is None


def test_each_compiled_cell_compiles_in_a_cache_of_its_own_emptied_before_its_first_process(monkeypatch, tmp_path):
    # what compiling one configuration alone costs: no other configuration's kernels in its cache; a later
    # round's fresh workers find the cell's cache as its first process left it
    from bench_utils.paths import cell_cache_dir

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    tasks = []
    real_send = FakeWorker.send
    monkeypatch.setattr(FakeWorker, "send", lambda self, command, payload=None: (
        tasks.append(payload) if command == "cell" else None, real_send(self, command, payload))[1])
    results = tmp_path / "results.jsonl"
    stale = cell_cache_dir(results, "vit", 1, "default") / "kernel-of-an-earlier-run"
    stale.parent.mkdir(parents=True)
    stale.write_text("x")
    events = []
    names = ("eager", "default", "default+twin")
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), configurations=names)
    monkeypatch.setattr(rounds_module, "Worker", lambda log_path, timeout_s, device="cpu": FakeWorker(events, {}, cfg))
    monkeypatch.setattr(rounds_module.time, "sleep", lambda s: None)
    with rounds_module.Sessions(cfg, results) as live:
        rounds_module.run_round(cfg, Round("vit", 1, 0, names), results, live, keep=False)
    folders = {task.job.option: task.cache_dir for task in tasks}
    assert folders["eager"] is None  # compiles nothing
    assert folders["default"] == str(cell_cache_dir(results, "vit", 1, "default")) != folders["default+twin"]
    assert Path(folders["default"]).is_dir() and not stale.exists()  # emptied: round 0 compiles cold
    kept = Path(folders["default+twin"]) / "kernel"
    kept.write_text("x")
    with rounds_module.Sessions(cfg, results) as live:
        rounds_module.run_round(cfg, Round("vit", 1, 1, ("eager", "default+twin")), results, live, keep=False)
    assert kept.exists() and tasks[-1].cache_dir == folders["default+twin"]  # round 1: warm from its own cache


@pytest.mark.slow
def test_the_same_graph_compiled_by_two_configurations_is_cold_in_each(tmp_path, monkeypatch):
    # default+twin compiles default's graph: from a shared cache it would be a warm compile of kernels
    # default just built; from a cache of its own it is cold, as compiling it alone is
    from bench_utils.results.rows import read_results
    from bench_utils.sweep.loop import run_sweep

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    cfg = BenchConfig(label="test", models=("resnet",), size="tiny", batch_sizes=(1,), device="cpu", weights="random",
                      configurations=("eager", "default", "default+twin"), warmup=1, iterations=4, min_time_s=0.1,
                      max_warmup_s=0.5, repeats=2, rounds_per_process=1, target_halfwidth=0.0, profiler=False)
    run_sweep(cfg, tmp_path / "results.jsonl", progress=False)
    rows = {(row.configuration, row.repeat): row for row in read_results(tmp_path / "results.jsonl").rows}
    for name in ("default", "default+twin"):
        first, later = rows[(name, 0)], rows[(name, 1)]
        assert first.status == "ok" and later.status == "ok", (first.error, later.error)
        assert first.fx_cache_misses >= 1 and first.fx_cache_hits == 0, name  # cold
        assert later.fx_cache_hits >= 1 and later.fx_cache_misses == 0, name  # warm, from its own cache
