"""Test-only fault injection, so the fault suite can prove what a failing cell does to a sweep.

Set BENCH_UTILS_FAULT to a ';'-separated list of ``MODEL/BATCH/MODE=KIND`` (``*`` matches any
part), e.g. ``vit/1/default=compile-error``. Unset in normal use, where this module does nothing.
(The torn-write hook, BENCH_UTILS_TORN_WRITE, lives with the results writer it tears.)
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

ENV_VAR = "BENCH_UTILS_FAULT"
# "hang-once": hang like "hang" the first time a cell's process reaches its load, then never again: a
# marker file per cell in this folder remembers (a test kills the hung process at a point it controls,
# and the retry measures normally)
ONCE_DIR_VAR = "BENCH_UTILS_FAULT_ONCE_DIR"
# "segfault-at-exit": the process measures and sends its row, then dies of SIGSEGV while it shuts
# down, as CUPTI teardown after CUDA-graph replays can (pytorch#75504).
# "hang-in-compile": hang where torch.compile starts, inside the compiler cache the process compiles
# with (a cold compile's empty one): what a stop mid-compile must clean up.
KINDS = ("oom", "eager-error", "compile-error", "hang", "hang-once", "hang-in-compile", "segfault", "sigkill",
         "segfault-at-exit")
# "hang" fires before the model loads (like a stalled hub download), so a small timeout_s reaches it.
STAGES = {"oom": "load", "eager-error": "eager", "compile-error": "compile", "hang": "load", "hang-once": "load",
          "hang-in-compile": "compile", "segfault": "eager", "sigkill": "eager", "segfault-at-exit": "exit"}


class InjectedFault(RuntimeError):
    """An error raised on purpose by the fault hook."""


def planned_fault(model: str, batch_size: int, mode: str) -> str | None:
    """The fault kind planned for this cell, or None ("hang-once": None once its marker exists)."""
    kind = _planned(model, batch_size, mode)
    if kind == "hang-once":
        marker = Path(os.environ[ONCE_DIR_VAR]) / f"{model}-bs{batch_size}-{mode}"
        if marker.exists():
            return None
        marker.touch()
        return "hang"
    return kind


def _planned(model: str, batch_size: int, mode: str) -> str | None:
    for entry in filter(None, (part.strip() for part in os.environ.get(ENV_VAR, "").split(";"))):
        target, _, kind = entry.partition("=")
        if kind not in KINDS:
            raise ValueError(f"{ENV_VAR}: fault kind {kind!r} is not allowed; allowed: {', '.join(KINDS)}")
        want = target.split("/")
        if len(want) != 3:
            raise ValueError(f"{ENV_VAR}: {target!r} is not MODEL/BATCH/MODE")
        if all(w in ("*", str(v)) for w, v in zip(want, (model, batch_size, mode))):
            return kind
    return None


def maybe_inject(stage: str, kind: str | None) -> None:
    """Trigger `kind` if it belongs to `stage` ('load', 'eager', 'compile' or 'exit')."""
    if kind is None or STAGES[kind] != stage:
        return
    if kind == "oom":
        raise MemoryError("injected fault: out of memory")
    if kind in ("eager-error", "compile-error"):
        raise InjectedFault(f"injected fault: {kind}")
    if kind in ("hang", "hang-in-compile"):
        print("injected fault: hang (sleeping until the runner's timeout kills this process)", flush=True)
        while True:  # the runner's timeout must end this
            time.sleep(60)
    if kind in ("segfault", "segfault-at-exit"):  # the same signal, at another stage (STAGES)
        os.kill(os.getpid(), signal.SIGSEGV)
    if kind == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)


