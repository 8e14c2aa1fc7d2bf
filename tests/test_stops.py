"""bench_utils/stops.py: a stop unwinds like Ctrl-C, and a second stop does not cut what is written last."""

import os
import signal

import pytest

from bench_utils import stops


@pytest.fixture
def handlers():
    before = {number: signal.getsignal(number) for number in stops.STOPS}
    yield
    for number, handler in before.items():
        signal.signal(number, handler)


def test_a_stop_raises_keyboardinterrupt_where_the_main_thread_is(handlers):
    stops.unwind_on_stop()
    for number in stops.STOPS:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), number)  # the handler runs as kill returns


def test_a_stop_inside_no_second_stop_is_ignored_and_the_handler_is_back_after(handlers):
    stops.unwind_on_stop()
    with stops.no_second_stop():
        os.kill(os.getpid(), signal.SIGTERM)  # ignored: no KeyboardInterrupt here
        written = True
    assert written and signal.getsignal(signal.SIGTERM) is stops.unwind
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)


def test_inside_one_interrupt_the_first_ctrl_c_raises_and_a_second_is_ignored():
    before = signal.getsignal(signal.SIGINT)
    unwound = []
    with stops.one_interrupt():
        try:
            os.kill(os.getpid(), signal.SIGINT)  # the kernel's stop button
        except KeyboardInterrupt:
            unwound.append("first")
            os.kill(os.getpid(), signal.SIGINT)  # pressed again while the processes are ended: ignored
            unwound.append("cleaned up")
    assert unwound == ["first", "cleaned up"] and signal.getsignal(signal.SIGINT) is before
