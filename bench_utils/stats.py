"""Pure statistics over raw latency samples (seconds in, milliseconds out). No torch.

Why these numbers:
- mean: what the reference guide published, so ours compare like for like;
- median, p10, p90: robust to the occasional slow call (GC, scheduler, clock boost);
- ci95 of the median: distribution-free (order statistics), so no normality is assumed;
- speedup CI: percentile bootstrap over the two sample sets, seeded so reports are reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054  # two-sided 95% normal quantile
NOISY_SPREAD = 0.10  # (p90 - p10) / median above this flags a noisy cell


@dataclass(frozen=True)
class LatencySummary:
    n: int
    mean_ms: float
    median_ms: float
    p10_ms: float
    p90_ms: float
    std_ms: float
    ci95_low_ms: float  # 95% confidence interval of the median
    ci95_high_ms: float

    @property
    def spread(self) -> float:
        """Relative inter-decile range: (p90 - p10) / median."""
        return (self.p90_ms - self.p10_ms) / self.median_ms if self.median_ms else math.nan

    @property
    def noisy(self) -> bool:
        return self.spread > NOISY_SPREAD


def median_ci_ranks(n: int) -> tuple[int, int]:
    """0-based ranks (lo, hi) of the sorted samples bounding a ~95% CI of the median.

    Normal approximation of the binomial(n, 1/2) rank distribution (Conover, Practical
    Nonparametric Statistics): lo = floor(n/2 - z*sqrt(n)/2), hi = ceil(n/2 + z*sqrt(n)/2),
    converted to 0-based ranks and clamped to the sample.
    """
    if n < 1:
        raise ValueError(f"n: {n} is not allowed; allowed: n >= 1")
    half_width = Z95 * math.sqrt(n) / 2
    lo = max(math.floor(n / 2 - half_width), 1) - 1
    hi = min(math.ceil(n / 2 + half_width), n) - 1
    return lo, hi


def summarize(samples_s) -> LatencySummary:
    """Summary of raw per-call latencies given in seconds."""
    values = np.asarray(samples_s, dtype=float)
    if values.ndim != 1 or values.size < 1:
        raise ValueError("samples_s: must be a non-empty 1-D sequence of seconds")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError("samples_s: must be finite and >= 0 (seconds)")
    ms = np.sort(values) * 1000.0
    lo, hi = median_ci_ranks(ms.size)
    return LatencySummary(
        n=int(ms.size),
        mean_ms=float(ms.mean()),
        median_ms=float(np.median(ms)),
        p10_ms=float(np.percentile(ms, 10)),
        p90_ms=float(np.percentile(ms, 90)),
        std_ms=float(ms.std(ddof=1)) if ms.size > 1 else 0.0,
        ci95_low_ms=float(ms[lo]),
        ci95_high_ms=float(ms[hi]),
    )


@dataclass(frozen=True)
class SpeedupEstimate:
    speedup: float  # baseline median / candidate median; > 1 means the candidate is faster
    ci95_low: float
    ci95_high: float

    @property
    def significant(self) -> bool:
        """True when the 95% interval excludes 1 (no change)."""
        return self.ci95_low > 1.0 or self.ci95_high < 1.0


def speedup_ci(baseline_s, candidate_s, resamples: int = 2000, seed: int = 0) -> SpeedupEstimate:
    """Median-ratio speedup with a percentile-bootstrap 95% CI, resampling each set independently."""
    base = np.asarray(baseline_s, dtype=float)
    cand = np.asarray(candidate_s, dtype=float)
    if base.size < 2 or cand.size < 2:
        raise ValueError("baseline_s, candidate_s: need at least 2 samples each")
    if resamples < 100:
        raise ValueError(f"resamples: {resamples} is not allowed; allowed: >= 100")
    rng = np.random.default_rng(seed)
    base_medians = np.median(rng.choice(base, size=(resamples, base.size)), axis=1)
    cand_medians = np.median(rng.choice(cand, size=(resamples, cand.size)), axis=1)
    ratios = base_medians / cand_medians
    low, high = np.percentile(ratios, [2.5, 97.5])
    return SpeedupEstimate(float(np.median(base) / np.median(cand)), float(low), float(high))


def percent_improvement(eager_ms: float, compiled_ms: float) -> float:
    """The guide's 'percentage improvement': time saved relative to eager, in percent."""
    return (eager_ms - compiled_ms) / eager_ms * 100.0


def breakeven_calls(compile_s: float, eager_ms: float, compiled_ms: float) -> float:
    """Calls after which compiling has paid for itself: compile time / time saved per call.

    Infinite when compiling does not make calls faster.
    """
    saved_s = (eager_ms - compiled_ms) / 1000.0
    return compile_s / saved_s if saved_s > 0 else math.inf
