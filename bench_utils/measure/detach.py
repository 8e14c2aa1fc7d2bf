"""A worker's first step, before it imports torch: its own session, its output in its job's log, and
its end tied to its parent's. A spawned worker (on a GPU: sweep/workers.py) imports torch and
transformers after this, so an import that fails leaves its traceback in the log the row quotes, not
on the runner's terminal. No torch here.
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
    log = open_fresh(Path(log_path))  # a link planted at the log's name is removed, never written through
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
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
