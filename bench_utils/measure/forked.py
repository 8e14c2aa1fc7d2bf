"""A prepared process that measures each round in a fresh process forked from it (CPU).

Why: a round's interval needs independent samples, and a new process was one only after it had built,
compiled and warmed up its model again (5-15 s of warm compile on a 2-core CPU for 2-4 s of timing).
A process forked from one that has compiled holds the compiled code, the weights and the warm caches
at the cost of a fork (milliseconds): its own allocator state, threads and pages from there on, and no
compile (docs/method.md, "A round in a process of its own").

The catch is OpenMP. GNU libgomp, torch's OpenMP on Linux, is not fork-safe: a process forked after
its main thread ran a parallel region hangs at its first parallel region (measured: a 512x512 matmul
in the parent, then one in the child, hangs). A thread team belongs to the thread that started it,
so the prepared process (the *template*) computes only in threads of its own (`Compute`) and forks
from its main thread, which never ran one: the child's main thread starts a team of its own. Each of
those threads has ended before the fork: libgomp counts the threads it manages process-wide, a fork
inherits the count, and a count above the CPUs makes every team's idle threads sleep at once instead
of spinning between parallel regions (libgomp's throttled spin count). Forked from a template whose
computing thread lived on, ResNet-50's eager call took about 1.5x as long as in a fresh process on a
2-core CPU (the second thread busy 42% of the time, not 99%); from one whose thread had ended, as long
(benchmarks/README.md#forked-rounds). Thread-local state (inference mode, autocast) is entered again in
the child (CellProcess.forked).

The conversation: the template hands its pipe to the child for the round (the child replies to the
runner's "block", "finish" and "profile" as a worker does) and waits for it to end. The runner's
"release" ends the child and the template listens again; "exit" ends both. A child that dies any
other way takes the template with it, by the same signal or exit status, so the runner sees the death
where it always has (sweep/workers.py) and a killed child's row is its round's, as before.
"""

from __future__ import annotations

import contextlib
import gc
import mmap
import os
import signal
import struct
import sys
import threading
import traceback

RELEASE, EXIT = "release", "exit"  # runner -> child: the round is over / the worker ends
_EXIT_ALL = 3  # a child's exit status for "exit": the template ends too
_RELEASED = 0  # ... for "release": the template listens for the next round


def forks(device: str) -> bool:
    """Does a worker on `device` measure its rounds in forked processes? On a CPU. A fork of a process
    that used CUDA cannot use it ("Cannot re-initialize CUDA in forked subprocess"): on a GPU a worker
    measures its rounds itself (sweep/workers.py, _context)."""
    return device == "cpu"


class Compute:
    """Runs the template's computing in threads of their own, each ended before the call returns: torch's
    parallel regions start their OpenMP team from it, never from the main thread that forks, and the
    team's threads end with it (the module's docstring says why both matter). Made on the main thread,
    which it gives the fake CUDA device guard first (`own_fake_cuda_guard`)."""

    def __init__(self):
        own_fake_cuda_guard()

    def run(self, fn, *args):
        """fn(*args) in a new thread, joined; its result, or its exception raised here."""
        outcome: dict = {}

        def call() -> None:
            try:
                outcome["result"] = fn(*args)
            except BaseException as err:  # noqa: BLE001 - raised again in the calling thread
                outcome["error"] = err

        before = _native_threads()
        thread = threading.Thread(target=call, name="compute")
        thread.start()
        thread.join()
        _wait_for_native_threads_to_end(before)
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("result")


def own_fake_cuda_guard() -> None:
    """Have this thread (the main one, which lives as long as the process) own the no-op CUDA device
    guard that tracing puts in torch's process-wide registry where a CUDA build sees no GPU. torch 2.11's
    FakeTensorMode, which every compile's tracing enters, makes that guard the first time, owned by the
    entering thread (c10/core/impl/DeviceGuardImplInterface.cpp: a thread_local unique_ptr, the registry
    keeping a plain pointer to it): a compute thread's, freed when it ends, and the next compile in any
    thread (a fork's warm compile) segfaults at the registry's dangling pointer (torch 2.11's CUDA build on
    a CPU machine; torch 2.14 is not affected: benchmarks/README.md#zen5-fake-cuda-guard). Made here first, later
    threads find a guard with devices and leave it. It does nothing where the GPU is real or torch has
    no CUDA."""
    import torch

    ensure = getattr(torch._C, "_ensureCUDADeviceGuardSet", None)  # private: absent, nothing to own
    if ensure is not None:
        ensure()


THREADS_END_S = 2.0  # how long the OpenMP team of an ended compute thread may take to end, seconds


def _native_threads() -> set[int]:
    return {int(tid) for tid in os.listdir("/proc/self/task")}


def _wait_for_native_threads_to_end(before: set[int]) -> None:
    """Wait until the threads a compute thread started outside Python (its OpenMP team) have ended. Its
    team is told to end when it ends, but ends on its own time, and a thread ending runs its libraries'
    destructors under their locks (MKL's memory manager frees the thread's buffers): a fork then would
    copy a held lock into the child, which hangs at its first matrix product (seen: a child spinning in
    MKL's mm_account_ptr_by_tid). Threads of Python's own (threading) are not waited for."""
    import time

    deadline = time.monotonic() + THREADS_END_S
    while time.monotonic() < deadline:
        python = {thread.native_id for thread in threading.enumerate()}
        if not (_native_threads() - before - python):
            return
        time.sleep(0.001)
    print(f"worker: threads still running {THREADS_END_S:g} s after the compute thread ended: "
          f"{sorted(_native_threads() - before)}", flush=True)


def measure_round(conn, process, repeat: int, first: bool) -> bool:
    """Fork a process that measures round `repeat` of the prepared `process` (a CellProcess) over
    `conn`, and wait for it to end. True when the worker goes on (the child was released); False when
    it must end (the runner said "exit"). A child that died otherwise ends this process the same way."""
    from .device_memory import peak_rss_mb

    process.before_fork_mb = peak_rss_mb()  # the compile's peak, which the child's own count leaves out
    process.before_fork()
    steady = _SteadyLatency()
    sys.stdout.flush()
    sys.stderr.flush()
    freeze_heap()
    pid = os.fork()
    if pid == 0:
        _child(conn, process, repeat, first, steady)  # never returns
    _, status = os.waitpid(pid, 0)
    process.prepared_call_s = steady.read() or process.prepared_call_s  # the next fork's warm-up starts from it
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) in (_RELEASED, _EXIT_ALL):
        return os.WEXITSTATUS(status) == _RELEASED
    _share_fate(status)
    return False


def freeze_heap() -> None:
    """Every Python object the template holds moved out of the cyclic collector's reach (gc.freeze) just
    before a fork: a full collection in the child walks every tracked object, its reference counts
    written, so each page of the template's heap (torch, transformers, the model: 100+ MB) is copied on
    write in the middle of whatever the child times: hundreds of minor page faults a call in the block a
    collection falls in, its calls about 4x slower, and which block that is moves with every allocation
    before it (benchmarks/README.md#zen2-default-report). What the child allocates itself is collected as
    before; the first collection here costs about 0.2 s, later ones walk only what came since."""
    gc.collect()
    gc.freeze()


def _share_fate(status: int) -> None:
    """End this process as its child ended: by its signal (a segfault, the OOM killer's SIGKILL) or its
    exit status, so the runner's reading of a worker's death (sweep/workers.Worker.receive) holds."""
    sys.stdout.flush()
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        print(f"worker: the round's forked process was killed by signal {number}", flush=True)
        with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


class _SteadyLatency:
    """A latency per call, seconds, that a round's process hands back to its template through a page
    they share: the median it timed, where the next round's process starts its warm-up
    (timing.warm_until_steady's steady_s; the template's own few calls are not steady yet)."""

    def __init__(self):
        self._page = mmap.mmap(-1, 8)

    def write(self, seconds: float) -> None:
        self._page[:8] = struct.pack("d", seconds)

    def read(self) -> float:
        value = struct.unpack("d", self._page[:8])[0]
        return value if value > 0 else 0.0


def _child(conn, process, repeat: int, first: bool, steady: _SteadyLatency) -> None:
    """The forked process: measure the round, answer the runner until it releases us; never returns."""
    code = 1
    try:
        _die_with_parent()
        process.forked(repeat, first)
        conn.send(("failed", process.finish()) if process.failed else ("ready", None))
        code = _serve_round(conn, process, steady)
    except BaseException:  # noqa: BLE001 - any failure here ends the child; its parent reports it
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _serve_round(conn, process, steady: _SteadyLatency) -> int:
    """The round's conversation (measure/worker.py's messages); the exit status for the template."""
    while True:
        command, payload = conn.recv()
        print(f"worker: {command} (round {process.repeat}, forked)", flush=True)
        if command == "block":
            process.time_block(payload.after_switch, payload.hand_over)
            conn.send(("failed", process.finish()) if process.failed else ("timed", None))
        elif command == "finish":
            row = process.finish()
            if row.status == "ok":
                steady.write(row.latency_ms_median / 1000.0)
            conn.send(("row", row))
        elif command == "profile":
            conn.send(("profile", process.profile()))
        elif command in (RELEASE, EXIT):
            process.at_exit()
            return _RELEASED if command == RELEASE else _EXIT_ALL
        else:
            raise RuntimeError(f"a forked round process got {command!r}")


def _die_with_parent() -> None:
    """SIGKILL when the template dies (a fork does not inherit the parent's PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except OSError:
        pass
