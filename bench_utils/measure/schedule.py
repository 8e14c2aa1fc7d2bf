"""When to stop warming up and when to stop timing: pure rules over what was seen so far. No torch.

Warm-up (the idea of triton's ``do_bench`` and ``torch.utils.benchmark``'s ``adaptive_autorange``: let
time, not a fixed count, decide): calls run in windows of at least `window_s` seconds and
`MIN_WINDOW_CALLS` calls; warm-up is steady once the median of the last window is within
`STEADY_TOLERANCE` of the window before, and at least `min_calls` calls ran. It gives up at
`max_s` and says so (the row records ``warmup_steady = False``).

Timing: at least `min_calls` calls and at least `min_time_s` seconds, at most `MAX_SAMPLES` calls.
"""

from __future__ import annotations

import math

STEADY_TOLERANCE = 0.05  # two consecutive warm-up windows whose medians differ by less: steady
MIN_WINDOW_CALLS = 3  # a window's median needs a few calls
WARMUP_WINDOW_FRACTION = 0.25  # a warm-up window lasts this fraction of min_time_s (seconds)
MIN_WINDOW_S = 0.05  # ... and at least this long, seconds
MAX_SAMPLES = 20_000  # timed calls per mode at most: ~0.4 MB of JSON per row


def window_calls(call_s: float, window_s: float) -> int:
    """Calls in one warm-up window: enough to last `window_s` seconds at `call_s` seconds per call."""
    if not call_s > 0:
        return MIN_WINDOW_CALLS
    return max(MIN_WINDOW_CALLS, min(MAX_SAMPLES, math.ceil(window_s / call_s)))


def warmup_window_s(min_time_s: float) -> float:
    """Length of one warm-up window, seconds: a quarter of the timed budget, at least MIN_WINDOW_S."""
    return max(MIN_WINDOW_S, WARMUP_WINDOW_FRACTION * min_time_s)


def is_steady(window_medians_s: list[float]) -> bool:
    """True when the last two window medians agree within STEADY_TOLERANCE (relative to the later one)."""
    if len(window_medians_s) < 2:
        return False
    previous, last = window_medians_s[-2], window_medians_s[-1]
    return last > 0 and abs(previous - last) / last <= STEADY_TOLERANCE


def warmup_done(window_medians_s: list[float], calls: int, elapsed_s: float, min_calls: int,
                max_s: float) -> tuple[bool, bool]:
    """(stop, steady): stop warming up when steady after `min_calls` calls, or at `max_s` seconds."""
    steady = calls >= min_calls and is_steady(window_medians_s)
    return steady or (calls >= min_calls and elapsed_s >= max_s), steady


def timing_done(calls: int, elapsed_s: float, min_calls: int, min_time_s: float) -> bool:
    """Stop timing after at least `min_calls` calls and `min_time_s` seconds, or at MAX_SAMPLES calls."""
    return calls >= MAX_SAMPLES or (calls >= min_calls and elapsed_s >= min_time_s)
