"""How a measuring command stops when told to: SIGTERM (a scheduler's, `kill`'s or `timeout`'s stop) and
SIGHUP (the terminal closed) unwind like Ctrl-C, so the cell in flight is killed, its temporary folders
removed, the lock released and finished cells stay saved; and what a command writes last of what it
measured (a selfcheck's JSON, an A/A check's verdict) is not cut by a second stop. No torch."""

from __future__ import annotations

import contextlib
import signal
import threading

STOPS = (signal.SIGTERM, signal.SIGHUP)


def unwind(signum, frame) -> None:
    """A signal handler: raise KeyboardInterrupt where the main thread is, as Ctrl-C does."""
    raise KeyboardInterrupt


def unwind_on_stop() -> None:
    """From now on a stop (STOPS) unwinds like Ctrl-C (`unwind`)."""
    for number in STOPS:
        signal.signal(number, unwind)


@contextlib.contextmanager
def no_second_stop():
    """SIGTERM ignored inside (a stop arriving while the last figures are written would leave none),
    as it was after. In the main thread only, where Python handles signals."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


@contextlib.contextmanager
def one_interrupt():
    """Inside, Ctrl-C (a notebook kernel's stop button) raises KeyboardInterrupt once; a second one, while
    the first unwinds and the measuring processes are ended, is ignored: it would leave them running
    beside the kernel. The handler before is back after. In the main thread only, where Python handles
    signals."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopped = threading.Event()

    def first_only(signum, frame) -> None:
        if not stopped.is_set():
            stopped.set()
            raise KeyboardInterrupt

    before = signal.signal(signal.SIGINT, first_only)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
