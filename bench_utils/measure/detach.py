"""A worker's first step, before it imports torch: its own session, its output in its job's log, and
its end tied to its parent's. A spawned worker (on a GPU: sweep/workers.py) imports torch and
transformers after this, so an import that fails leaves its traceback in the log the row quotes, not
on the runner's terminal. A spare, spawned before its job is known (workers.Spares), writes to a log
of its own until it has one, then moves its output there (`move_log`). No torch here.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from ..files import open_fresh


def detach(log_path: str) -> None:
    """Output into the job's log; a session of its own, so the runner can kill the worker and the
    compile workers it forks as one group; SIGKILL if its parent (the fork server on a CPU, the
    runner on a GPU) dies."""
    os.setsid()
    _output_to(open_fresh(Path(log_path)))  # a link planted at the log's name is removed, never written through
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's: it kills us when it must
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except OSError:
        pass
    # the fork server stops when every holder of its "alive" pipe is gone; each worker inherits one:
    # let go of it, so a killed runner stops its server, and the server's death ends us
    from multiprocessing import forkserver

    if forkserver._forkserver._forkserver_alive_fd is not None:
        os.close(forkserver._forkserver._forkserver_alive_fd)
        forkserver._forkserver._forkserver_alive_fd = None


def _output_to(log: int) -> None:
    """This process's stdout and stderr into the open file `log` (which is closed: 1 and 2 hold it)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)


def move_log(spare_log: str, job_log: str) -> None:
    """A spare given its job: its output from now on in the job's log, which starts with what the spare
    wrote so far (its imports' warnings); the spare's own log is removed. A log that cannot be made
    leaves the output where it was, and says so there."""
    try:
        log = open_fresh(Path(job_log))
    except OSError as err:
        print(f"worker: cannot write the job's log {job_log}: {err}; output stays here", flush=True)
        return
    from ..files import read_tail

    os.write(log, read_tail(Path(spare_log), 1 << 20).encode())
    _output_to(log)
    Path(spare_log).unlink(missing_ok=True)
