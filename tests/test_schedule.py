"""The warm-up and timing stopping rules (pure), and the timing loop that follows them on CPU."""

import pytest

from bench_utils.measure import schedule


def test_window_calls_last_the_window_and_never_fewer_than_the_minimum():
    assert schedule.window_calls(0.001, 0.5) == 500
    assert schedule.window_calls(0.4, 0.5) == 3  # slow calls: MIN_WINDOW_CALLS
    assert schedule.window_calls(0.0, 0.5) == 3  # nothing measured yet
    assert schedule.window_calls(1e-9, 10.0) == schedule.MAX_SAMPLES
    assert schedule.warmup_window_s(2.0) == 0.5 and schedule.warmup_window_s(0.0) == schedule.MIN_WINDOW_S


def test_steady_needs_two_windows_within_tolerance():
    assert not schedule.is_steady([])
    assert not schedule.is_steady([1.0])
    assert schedule.is_steady([1.04, 1.0])  # 4% apart
    assert not schedule.is_steady([1.2, 1.0])
    assert schedule.is_steady([3.0, 1.2, 1.0, 1.01])  # only the last two count


def test_warmup_stops_when_steady_after_min_calls_or_at_the_time_cap():
    assert schedule.warmup_done([1.0, 1.0], calls=6, elapsed_s=0.1, min_calls=3, max_s=30) == (True, True)
    assert schedule.warmup_done([1.0, 1.0], calls=6, elapsed_s=0.1, min_calls=10, max_s=30) == (False, False)
    assert schedule.warmup_done([2.0, 1.0], calls=6, elapsed_s=0.1, min_calls=3, max_s=30) == (False, False)
    assert schedule.warmup_done([2.0, 1.0], calls=6, elapsed_s=31, min_calls=3, max_s=30) == (True, False)
    assert schedule.warmup_done([2.0, 1.0], calls=2, elapsed_s=31, min_calls=3, max_s=30) == (False, False)


def test_timing_needs_both_the_count_and_the_duration():
    assert not schedule.timing_done(calls=10, elapsed_s=1.0, min_calls=20, min_time_s=0.5)
    assert not schedule.timing_done(calls=30, elapsed_s=0.4, min_calls=20, min_time_s=0.5)
    assert schedule.timing_done(calls=30, elapsed_s=0.6, min_calls=20, min_time_s=0.5)
    assert schedule.timing_done(calls=schedule.MAX_SAMPLES, elapsed_s=0.0, min_calls=20, min_time_s=60)


class FakeClock:
    """perf_counter and sleep on a clock of the test's own: a call "takes" exactly what it says, so the
    loop's stopping rules are checked on exact numbers, whatever else runs on the machine."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_timing_loop_follows_the_rules_on_cpu(monkeypatch):
    pytest.importorskip("torch")
    from bench_utils.measure import timing
    from bench_utils.measure.timing import time_calls, warm_until_steady

    clock = FakeClock()
    monkeypatch.setattr(timing, "time", clock)
    state = {"calls": 0}

    def settling():  # 5 ms at first, settling towards 1 ms as caches fill
        state["calls"] += 1
        clock.sleep(0.001 + 0.004 * 0.85 ** state["calls"])

    record = warm_until_steady(settling, "cpu", min_calls=2, window_s=0.02, max_s=5.0)
    # steady (two windows within 5%) only once the decay is small: 0.004 * 0.85**n < ~0.05 ms
    assert record.steady and record.calls > 15 and record.seconds < 5.0
    samples = time_calls(settling, "cpu", min_calls=5, min_time_s=0.1)
    assert len(samples) >= 5 and sum(samples) >= 0.1 - 1e-9
    assert sorted(samples)[len(samples) // 2] == pytest.approx(0.001, abs=0.0008)

    never = warm_until_steady(lambda: clock.sleep(0.001 * (state.__setitem__("calls", state["calls"] + 1)
                                                           or state["calls"] % 7 + 1)),
                              "cpu", min_calls=1, window_s=0.01, max_s=0.2)
    assert never.seconds >= 0.2 and never.calls >= 1  # stopped by the cap, steady or not
    assert warm_until_steady(settling, "cpu", min_calls=0, window_s=0.01, max_s=0.0).calls == 0