"""The measuring process: one loop that runs whatever jobs the runner sends over its pipe.

On a CPU the sweep (sweep/rounds.py) forks workers from a server that imported torch and transformers
once (multiprocessing's forkserver with this module preloaded), so a worker starts in milliseconds, not
seconds; on a GPU it spawns them, and each imports this module itself (sweep/workers.py says why). A
worker runs one job at a time and may run several in turn when the runner asks; the sweep keeps a
cell's workers for several rounds of that cell, and no process ever runs two modes.

Messages, runner -> worker, each answered by one reply (tasks and rows travel as the typed objects
they are, pickled by the pipe):
- ("cell", Task) -> ("ready", None) or ("failed", row): build, compile and warm up (measure/cell.py's
  CellProcess.prepare); on a CPU the worker is then a *template* and round `job.repeat` is measured
  in a process forked from it, which sends the reply once it has warmed up (measure/forked.py);
- ("round", NextRound) -> ("ready", None): the prepared cell measures another round (a new row): on a
  CPU in a new forked process, on a GPU in this one; on a CPU the first such round the runner marks
  (`time_warm_compile`: the race's leader) is preceded by a new process's start of the configuration
  (measure/startup.py: in a copy of the worker made before it built anything), which that round's row
  carries; with the profile's `startup`, every configuration's round 0 is;
- ("block", Block) -> ("timed", None) or ("failed", row): one timed block of the prepared cell, after
  an untimed call when another worker ran since this one's last block, and on CUDA with the cached
  memory given back when the next turn is another worker's (task.Block);
- ("finish", None) -> ("row", row): the cell's row;
- ("profile", None) -> ("profile", fields): the profiler's pass over the prepared cell (round 0 with
  `profile`), asked for after the row is safe with the runner;
- ("release", None), no reply: the round is over (a CPU round's forked process ends);
- ("study", Task) -> ("row", row): a whole study process (its measurement: results/studies.py);
- ("ping", None) -> ("pong", None): a spare (sweep/workers.Spares) says its imports are done;
- ("log", (spare log, job log)), no reply: a spare given its job writes its output to the job's log;
- ("exit", None): the worker returns.
Any failure of a job becomes its row's status; only a crash (a signal, os._exit) ends a worker
without its reply, and the runner writes that row itself.
"""

from __future__ import annotations

import os
import sys

import torch  # noqa: F401 - imported once in the fork server: what makes a worker cheap to start
import torch._dynamo  # noqa: F401 - and the compiler, imported at a process's first torch.compile
import torch._inductor.compile_fx  # noqa: F401 - otherwise (1-2 s each on a 2-core CPU)
import transformers

from ..config.registry import MODELS
from . import detach, forked, startup
from ..paths import INDUCTOR_CACHE_ENV, TRITON_CACHE_ENV
from .host_memory import keep_freed_memory
from .task import Task


def _preload_architectures() -> None:
    """Import the registry's model classes in the fork server: transformers imports a class's modeling
    code (and modeling_utils, 1.6 s here) at its first use, which every fresh worker would pay again.
    A class this transformers lacks is left to fail where it is used, with its own message."""
    for spec in MODELS.values():
        try:
            getattr(transformers, spec.model_class)
        except (ImportError, AttributeError, RuntimeError):
            pass


_preload_architectures()


def _use(task: Task) -> None:
    """The runner's environment of now (the fork server's is that of its start: test faults, cache
    folders, hub settings; variables read only when torch was imported stay the server's), and the
    allocator the settings ask for."""
    if task.environ:
        os.environ.clear()
        os.environ.update(task.environ)
    if task.cache_dir is not None:  # Inductor reads it at every cache access; Triton's cache then lives under it
        os.environ[INDUCTOR_CACHE_ENV] = task.cache_dir
        os.environ.pop(TRITON_CACHE_ENV, None)
    if task.cfg.keep_freed_memory:
        keep_freed_memory()


def _study_row(task: Task):
    """A whole study process, with its own empty compiler cache: what it compiles is a first start."""
    from ..results.studies import study

    _use(task)
    return study(task.job.kind).measure(task.cfg, task.job.model, task.job.option, task.results_path)


def serve(conn) -> None:
    """The worker's loop, once it has its own session and log (sweep/workers._worker_main, detach.py).
    On a CPU the worker is a template: it prepares in a thread of its own and measures every round in
    a process forked from itself (measure/forked.py); on a GPU it measures its rounds itself."""
    from .cell import CellProcess
    from .environment import resolve_device

    process = None
    compute = None  # forked.Compute of a template
    zygote = None  # startup.Zygote of a template: a copy of this worker from before it built anything
    while True:
        command, payload = conn.recv()
        print(f"worker: {command}", flush=True)
        if command in ("exit", "cell") and process is not None:
            if compute is None:  # a template's contexts belong to a thread that has ended: nothing to leave
                process.close()  # out of inference mode and autocast before anything else starts
            process = None
            if zygote is not None:
                zygote.close()
                zygote = None
        if command == "exit":
            return
        if command == "ping":
            conn.send(("pong", None))
        elif command == "log":
            detach.move_log(*payload)
        elif command == "study":
            conn.send(("row", _study_row(payload)))
        elif command == "cell":
            _use(payload)
            process = CellProcess(payload)
            forking = forked.forks(resolve_device(payload.cfg.device))
            zygote = startup.Zygote(process, closing=(conn,)) if forking else None  # before anything is built
            compute = forked.Compute() if forking else None
            process.forking = compute is not None
            compute.run(process.prepare) if compute else process.prepare()
            if process.failed:
                conn.send(("failed", process.finish()))
            elif compute:
                if payload.cfg.startup:  # every configuration's start, in round 0 (its row carries it)
                    process.start_timed = True
                    process.time_start(zygote)
                if not forked.measure_round(conn, process, payload.job.repeat, first=True):
                    return
                process.timed_start = None  # that round's row carries it, no later one
            else:
                conn.send(("ready", None))
        elif command == "round":
            if compute:
                if process.compiled_from is not None and payload.time_warm_compile and not process.start_timed:
                    process.start_timed = True  # the leader's first kept round: a new process's start first
                    process.time_start(zygote)
                if not forked.measure_round(conn, process, payload.repeat, first=False):
                    return
                process.timed_start = None  # that round's row carries it, no later one
            else:
                process.next_round(payload.repeat)
                conn.send(("ready", None))
        elif command == "block":
            process.time_block(payload.after_switch, payload.hand_over)
            conn.send(("failed", process.finish()) if process.failed else ("timed", None))
        elif command == "finish":
            conn.send(("row", process.finish()))
        elif command == "profile":
            conn.send(("profile", process.profile()))
        # forked.RELEASE: a round's end, for a template's child; nothing to do in a worker that measures itself
        sys.stdout.flush()

