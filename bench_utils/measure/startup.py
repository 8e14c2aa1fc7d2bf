"""A new process's start, from nothing to its first correct answer, for every way to ship a model (its
configuration's form): what a replica of a service pays before it answers (docs/method.md, "Start-up").

Where: in a copy of the worker made before it built, compiled or loaded anything (`Zygote`: forked on a
CPU as the worker receives its cell, with torch, transformers and torch.compile's modules imported, as
the fork server imported them). Each start is a process forked from that copy, never from the prepared
process, whose own build warmed its in-process caches, imports and pages; the copy stays as it was for
the next start. Its main thread never ran an OpenMP parallel region (measure/forked.py says why that
matters): the start's own is its first.

What the clock holds (`first_answer_s`): the model's build, its code and weights (a form whose serving
process runs the model's Python: eager, torch.compile, precompile; a package holds its weights), then
the form's compile or load and its first call (`compile_warm_s`: this second part). The inputs are made
off the clock: a request's work, not the start's. The compiler cache it starts with: torch.compile's
own (the cell's, filled by its cold compile: a replica restarting on the machine that compiled); an
empty one for a form that ships its work (cache artifacts, precompile, a package): what a new
container holds. Its answer is checked against eager float32's as the cell's is, and what it compiled
is read back from dynamo's and Inductor's counters (evidence.check_start): a start that answers wrongly
or compiles what its form ships fails the row.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from ..paths import INDUCTOR_CACHE_ENV, TRITON_CACHE_ENV


@dataclass(frozen=True)
class Start:
    """What a start is given: the file its form ships (None: only the model's own code and weights), the
    compiler cache it starts with, and eager float32's output (on the host) its answer must agree with."""

    shipped: str | None
    cache_dir: str
    reference: object


class StartFailed(Exception):
    """A new process did not reach a correct first answer: `status` and the one-line reason."""

    def __init__(self, status: str, text: str):
        super().__init__(text)
        self.status = status


class Zygote:
    """A copy of this worker forked now, before it builds anything, that forks a new process for each
    start it is asked for (`start`) and waits for it. `process`: the cell's CellProcess, not yet prepared;
    `closing`: connections of this worker the copy must not hold (the runner's pipe: a copy holding it
    would hide the worker's death from the runner)."""

    def __init__(self, process, closing=()):
        ours, theirs = multiprocessing.Pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            for conn in (*closing, ours):
                conn.close()
            _serve(theirs, process)  # never returns
        theirs.close()
        self.pid, self.conn = pid, ours

    def start(self, start: Start) -> dict:
        """A new process's start: its row fields; StartFailed with the reason otherwise. The request goes
        as plain pickled bytes: a Connection's own pickler shares a tensor's memory through a file
        descriptor that multiprocessing's resource sharer hands over from a thread it starts in this
        process, and a round forked while that thread lives hangs on a lock it held (seen: a forked
        round of SegFormer's eager template, its eager output sent)."""
        self.conn.send_bytes(pickle.dumps(start))
        try:
            status, value = self.conn.recv()
        except EOFError:
            raise StartFailed("crashed", "the process that starts new ones ended") from None
        if status != "ok":
            raise StartFailed(status, value)
        return value

    def close(self) -> None:
        self.conn.close()  # it reads the end of its pipe and exits
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _serve(conn, process) -> None:
    """The copy: a forked process per start, and its reply if it died without one; never returns."""
    from .forked import _die_with_parent

    try:
        _die_with_parent()
        while True:
            try:
                start = pickle.loads(conn.recv_bytes())
            except EOFError:
                break
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                _measure(conn, process, start)  # never returns
            _, status = os.waitpid(pid, 0)
            if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
                how = (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                       else f"exit code {os.WEXITSTATUS(status)}")
                conn.send(("crashed", f"the new process died before its first answer ({how})"))
    finally:
        os._exit(0)


def _measure(conn, process, start: Start) -> None:
    """The new process: its start measured and sent; never returns."""
    from . import errors
    from .forked import _die_with_parent
    from .settings import Unsupported

    code = 1
    try:
        _die_with_parent()
        try:
            reply = ("ok", first_answer(process, start))
        except Unsupported as why:
            reply = ("unsupported", str(why))
        except Exception as err:  # noqa: BLE001 - every failure of a start is its reply
            traceback.print_exc()
            reply = errors.status_and_text(err)
        conn.send(reply)
        code = 0
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def first_answer(process, start: Start) -> dict:
    """In a new process: build what the configuration of `process` (a CellProcess, not prepared) serves,
    answer once, check the answer; the row's start fields."""
    import torch

    from . import accuracy, evidence
    from .compile_stats import clear_graph_stats
    from .settings import check_supported, inductor_context, precision_context, with_layout

    config, device = process.config, process.device
    os.environ[INDUCTOR_CACHE_ENV] = start.cache_dir
    os.environ.pop(TRITON_CACHE_ENV, None)
    clear_graph_stats()
    with torch.inference_mode(), inductor_context(config):
        began = time.perf_counter()
        spec, model = process.build_model() if config.needs_model else (process.cfg.spec(process.model_name), None)
        build_s = time.perf_counter() - began
        inputs = process.build_inputs()  # off the clock: a request's work
        if model is not None:
            check_supported(config, device, model)
            inputs = with_layout(config, model, inputs)
        with precision_context(config, device):  # the form's load or compile, and its first call, on the clock
            output, seconds = _timed_first_call(lambda: serving_call(process, model, inputs, start)(), device)
    fields = {"first_answer_s": build_s + seconds, **started_counts()}
    if config.compiled:
        fields["compile_warm_s"] = seconds
    agreement = accuracy.agreement_fields(start.reference, accuracy.to_host(output), spec.task, config.precision,
                                          accuracy.numerics(device))
    if not agreement["accuracy_ok"]:
        raise evidence.SettingNotInEffect(f"a new process's first answer differs from eager float32's (largest "
                                          f"difference {agreement['max_abs_diff']:.3g})")
    evidence.check_start(config, fields)
    return fields


def _timed_first_call(call, device: str):
    """`call`'s output and its seconds (everything it does: loading, tracing, compiling, the first call)."""
    from .timing import time_once

    box = {}

    def once():
        box["output"] = call()

    seconds = time_once(once, device)
    return box["output"], seconds


def serving_call(process, model, inputs: dict, start: Start):
    """The configuration's callable as a new process makes it: eager's model, torch.compile's (whole or
    regional; cache artifacts loaded into the empty cache first), or the shipped file loaded."""
    import torch

    from . import deploy
    from .settings import compile_model

    config, cfg = process.config, process.cfg
    if config.packaged:
        runner = deploy.load(config.form, start.shipped, start.reference, model)
        return lambda: runner(**inputs)
    if not config.compiled:
        return lambda: model(**inputs)
    if config.artifacts:
        torch.compiler.load_cache_artifacts(Path(start.shipped).read_bytes())
    compiled = compile_model(model, config, cfg.fullgraph, cfg.compile_dynamic())
    return lambda: compiled(**inputs)


def started_counts() -> dict:
    """What the start compiled: dynamo's frames traced, Inductor's FX-graph cache hits and misses."""
    from torch._dynamo.utils import counters

    return {"start_frames": int(counters["frames"]["total"]),
            "start_fx_cache_hits": int(counters["inductor"]["fxgraph_cache_hit"]),
            "start_fx_cache_misses": int(counters["inductor"]["fxgraph_cache_miss"])}


def start_cache(config, scratch: str | None) -> str:
    """The compiler cache a start of `config` begins with, read in the prepared process: torch.compile's
    own, the one it compiled in (the cell's, filled by its cold compile), else a new empty folder in the
    runner's scratch folder (a shipped form's: what a new container holds)."""
    own = os.environ.get(INDUCTOR_CACHE_ENV)
    if config.compiled and not config.packaged and not config.artifacts and own:
        return own
    return tempfile.mkdtemp(prefix="start-cache-", dir=scratch)
