"""Measuring processes seen from the runner (bench_utils/sweep/workers.py): real workers forked from
the fork server, past their deadline, dying, asked to exit; the crash message's words."""

import os
import re
import signal
import time
from multiprocessing import forkserver
from pathlib import Path

import pytest

from bench_utils.config.bench_config import BenchConfig
from bench_utils.measure.injected_failures import ENV_VAR as FAULT
from bench_utils.measure.task import CELL, Job, Task
from bench_utils.sweep.workers import LOG_TAIL_CHARS, Spares, Worker, WorkerLost, log_tail, signal_name
from conftest import KILLED


def cell_payload(fault: str, tmp_path) -> Task:
    cfg = BenchConfig(models=("vit",), configurations=("eager",), iterations=2, min_time_s=0.0, max_warmup_s=0.0, profiler=False)
    return Task(cfg, Job(CELL, "vit", 1, "eager"), tmp_path / "results.jsonl", {**os.environ, FAULT: fault})


def test_signal_names_for_crash_messages():
    assert signal_name(signal.SIGSEGV) == "SIGSEGV" and signal_name(9) == "SIGKILL"
    assert signal_name(40) == "signal 40"  # a real-time signal has no name; the sweep must not crash


def test_log_tail_keeps_the_last_lines_of_the_job_not_the_commands(tmp_path):
    log = tmp_path / "w.log"
    assert log_tail(log) == ""  # no log yet
    log.write_text("worker: cell\n" + "".join(f"line {i}\n" for i in range(8)) + "\n  \nworker: block\n")
    assert log_tail(log) == "line 3 | line 4 | line 5 | line 6 | line 7"
    log.write_text("x" * 5000 + "\nthe end\n")
    assert len(log_tail(log)) == LOG_TAIL_CHARS and log_tail(log).endswith("x | the end")


def test_a_worker_past_its_deadline_is_killed_and_says_timeout(tmp_path):
    worker = Worker(tmp_path / "logs" / "hang.log", timeout_s=4.0)  # the folder is made for the log
    try:
        worker.send("cell", cell_payload("vit/1/eager=hang", tmp_path))
        start = time.perf_counter()
        with pytest.raises(WorkerLost) as lost:
            worker.receive()
        # the deadline counts from the worker's start: not before it (how long after depends on the machine)
        assert worker.seconds >= 4.0 and time.perf_counter() - start > 0
        assert lost.value.status == "timeout"
        assert lost.value.error.startswith("no result after timeout_s=4 s; log: injected fault: hang")
        assert not worker.process.is_alive()
    finally:
        worker.close()


def test_a_worker_that_dies_becomes_crashed_with_its_signal(tmp_path):
    worker = Worker(tmp_path / "crash.log", timeout_s=120.0)
    try:
        with pytest.raises(WorkerLost) as lost:
            worker.ask("cell", cell_payload("vit/1/eager=segfault", tmp_path))
        assert lost.value.status == "crashed"
        assert re.fullmatch(KILLED.format("SIGSEGV"), lost.value.error)
    finally:
        worker.close()
    assert worker.process.exitcode == -signal.SIGSEGV


def test_a_worker_asked_to_exit_returns_and_one_stuck_in_a_job_is_killed(tmp_path):
    idle = Worker(tmp_path / "idle.log", timeout_s=60.0)
    idle.close()
    assert idle.process.exitcode == 0  # it returned: no kill (a kill is -SIGKILL), however long it took
    assert (tmp_path / "idle.log").read_text() == "worker: exit\n"
    stuck = Worker(tmp_path / "stuck.log", timeout_s=60.0)
    stuck.send("cell", cell_payload("vit/1/eager=hang", tmp_path))  # the exit waits behind the hung job
    stuck.close()  # asked to exit, it does not answer: killed after EXIT_WAIT_S
    assert stuck.process.exitcode == -signal.SIGKILL


def test_the_fork_server_restarts_when_an_import_time_variable_changes(tmp_path, monkeypatch):
    first = Worker(tmp_path / "a.log", timeout_s=60.0)
    first.close()
    server = forkserver._forkserver._forkserver_pid
    same = Worker(tmp_path / "b.log", timeout_s=60.0)
    same.close()
    assert forkserver._forkserver._forkserver_pid == server  # nothing changed: the same server forks it
    monkeypatch.setenv("OMP_NUM_THREADS", str((int(os.environ.get("OMP_NUM_THREADS", "1")) % 4) + 1))
    other = Worker(tmp_path / "c.log", timeout_s=60.0)
    other.close()
    assert forkserver._forkserver._forkserver_pid != server  # torch reads OMP_NUM_THREADS once, at import


def test_the_server_environment_holds_the_compilers_import_time_variables_but_not_cache_folders():
    from bench_utils.sweep.workers import server_environment

    base = {"PATH": "/bin", "TORCHINDUCTOR_CACHE_DIR": "/a", "TRITON_CACHE_DIR": "/b"}
    changed = base | {"TORCHINDUCTOR_CACHE_DIR": "/c", "PATH": "/usr/bin"}
    assert server_environment(base) == server_environment(changed)  # read on use: no new server
    # read once, when the server imports torch._inductor / torch._dynamo: a new server
    for name in ("TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHDYNAMO_VERBOSE", "TORCH_LOGS", "OMP_NUM_THREADS"):
        assert server_environment(base | {name: "1"}) != server_environment(base), name


def test_a_fresh_worker_finds_the_compiler_and_model_classes_imported():
    """The fork server imported them once (measure/worker.py): a worker pays none of it."""
    import sys as _sys
    from bench_utils.measure import worker  # what the server preloads

    assert "torch._dynamo" in _sys.modules and "torch._inductor.compile_fx" in _sys.modules
    assert "transformers.models.vit.modeling_vit" in _sys.modules and worker.MODELS


def test_a_stopped_fork_server_fails_the_start_within_a_deadline_and_is_replaced(tmp_path, monkeypatch):
    """Starting a worker waits on the fork server: a stopped one (SIGSTOP) is killed at the deadline,
    the worker is lost with one line, and the next worker starts a new server."""
    import threading

    from bench_utils.sweep import workers

    Worker(tmp_path / "a.log", timeout_s=60.0).close()  # the server is up
    server = forkserver._forkserver._forkserver_pid
    monkeypatch.setattr(workers, "SERVER_START_S", 2.0, raising=False)
    os.kill(server, signal.SIGSTOP)
    made = []
    starting = threading.Thread(target=lambda: made.append(Worker(tmp_path / "b.log", timeout_s=1.0)), daemon=True)
    starting.start()
    starting.join(120)
    if starting.is_alive():  # no deadline: free the thread before failing
        os.kill(server, signal.SIGKILL)
        pytest.fail("starting a worker waited on a stopped fork server with no deadline")
    with pytest.raises(WorkerLost) as lost:
        made[0].ask("exit")
    made[0].close()
    assert lost.value.status == "crashed" and lost.value.error.startswith(
        "the fork server started no worker within 2 s (stopped or starved); it was killed")
    after = Worker(tmp_path / "c.log", timeout_s=60.0)
    after.close()
    assert forkserver._forkserver._forkserver_pid != server and after.process.exitcode == 0


def _half_reply(conn) -> None:
    """A worker's half of a reply: a length header promising 1,000 bytes, then 10 of them, then silence."""
    os.write(conn.fileno(), (1000).to_bytes(4, "big") + b"x" * 10)
    time.sleep(600)


def test_a_worker_stopped_halfway_through_its_reply_is_killed_at_the_deadline(tmp_path, monkeypatch):
    """A reply that began to arrive gets REPLY_GRACE_S to arrive whole; then the worker is killed and
    the reply is a timeout, not a wait without end."""
    import multiprocessing
    import threading

    from bench_utils.sweep import workers

    monkeypatch.setattr(workers, "REPLY_GRACE_S", 1.0, raising=False)
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe()
    child = context.Process(target=_half_reply, args=(theirs,), daemon=True)
    child.start()
    theirs.close()
    worker = Worker.__new__(Worker)  # a Worker around a process that sends half a reply
    worker.conn, worker.process, worker.lost = ours, child, None
    worker.log_path, worker.timeout_s = tmp_path / "half.log", 1.0
    worker.started = time.perf_counter()
    worker.deadline = worker.started + 1.0
    caught = []

    def receive() -> None:
        try:
            worker.receive()
        except WorkerLost as lost:
            caught.append(lost)

    waiting = threading.Thread(target=receive, daemon=True)
    waiting.start()
    waiting.join(120)
    if waiting.is_alive():
        child.kill()
        pytest.fail("a half-sent reply held the runner with no deadline")
    assert caught[0].status == "timeout" and caught[0].error.startswith("no whole reply after timeout_s=1 s")
    assert not child.is_alive()


def test_a_worker_the_oom_killer_ends_is_oom_not_crashed(tmp_path, monkeypatch):
    """Past a container's memory cap no allocation fails: the kernel's OOM killer sends SIGKILL. When
    its count rose while the worker ran, the worker's row says oom (a batch too large), not crashed."""
    from bench_utils.sweep import workers

    kills = iter([3, 4])  # the OOM killer's count when the worker started, then after it died
    monkeypatch.setattr(workers, "oom_kills", lambda: next(kills))
    worker = Worker(tmp_path / "oom.log", timeout_s=120.0)
    try:
        with pytest.raises(WorkerLost) as lost:
            worker.ask("cell", cell_payload("vit/1/eager=sigkill", tmp_path))
    finally:
        worker.close()
    assert lost.value.status == "oom"
    assert lost.value.error.startswith("the kernel's out-of-memory killer ended the worker process (SIGKILL")
    monkeypatch.setattr(workers, "oom_kills", lambda: 3)  # no OOM kill meanwhile: a SIGKILL is a crash
    worker = Worker(tmp_path / "kill.log", timeout_s=120.0)
    try:
        with pytest.raises(WorkerLost) as lost:
            worker.ask("cell", cell_payload("vit/1/eager=sigkill", tmp_path))
    finally:
        worker.close()
    assert lost.value.status == "crashed" and lost.value.error.startswith("worker process killed by SIGKILL")


def test_the_oom_killers_count_is_read_from_the_cgroup_or_the_machine(tmp_path, monkeypatch):
    from bench_utils.measure import memory_room

    proc, cgroup = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "self").mkdir(parents=True)
    (cgroup / "box").mkdir(parents=True)
    (proc / "vmstat").write_text("pgfault 10\noom_kill 7\n")
    (proc / "meminfo").write_text("MemTotal: 8000000 kB\nMemAvailable:    4000000 kB\n")
    (proc / "self" / "cgroup").write_text("0::/box\n")
    monkeypatch.setattr(memory_room, "PROC", proc)
    monkeypatch.setattr(memory_room, "CGROUP", cgroup)
    assert memory_room.oom_kills() == 7 and memory_room.available_bytes() == 4000000 * 1024  # no cgroup limit
    (cgroup / "box" / "memory.max").write_text("1073741824\n")
    (cgroup / "box" / "memory.current").write_text("73741824\n")
    (cgroup / "box" / "memory.events").write_text("low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n")
    assert memory_room.oom_kills() == 2 and memory_room.available_bytes() == 1_000_000_000  # the container's cap
    (cgroup / "box" / "memory.max").write_text("max\n")
    assert memory_room.available_bytes() == 4000000 * 1024


def test_a_cgroup_v1_memory_cap_is_read_and_refuses_a_model_that_cannot_fit(tmp_path, monkeypatch):
    """Older container hosts mount cgroup v1: the memory controller's cap (memory.limit_in_bytes less
    memory.usage_in_bytes) bounds the room, and the size check refuses a checkpoint past it before
    building it (without v1 the machine's free memory was read and the kernel killed the worker)."""
    import transformers

    from bench_utils.measure import memory_room
    from bench_utils.measure.models import check_room

    proc, cgroup = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "self").mkdir(parents=True)
    box = cgroup / "memory" / "docker" / "abc"
    box.mkdir(parents=True)
    (proc / "vmstat").write_text("oom_kill 7\n")
    (proc / "meminfo").write_text("MemAvailable:    24000000 kB\n")
    (proc / "self" / "cgroup").write_text("12:pids:/docker/abc\n4:cpu,cpuacct:/docker/abc\n"
                                          "9:memory:/docker/abc\n0::/\n")  # v2 listed, no memory.max there
    (box / "memory.limit_in_bytes").write_text(f"{3 * 2**30}\n")
    (box / "memory.usage_in_bytes").write_text(f"{2**30}\n")
    (box / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
    monkeypatch.setattr(memory_room, "PROC", proc)
    monkeypatch.setattr(memory_room, "CGROUP", cgroup)
    assert memory_room.available_bytes() == 2 * 2**30 and memory_room.oom_kills() == 3
    big = transformers.ViTConfig(hidden_size=2048, intermediate_size=8192, num_hidden_layers=24)  # ~1.2 B
    with pytest.raises(MemoryError, match=r"1\.2\d B parameters.*more than the 2 GiB of memory available"):
        check_room(transformers.ViTModel, big, "float32", "cpu")
    (box / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # v1's "no cap"
    assert memory_room.available_bytes() == 24000000 * 1024


def test_a_gpu_profiles_worker_is_spawned_not_forked_from_the_server_and_works(tmp_path):
    # a fork of a process that asked CUDA anything cannot use CUDA, and the fork server's imports may
    # ask (torch 2.11's inductor calls torch.cuda.is_available() at import): on a GPU, workers spawn
    worker = Worker(tmp_path / "gpu.log", timeout_s=120.0, device="cuda")
    try:
        assert type(worker.process).__name__ == "SpawnProcess"
        with pytest.raises(WorkerLost) as lost:  # a real worker: it runs the job it is sent
            worker.ask("cell", cell_payload("vit/1/eager=segfault", tmp_path))
        assert re.fullmatch(KILLED.format("SIGSEGV"), lost.value.error)
    finally:
        worker.close()
    import torch

    auto = "SpawnProcess" if torch.cuda.is_available() else "ForkServerProcess"  # as the worker resolves it
    for device, kind in (("cpu", "ForkServerProcess"), ("auto", auto)):
        other = Worker(tmp_path / f"{device}.log", timeout_s=60.0, device=device)
        try:
            assert type(other.process).__name__ == kind
        finally:
            other.close()


def test_a_spawned_worker_whose_imports_fail_leaves_the_traceback_in_its_log(tmp_path, monkeypatch):
    # a spawned worker detaches into its log before it imports torch: the failure is the row's to quote
    monkeypatch.setenv("TORCH_LOGS", "no_such_log_setting")  # torch's import refuses it
    worker = Worker(tmp_path / "bad.log", timeout_s=120.0, device="cuda")
    try:
        with pytest.raises(WorkerLost) as lost:
            worker.ask("cell", cell_payload("", tmp_path))
        assert lost.value.status == "crashed" and "no_such_log_setting" in lost.value.error
        assert "no_such_log_setting" in (tmp_path / "bad.log").read_text()
    finally:
        worker.close()


def test_a_spare_answers_once_imported_and_its_output_moves_into_its_jobs_log(tmp_path):
    # forked here (the same worker loop a spawned spare runs on a GPU, sweep/workers.Spares)
    logs = tmp_path / "logs"
    spares = Spares(logs, lambda path, timeout_s: Worker(path, timeout_s))
    try:
        spares.start(2)
        spares.wait()  # both answered a ping: their imports are done
        assert len(spares.idle) == 2 and not spares.unanswered
        worker = spares.take(logs / "vit-bs1-eager-r0.log", 60.0)
        assert worker.log_path == logs / "vit-bs1-eager-r0.log" and worker.timeout_s == 60.0
        worker.close()  # "exit": written to the job's log
        text = (logs / "vit-bs1-eager-r0.log").read_text()
        assert text.index("worker: ping") < text.index("worker: log") < text.index("worker: exit")
        assert not (logs / "spare-1.log").exists()  # moved, not left beside the job logs
    finally:
        spares.close()
    assert not spares.idle and not (logs / "spare-2.log").exists()  # an unused spare's log goes with it


def test_a_spare_started_under_another_environment_is_not_used(tmp_path, monkeypatch):
    # a variable read when torch is imported (OMP_NUM_THREADS, TORCHINDUCTOR_*) changed since it started
    spares = Spares(tmp_path / "logs", lambda path, timeout_s: Worker(path, timeout_s))
    try:
        spares.start(1)
        monkeypatch.setenv("OMP_NUM_THREADS", "1" if os.environ.get("OMP_NUM_THREADS") != "1" else "2")
        assert spares.take(tmp_path / "logs" / "job.log", 60.0) is None and not spares.idle
    finally:
        spares.close()


def test_a_spare_whose_imports_fail_is_dropped_and_never_given_a_job(tmp_path, monkeypatch):
    # spawned, as on a GPU: a spare that dies importing is dropped (killed, its log removed), whether the runner
    # waits for the spares or takes one for a job; the job then starts a worker of its own, whose row quotes
    # its own log (test_a_spawned_worker_whose_imports_fail_leaves_the_traceback_in_its_log)
    monkeypatch.setenv("TORCH_LOGS", "no_such_log_setting")  # torch's import refuses it
    logs = tmp_path / "logs"
    spares = Spares(logs, lambda path, timeout_s: Worker(path, timeout_s, device="cuda"))
    try:
        spares.start(2)
        assert spares.take(logs / "job.log", 120.0) is None  # both died importing: none to give
        assert not spares.idle and not spares.unanswered and not list(logs.glob("spare*.log"))
        spares.start(1)
        spares.wait()
        assert not spares.idle and not list(logs.glob("spare*.log"))
    finally:
        spares.close()


def test_a_spare_asked_long_after_its_start_is_not_taken_for_lost(tmp_path, monkeypatch):
    # a fresh round's compiles may outlast a spare's start deadline (SERVER_START_S): the runner's wait
    # gives an imported spare REPLY_GRACE_S from now to answer, not a deadline that passed while it waited
    from bench_utils.sweep import workers

    monkeypatch.setattr(workers, "SERVER_START_S", 2.0)
    spares = Spares(tmp_path / "logs", lambda path, timeout_s: Worker(path, timeout_s))
    try:
        spares.start(1)
        time.sleep(3.0)  # past its deadline, imported (forked from the preloaded server)
        spares.wait()
        assert len(spares.idle) == 1 and spares.idle[0][0].process.is_alive()
    finally:
        spares.close()


def test_an_error_names_the_log_only_where_it_holds_the_jobs_own_lines(tmp_path):
    worker = Worker.__new__(Worker)  # its log alone: no process needed
    worker.log_path, worker.spare_log = tmp_path / "w.log", None
    worker.log_path.write_text("worker: block (round 0)\n")  # the runner's commands only
    assert worker.log_words() == ""
    worker.log_path.write_text("worker: block (round 0)\nRuntimeError: boom\n")
    assert worker.log_words() == "; log: RuntimeError: boom"


STOPPED_RUNNER = """
import sys, time
from pathlib import Path
from bench_utils.sweep.workers import Worker, WorkerLost
worker = Worker(Path(sys.argv[1]), timeout_s=3.0)
print(worker.ask("ping")[0], flush=True)  # its imports done
worker.new_deadline()
print("waiting", flush=True)
time.sleep(1.0)  # the test stops this process here, past the worker's 3 s
try:
    print(worker.ask("ping")[0], flush=True)
except WorkerLost as lost:
    print(lost.status, flush=True)
worker.close()
"""


def test_a_runner_stopped_past_the_deadline_does_not_time_out_the_worker_that_waited_on_it(tmp_path):
    """A runner stopped (Ctrl-Z, SIGSTOP) past timeout_s, then continued, found its worker's deadline
    passed: the worker, which had only waited for its next block, was killed as a `timeout` and its
    later rounds never ran. The deadline is on the runner's awake clock (sweep/awake.py)."""
    import subprocess
    import sys

    runner = subprocess.Popen([sys.executable, "-c", STOPPED_RUNNER, str(tmp_path / "w.log")],
                              stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parent.parent)
    try:
        assert runner.stdout.readline().strip() == "pong"
        assert runner.stdout.readline().strip() == "waiting"
        runner.send_signal(signal.SIGSTOP)
        time.sleep(8.0)  # past the worker's timeout_s (3 s)
        runner.send_signal(signal.SIGCONT)
        assert runner.stdout.readline().strip() == "pong"  # not "timeout"
        assert runner.wait(60) == 0
    finally:
        runner.kill()


def test_the_awake_clock_leaves_out_the_time_its_process_was_stopped():
    import subprocess
    import sys

    code = ("import sys, time; from bench_utils.sweep import awake; a, m = awake.now(), time.monotonic(); "
            "print('ready', flush=True); sys.stdin.readline(); print(awake.now() - a, time.monotonic() - m)")
    clock = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parent.parent)
    try:
        assert clock.stdout.readline().strip() == "ready"
        clock.send_signal(signal.SIGSTOP)
        time.sleep(7.0)
        clock.send_signal(signal.SIGCONT)
        awake_s, wall_s = map(float, clock.communicate("go\n", timeout=60)[0].split())
        assert wall_s >= 7.0 and awake_s < 3.0, (awake_s, wall_s)
    finally:
        clock.kill()
