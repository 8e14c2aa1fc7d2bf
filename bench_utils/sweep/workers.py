"""Measuring processes, seen from the runner: start one, ask it something, kill it. No torch here (but
for asking whether an auto profile's workers will use CUDA, `uses_cuda`).

On a CPU, workers are forked from multiprocessing's fork server, which imports torch, its compiler and
transformers' model classes once (measure/worker.py is its preloaded module): a worker is a fresh
process (its own allocator, dynamo caches, CUDA context) that starts in milliseconds (docs/method.md,
"Workers are cheap"). A worker gets the runner's environment with every job; variables read when
torch is imported (OMP_NUM_THREADS, ...) are the server's, and the server is restarted when one of
those changes. On a GPU they are spawned (`_context` says why).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import signal
import threading
from multiprocessing import forkserver
from pathlib import Path

from ..measure.memory_room import oom_kills
from . import awake

WORKER_MODULE = "bench_utils.measure.worker"
LOG_TAIL_CHARS = 2000  # how much of a crashed worker's log goes into its row's error text
# read once, when torch (and its OpenMP and MKL runtimes) is imported in the fork server
IMPORT_TIME_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
                         "KMP_BLOCKTIME", "CUDA_VISIBLE_DEVICES", "PYTHONPATH", "LD_PRELOAD")
# ... and by torch._inductor.config and torch._dynamo.config, which the server imports: their
# variables, except the cache folders, which Inductor and Triton read on every use
IMPORT_TIME_PREFIXES = ("TORCHINDUCTOR_", "TORCHDYNAMO_", "TORCH_COMPILE_", "TORCH_LOGS")
RUNTIME_VARIABLES = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
EXIT_WAIT_S = 10.0  # a worker asked to exit gets this long before it is killed (nothing long is left for its
# exit: a cold compile merged its cache before replying "ready", measure/cell.py)
# Starting a worker waits on the fork server (its first start imports torch, 10-20 s on a 2-core CPU):
# at most this long, or timeout_s if longer; a server that does not answer (stopped, starved) is
# killed and the next worker starts a new one
SERVER_START_S = 180.0
# A reply that has begun to arrive when the deadline passes gets this long to arrive whole (a worker
# stopped halfway through sending a large row must not hold the runner)
REPLY_GRACE_S = 30.0
POLL_S = 1.0  # a wait for a reply looks at the awake clock this often: a stop it spans is then taken off

_server_environment: dict | None = None


class WorkerLost(RuntimeError):
    """A worker that gave no reply: it ran past its deadline (killed) or died."""

    def __init__(self, status: str, error: str):
        super().__init__(error)
        self.status, self.error = status, error


def _context(device: str):
    """How a worker starts: on a CPU, forked from the fork server (restarted when an import-time
    variable changed since it started); on a GPU, spawned, a fresh interpreter that imports torch
    itself. A fork of a process that has asked CUDA anything (even `torch.cuda.is_available()`, which
    registers torch's fork guard) cannot use CUDA ("Cannot re-initialize CUDA in forked subprocess"),
    and the server's imports may ask: torch 2.11's `torch/_inductor/runtime/benchmarking.py` calls
    `torch.cuda.is_available()` at import (benchmarks/README.md#gpu-h200-probe). A spawned worker
    starts in seconds (its imports), not milliseconds; `plan` counts it (sweep/plan.py, START_S)."""
    global _server_environment
    if uses_cuda(device):
        return multiprocessing.get_context("spawn")
    wanted = server_environment(os.environ)
    if _server_environment is not None and wanted != _server_environment:
        forkserver._forkserver._stop()  # the next start launches a server with today's environment
    _server_environment = wanted
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([WORKER_MODULE])
    return context


@functools.cache
def uses_cuda(device: str) -> bool:
    """Will a worker of a `device` profile use CUDA? "auto" asks torch as the worker will
    (environment.resolve_device), once per process, not at every worker's start; the runner of an auto
    profile imported torch already, to fit it to the GPU (environment.ready_here)."""
    if device == "auto":
        from ..measure.environment import resolve_device

        device = resolve_device("auto")
    return device != "cpu"


def server_environment(environ) -> dict:
    """The variables a fork server reads once, at its start, with their values in `environ`."""
    fixed = {name: environ.get(name) for name in IMPORT_TIME_VARIABLES}
    return fixed | {name: value for name, value in environ.items()
                    if name.startswith(IMPORT_TIME_PREFIXES) and name not in RUNTIME_VARIABLES}


def within(seconds: float, expire, call):
    """`call()` with a deadline: if it has not returned `seconds` from now (on the awake clock: a stop of
    the runner does not count), `expire()` runs (in a watching thread) and must end what `call` waits on
    (kill the process it reads from), so `call` returns or raises. Returns (call's result, whether
    expire ran)."""
    expired, done = threading.Event(), threading.Event()
    deadline = awake.now() + max(0.0, seconds)

    def watch() -> None:
        while not done.wait(max(0.0, min(deadline - awake.now(), POLL_S))):
            if awake.now() >= deadline:
                expired.set()
                expire()
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        return call(), expired.is_set()
    except BaseException as err:
        err.expired = expired.is_set()  # what the caller's except clause reads
        raise
    finally:
        done.set()
        watcher.join()  # what expire() ended is gone before the caller goes on


def _kill_fork_server() -> None:
    pid = forkserver._forkserver._forkserver_pid
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _worker_main(conn, log_path: str) -> None:
    """In the worker: its own session and log first (a spawned worker's imports come after, and may
    fail), then the measuring loop."""
    from ..measure.detach import detach

    detach(log_path)
    from ..measure.worker import serve

    serve(conn)


def signal_name(number: int) -> str:
    """'SIGSEGV' for 11; numbers without a name (most real-time signals) as 'signal 40'."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def log_tail(log_path: Path) -> str:
    """The log's last lines that are the job's (not the runner's commands): read from its end only, so
    a worker that wrote gigabytes costs the runner nothing."""
    from ..files import read_tail

    text = read_tail(log_path, 64 * LOG_TAIL_CHARS)
    lines = [line for line in text.strip().splitlines() if line.strip() and not line.startswith("worker: ")]
    return " | ".join(lines[-5:])[-LOG_TAIL_CHARS:]


class Worker:
    """One measuring process with a deadline: `timeout_s` seconds from its start, or from the start of
    the round it measures now (`new_deadline`), for everything it is asked in that round."""

    spare_log: Path | None = None  # a spare's (Spares): the log it wrote before it was given its job

    def __init__(self, log_path: Path, timeout_s: float, device: str = "cpu"):
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path, self.timeout_s = log_path, timeout_s
        context = _context(device)
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, str(log_path)))
        self.lost: WorkerLost | None = None  # why it never started: receive() raises it
        self.oom_kills = oom_kills()  # the OOM killer's count before it: a SIGKILL after it rose is memory
        start_s = max(timeout_s, SERVER_START_S)
        try:
            if context.get_start_method() == "forkserver":
                within(start_s, _kill_fork_server, self.process.start)
            else:  # spawned: no server to wait on (the new interpreter's imports come after start returns)
                self.process.start()
        except (EOFError, OSError) as err:
            if not getattr(err, "expired", False):
                raise
            forkserver._forkserver._stop()  # the killed server is reaped; the next worker starts a new one
            self.lost = WorkerLost("crashed", f"the fork server started no worker within {start_s:g} s (stopped "
                                              "or starved); it was killed, the next worker starts a new one")
        child.close()
        self.started = awake.now()
        self.deadline = self.started + timeout_s

    def adopt(self, log_path: Path, timeout_s: float) -> None:
        """A spare (Spares) given its job: its output moves to the job's log, its deadline is the job's."""
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.send("log", (str(self.log_path), str(log_path)))
        self.spare_log, self.log_path, self.timeout_s = self.log_path, log_path, timeout_s
        self.new_deadline()

    def log_tail(self) -> str:
        """The end of its log (log_tail), or of the log it wrote as a spare if it died before it moved."""
        return log_tail(self.log_path) or (log_tail(self.spare_log) if self.spare_log else "")

    def log_words(self) -> str:
        """"; log: <its last lines>" for an error's end, or nothing where the log holds none of the job's
        own lines (a worker killed before it printed: "log: " with nothing after it read as cut off)."""
        tail = self.log_tail()
        return f"; log: {tail}" if tail else ""

    def allow(self, seconds: float) -> None:
        """Its deadline at least `seconds` from now (a spare asked long after its start: Spares.wait)."""
        self.deadline = max(self.deadline, awake.now() + seconds)

    def new_deadline(self) -> None:
        """A later round of the same process: `timeout_s` from now, and its `seconds` counted from now."""
        self.started = awake.now()
        self.deadline = self.started + self.timeout_s

    def send(self, command: str, payload=None) -> None:
        with contextlib.suppress(OSError):  # the worker is gone: receive() says how
            self.conn.send((command, payload))

    def receive(self) -> tuple[str, object]:
        """The worker's reply; WorkerLost if it passes its deadline (it is then killed), dies, or never
        started."""
        if self.lost is not None:
            raise self.lost
        if not self._poll_until_deadline():
            self.kill()
            raise WorkerLost("timeout", f"no result after timeout_s={self.timeout_s:g} s{self.log_words()}")
        try:  # a reply begun is given REPLY_GRACE_S past the deadline to arrive whole
            return within(max(self.deadline - awake.now(), REPLY_GRACE_S), self.kill, self.conn.recv)[0]
        except (EOFError, OSError) as err:
            if getattr(err, "expired", False):
                raise WorkerLost("timeout", f"no whole reply after timeout_s={self.timeout_s:g} s"
                                            f"{self.log_words()}") from None
            self.process.join(5)
            code = self.process.exitcode
            if code == -signal.SIGKILL and self.out_of_memory():
                raise WorkerLost("oom", "the kernel's out-of-memory killer ended the worker process (SIGKILL: past "
                                        f"the machine's or the container's memory){self.log_words()}"
                                 ) from None
            reason = f"killed by {signal_name(-code)}" if code is not None and code < 0 else f"exit code {code}"
            raise WorkerLost("crashed", f"worker process {reason}{self.log_words()}") from None

    def _poll_until_deadline(self) -> bool:
        """Has a reply begun to arrive before the deadline? Waited for in slices of at most POLL_S, on the
        runner's awake clock (awake.py): a runner stopped past the deadline (Ctrl-Z) does not count the
        stop against a worker that was only waiting on it."""
        while True:
            left = self.deadline - awake.now()
            if self.conn.poll(max(0.0, min(left, POLL_S))):
                return True
            if self.deadline <= awake.now():
                return False

    def out_of_memory(self) -> bool:
        """Did the kernel's OOM killer end a process since this worker started (memory_room.oom_kills)?
        The runner never SIGKILLs a worker it still waits on, so a SIGKILL then is the kernel's."""
        now = oom_kills()
        return self.oom_kills is not None and now is not None and now > self.oom_kills

    def ask(self, command: str, payload=None) -> tuple[str, object]:
        self.send(command, payload)
        return self.receive()

    @property
    def exit_code(self) -> int | None:
        """How the process ended once closed: 0, an exit status, or minus the signal that killed it."""
        return self.process.exitcode

    @property
    def seconds(self) -> float:
        """Since its start, or since the start of the round it measures now (new_deadline)."""
        return awake.now() - self.started

    def kill(self) -> None:
        """The worker and every process it started (its own session: compile workers too)."""
        if self.process.pid is None:  # it never started
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.is_alive():  # killed before it made its own session
            self.process.kill()
        self.process.join(5)

    def close(self) -> None:
        """Ask it to exit; kill it if it does not within EXIT_WAIT_S (or is stuck in a job)."""
        if self.process.pid is None:  # it never started
            self.conn.close()
            return
        if self.process.is_alive():
            self.send("exit")
            self.process.join(EXIT_WAIT_S)
        self.kill()  # if it is still there, and its compile workers if any outlived it
        self.conn.close()


class Spares:
    """Workers spawned ahead of their jobs, where a worker is spawned (a GPU's: `_context`) and imports torch,
    its compiler and transformers itself: 14-30 s from the end of the round before to a group's first task on
    a 16-core GPU host, a third of a short run (benchmarks/README.md#plan-constants). The runner starts spares
    while a fresh round's workers compile (`start`, sweep/rounds.py), so the next fresh round finds its
    workers imported, and never lets one import while a round times: `wait` returns once every spare has
    answered the ping it was sent at its start (its imports done), before the round's first block; `importing`
    says how many are still at it (the rows of compiles beside them say so). A spare keeps the environment it
    was spawned with; one spawned under another (an import-time variable changed since) is not used."""

    def __init__(self, folder: Path, start, name: str = ""):
        """`start(log_path, timeout_s)`: a new Worker (the runner's way of starting one: Sessions.worker);
        `name`: in the spares' log names, apart from another runner's in the same folder."""
        self.folder, self._start, self.name = Path(folder), start, name
        self.idle: list[tuple[Worker, dict]] = []  # (worker, the import-time environment it started with)
        self.unanswered: list[Worker] = []  # started, their ping's answer not yet received
        self.started = 0  # spares spawned so far (their logs' numbers)

    def start(self, count: int) -> int:
        """Spawn spares until `count` are idle, each sent a ping it answers once its imports are done;
        how many it spawned."""
        environment = server_environment(os.environ)
        spawned = 0
        while len(self.idle) < count:
            self.started += 1
            spawned += 1
            worker = self._start(self.folder / f"spare{self.name}-{self.started}.log", SERVER_START_S)
            worker.send("ping")
            self.idle.append((worker, environment))
            self.unanswered.append(worker)
        return spawned

    def importing(self) -> int:
        """Spares still importing now (their answer has not arrived; one that died counts as done)."""
        return sum(not self._answered(worker, block=False) for worker in list(self.unanswered))

    def wait(self) -> None:
        """Block until every spare started has imported (answered its ping); one that does not within
        SERVER_START_S of its start (and REPLY_GRACE_S of now, however long the runner took to ask), or
        died, is dropped (the job it would have taken spawns a worker of its own, whose row then says
        what fails)."""
        for worker in list(self.unanswered):
            worker.allow(REPLY_GRACE_S)
            self._answered(worker, block=True)

    def _answered(self, worker: Worker, block: bool) -> bool:
        """Has `worker` answered its ping (received here, once)? Without `block`, only if it has already;
        a spare lost on the way is dropped (True: it imports no more)."""
        if not block and not worker.conn.poll(0):
            return False
        try:
            worker.receive()
        except WorkerLost:
            self._drop(worker)
        self.unanswered = [spare for spare in self.unanswered if spare is not worker]
        return True

    def _drop(self, worker: Worker) -> None:
        """A spare that will not serve: killed, its pipe closed, its log removed, forgotten."""
        self.idle = [(spare, env) for spare, env in self.idle if spare is not worker]
        self.unanswered = [spare for spare in self.unanswered if spare is not worker]
        worker.kill()
        worker.conn.close()
        Path(worker.log_path).unlink(missing_ok=True)

    def take(self, log_path: Path, timeout_s: float) -> Worker | None:
        """An idle spare adopted for the job whose log is `log_path` (Worker.adopt), or None. One still
        importing is waited for first (its answer must not be read as the job's reply)."""
        environment = server_environment(os.environ)
        while self.idle:
            worker, started_with = self.idle[0]
            if started_with != environment or not worker.process.is_alive():
                self._drop(worker)
                continue
            if worker in self.unanswered:
                self._answered(worker, block=True)
                if self.idle[:1] != [(worker, started_with)]:  # it died importing: dropped
                    continue
            self.idle.pop(0)
            worker.adopt(log_path, timeout_s)
            return worker
        return None

    def close(self) -> None:
        """End the idle spares; their logs go with them (they held only imports' output)."""
        for worker, _ in list(self.idle):
            self._drop(worker)
        self.idle, self.unanswered = [], []
