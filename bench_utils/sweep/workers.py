"""Measuring processes, seen from the runner: start one, ask it something, kill it. No torch here.

Workers are forked from multiprocessing's fork server, which imports torch, its compiler and
transformers' model classes once (measure/worker.py is its preloaded module): a worker is a fresh process (its own allocator, dynamo
caches, CUDA context) that starts in milliseconds instead of paying a second or more of imports.
Importing torch does not start OpenMP threads or initialize CUDA, so forking from that server is safe
on CPU and GPU. A worker gets the runner's environment with every job (the server was started with
the environment of its first use); variables read when torch is imported (OMP_NUM_THREADS, ...) are
the server's, and the server is restarted when one of those changes.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from multiprocessing import forkserver
from pathlib import Path

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

_server_environment: dict | None = None


class WorkerLost(RuntimeError):
    """A worker that gave no reply: it ran past its deadline (killed) or died."""

    def __init__(self, status: str, error: str):
        super().__init__(error)
        self.status, self.error = status, error


def _context():
    """The fork-server context, restarted when an import-time variable changed since it started."""
    global _server_environment
    wanted = server_environment(os.environ)
    if _server_environment is not None and wanted != _server_environment:
        forkserver._forkserver._stop()  # the next start launches a server with today's environment
    _server_environment = wanted
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([WORKER_MODULE])
    return context


def server_environment(environ) -> dict:
    """The variables a fork server reads once, at its start, with their values in `environ`."""
    fixed = {name: environ.get(name) for name in IMPORT_TIME_VARIABLES}
    return fixed | {name: value for name, value in environ.items()
                    if name.startswith(IMPORT_TIME_PREFIXES) and name not in RUNTIME_VARIABLES}


def _worker_main(conn, log_path: str) -> None:
    """In the worker (a child of the fork server): the measuring loop."""
    from ..measure.worker import serve

    serve(conn, log_path)


def signal_name(number: int) -> str:
    """'SIGSEGV' for 11; numbers without a name (most real-time signals) as 'signal 40'."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def log_tail(log_path: Path) -> str:
    text = log_path.read_text(errors="replace") if log_path.exists() else ""
    lines = [line for line in text.strip().splitlines() if line.strip() and not line.startswith("worker: ")]
    return " | ".join(lines[-5:])[-LOG_TAIL_CHARS:]


class Worker:
    """One measuring process with a deadline: `timeout_s` seconds from its start, or from the start of
    the round it measures now (`new_deadline`), for everything it is asked in that round."""

    def __init__(self, log_path: Path, timeout_s: float):
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path, self.timeout_s = log_path, timeout_s
        context = _context()
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, str(log_path)))
        self.process.start()
        child.close()
        self.started = time.perf_counter()
        self.deadline = self.started + timeout_s

    def new_deadline(self) -> None:
        """A later round of the same process: `timeout_s` from now, and its `seconds` counted from now."""
        self.started = time.perf_counter()
        self.deadline = self.started + self.timeout_s

    def send(self, command: str, payload=None) -> None:
        try:
            self.conn.send((command, payload))
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the worker is gone: receive() says how

    def receive(self) -> tuple[str, object]:
        """The worker's reply; WorkerLost if it passes its deadline (it is then killed) or dies."""
        if not self.conn.poll(max(0.0, self.deadline - time.perf_counter())):
            self.kill()
            raise WorkerLost("timeout", f"no result after timeout_s={self.timeout_s:g} s; log: "
                                        f"{log_tail(self.log_path)}")
        try:
            return self.conn.recv()
        except (EOFError, ConnectionResetError, OSError):
            self.process.join(5)
            code = self.process.exitcode
            reason = f"killed by {signal_name(-code)}" if code is not None and code < 0 else f"exit code {code}"
            raise WorkerLost("crashed", f"worker process {reason}; log: {log_tail(self.log_path)}") from None

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
        return time.perf_counter() - self.started

    def kill(self) -> None:
        """The worker and every process it started (its own session: compile workers too)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.process.is_alive():  # killed before it made its own session
            self.process.kill()
        self.process.join(5)

    def close(self) -> None:
        """Ask it to exit; kill it if it does not within EXIT_WAIT_S (or is stuck in a job)."""
        if self.process.is_alive():
            self.send("exit")
            self.process.join(EXIT_WAIT_S)
        if self.process.is_alive():
            self.kill()
        else:  # its compile workers, if any outlived it
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.conn.close()
