"""Pure statistics over raw latency samples (seconds in, milliseconds out). No torch.

Why these numbers:
- mean: what the reference guide published, so ours compare like for like;
- median, p10, p90: robust to the occasional slow call (GC, scheduler, clock boost);
- ci95 of the median: distribution-free (order statistics), so no normality is assumed;
- speedup CI within one process: percentile bootstrap of each side's median, seeded so reports
  are reproducible (bootstrap_medians).

Over several processes (a cell's `repeats`), each process's median is one estimate: the cell's median
is their geometric mean and its interval a t-interval over their logarithms, so the variation
between processes (memory layout, clocks, the machine's load) is inside it. With one process the
within-process intervals above are the only ones there are, and `between_process` says so.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054  # two-sided 95% normal quantile
NOISY_SPREAD = 0.10  # (p90 - p10) / median above this flags a noisy cell
# Below this many rounds an interval over rounds is unreliable both ways: two rounds that agree by
# chance give one far too narrow, two that disagree one far too wide
# (benchmarks/README.md#race-default-report). The sweep never stops on precision before it
# (sweep/adaptive.py); the page says when a figure rests on fewer.
FEW_ROUNDS = 5
OUTLIER_MEAN = 0.10  # a mean more than this above the median: a few slow calls pull the mean up


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
    processes: int = 1  # repeats (processes) behind the numbers
    process_spread: float = 0.0  # max / min - 1 of the processes' medians (0 with one process)

    @property
    def spread(self) -> float:
        """Relative inter-decile range: (p90 - p10) / median."""
        return (self.p90_ms - self.p10_ms) / self.median_ms if self.median_ms else math.nan

    @property
    def noisy(self) -> bool:
        return self.spread > NOISY_SPREAD

    @property
    def mean_outliers(self) -> bool:
        """The mean (the guide's statistic) sits well above the median: slow outlier calls."""
        return self.median_ms > 0 and self.mean_ms / self.median_ms - 1 > OUTLIER_MEAN


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


def process_medians_ms(samples_per_process) -> np.ndarray:
    runs = [np.asarray(run, dtype=float) for run in samples_per_process]
    if not runs or any(run.ndim != 1 or run.size < 1 for run in runs):
        raise ValueError("samples_per_process: must be a non-empty list of non-empty sample lists (s)")
    return np.array([np.median(run) * 1000.0 for run in runs])


def summarize_runs(samples_per_process) -> LatencySummary:
    """Summary of a cell measured in one or more processes (a list of raw sample lists, seconds).

    mean and std pool every sample (the guide's mean stays the mean of all calls); the median is the
    geometric mean of the processes' medians, with a t-interval over processes when there are two or
    more, else the order-statistic interval of the one process; p10 and p90 are the geometric means of
    the processes' own, so each process weighs the same in all three. Pooled, a fast round's many calls
    outvoted a slow round's few, and a p90 could read below the median.
    """
    medians = process_medians_ms(samples_per_process)
    pooled = summarize([v for run in samples_per_process for v in run])
    if medians.size == 1:
        return pooled
    geomean = _t_interval(np.log(medians), between_process=True)  # its `speedup`: the geometric mean, ms
    ends = np.array([[np.percentile(run, 10), np.percentile(run, 90)] for run in samples_per_process]) * 1000.0
    p10, p90 = np.exp(np.log(ends).mean(axis=0)) if np.all(ends > 0) else (pooled.p10_ms, pooled.p90_ms)
    return LatencySummary(pooled.n, pooled.mean_ms, geomean.speedup, float(p10), float(p90), pooled.std_ms,
                          geomean.ci95_low, geomean.ci95_high, int(medians.size),
                          float(medians.max() / medians.min() - 1.0))


@dataclass(frozen=True)
class SpeedupEstimate:
    speedup: float  # baseline median / candidate median; > 1 means the candidate is faster
    ci95_low: float
    ci95_high: float
    between_process: bool = False  # the interval includes the variation between processes

    @property
    def significant(self) -> bool:
        """True when the 95% interval excludes 1 (no change)."""
        return self.ci95_low > 1.0 or self.ci95_high < 1.0


BOOTSTRAP_RESAMPLES = 2000


def bootstrap_medians(samples_s, rng, resamples: int = BOOTSTRAP_RESAMPLES) -> np.ndarray:
    """`resamples` bootstrap medians of one process's samples, ms, without building the resamples.

    The median of a resample of the sorted sample x(1..n) is x(j) for the j where the resample first
    holds m = n // 2 + 1 values <= x(j): P(median <= x(j)) = P(Binomial(n, j/n) >= m), the
    regularized incomplete beta I_{j/n}(m, n - m + 1). Drawing j from that law costs O(n) once and
    O(log n) per resample, where resampling costs O(n) each (20,000 samples x 2,000 resamples).
    """
    from scipy.special import betainc

    ordered = np.sort(np.asarray(samples_s, dtype=float)) * 1000.0
    n = ordered.size
    m = n // 2 + 1
    cdf = betainc(m, n - m + 1, np.arange(1, n + 1) / n)
    ranks = np.minimum(np.searchsorted(cdf, rng.random(resamples)), n - 1)
    return ordered[ranks]


def _bootstrap_geomean(runs, rng) -> np.ndarray:
    logs = np.array([np.log(bootstrap_medians(run, rng)) for run in runs])
    return np.exp(logs.mean(axis=0))


def speedup_over_processes(baseline_runs, candidate_runs) -> SpeedupEstimate:
    """Speedup of a candidate over a baseline, each measured in one or more processes (lists of
    raw sample lists, seconds).

    The point estimate is always the ratio of the geometric means of the process medians (the cells'
    `latency_ms_median`). Two or more processes on each side: a Welch t-interval on the log scale
    (between-process variation included). Otherwise a percentile bootstrap that resamples the calls
    within each process (within-process variation only).
    """
    base, cand = process_medians_ms(baseline_runs), process_medians_ms(candidate_runs)
    if base.size < 2 or cand.size < 2:
        rng = np.random.default_rng(0)  # seeded: a report built twice from one file shows one interval
        ratios = _bootstrap_geomean(baseline_runs, rng) / _bootstrap_geomean(candidate_runs, rng)
        low, high = np.percentile(ratios, [2.5, 97.5])
        point = math.exp(np.log(base).mean() - np.log(cand).mean())
        return SpeedupEstimate(point, float(min(low, point)), float(max(high, point)), False)
    from scipy.stats import t

    log_b, log_c = np.log(base), np.log(cand)
    var_b, var_c = log_b.var(ddof=1) / base.size, log_c.var(ddof=1) / cand.size
    point = float(log_b.mean() - log_c.mean())
    se = math.sqrt(var_b + var_c)
    if se == 0.0:
        return SpeedupEstimate(math.exp(point), math.exp(point), math.exp(point), True)
    dof = (var_b + var_c) ** 2 / (var_b ** 2 / (base.size - 1) + var_c ** 2 / (cand.size - 1))  # Welch
    half = float(t.ppf(0.975, dof)) * se
    return SpeedupEstimate(math.exp(point), math.exp(point - half), math.exp(point + half), True)


def block_medians_ms(samples_s, block_lengths) -> np.ndarray:
    """The median of each timed block of one process, ms (block_lengths: calls per block, in order)."""
    values = np.asarray(samples_s, dtype=float) * 1000.0
    lengths = [int(n) for n in block_lengths]
    if any(n < 1 for n in lengths) or sum(lengths) != values.size:
        raise ValueError(f"block_lengths: {lengths} do not split {values.size} samples; allowed: positive "
                         "counts that add up to the number of samples")
    edges = np.cumsum([0, *lengths])
    return np.array([np.median(values[a:b]) for a, b in zip(edges[:-1], edges[1:])])


def paired_log_ratios(baseline_blocks_ms: np.ndarray, candidate_blocks_ms: np.ndarray) -> np.ndarray:
    """log(baseline / candidate) of each block pair of one round: block i of both modes was timed
    moments apart (ABBA order), so the machine's drift over the round cancels in each ratio."""
    pairs = min(baseline_blocks_ms.size, candidate_blocks_ms.size)
    if pairs < 1:
        raise ValueError("a round needs at least one timed block of each mode")
    return np.log(baseline_blocks_ms[:pairs]) - np.log(candidate_blocks_ms[:pairs])


def _t_interval(logs: np.ndarray, between_process: bool, deff: float = 1.0, clusters: int = 0) -> SpeedupEstimate:
    """The mean of `logs` and its 95% t-interval (log_halfwidth), exponentiated."""
    point = float(logs.mean())
    half = math.inf if logs.size < 2 else log_halfwidth(float(logs.std(ddof=1)), logs.size, deff, clusters)
    return SpeedupEstimate(math.exp(point), math.exp(point - half), math.exp(point + half), between_process)


def log_halfwidth(sd: float, n: int, deff: float = 1.0, clusters: int = 0) -> float:
    """The 95% t-interval's half-width, log scale, of the mean of `n` rounds whose log speedups have
    standard deviation `sd`, with design effect `deff`: the variance is scaled by it, the degrees of
    freedom are effective_dof's."""
    from scipy.stats import t

    return float(t.ppf(0.975, effective_dof(n, deff, clusters))) * sd * math.sqrt(deff / n)


def rounds_for_halfwidth(sd: float, log_half: float, most: int) -> float:
    """The least number of rounds N (2 to `most`) whose mean's 95% t-interval, t(N - 1) * sd / sqrt(N) on
    the log scale (log_halfwidth of independent rounds), is narrower than `log_half`, if every round strays
    by `sd` (one round's log speedup's standard deviation) as the rounds measured so far did: a projection,
    as halfwidth_with_round is. inf past `most`, or without a spread to go by."""
    from scipy.stats import t

    if not (sd is not None and math.isfinite(sd) and log_half > 0):
        return math.inf
    for rounds in range(2, most + 1):
        if t.ppf(0.975, rounds - 1) * sd / math.sqrt(rounds) < log_half:
            return float(rounds)
    return math.inf


def effective_dof(n: int, deff: float, clusters: int) -> float:
    """The degrees of freedom of `n` rounds in `clusters` worker pairs with design effect `deff`: those
    of n / deff rounds, at least clusters - 1, at most n - 1 (and at least 1)."""
    return min(n - 1.0, max(n / deff - 1.0, clusters - 1.0, 1.0))


def intraclass_correlation(logs: np.ndarray, clusters) -> float | None:
    """How much more alike rounds of one cluster (one pair of worker processes) are than rounds of
    different clusters: rho from a one-way analysis of variance, clipped at 0. None when it cannot be
    told: one cluster only, or no cluster holding two rounds."""
    logs = np.asarray(logs, dtype=float)
    labels = list(clusters)
    groups = [logs[[i for i, label in enumerate(labels) if label == g]] for g in dict.fromkeys(labels)]
    n, k = logs.size, len(groups)
    if k < 2 or k == n:
        return None
    sizes = np.array([g.size for g in groups], dtype=float)
    grand = logs.mean()
    between = float(sum(g.size * (g.mean() - grand) ** 2 for g in groups)) / (k - 1)
    within = float(sum(((g - g.mean()) ** 2).sum() for g in groups)) / (n - k)
    n0 = (n - float((sizes ** 2).sum()) / n) / (k - 1)  # the clusters' effective size (unbalanced ANOVA)
    var_between = max(0.0, (between - within) / n0)
    return 0.0 if var_between + within == 0.0 else var_between / (var_between + within)


def _kish(rho: float, sizes) -> float:
    """1 + (m - 1) * rho, m the clusters' size weighted by size (sum n_g^2 / N)."""
    sizes = np.asarray(list(sizes), dtype=float)
    return 1.0 + (float((sizes ** 2).sum()) / float(sizes.sum()) - 1.0) * rho


def design_effect(logs: np.ndarray, clusters) -> float:
    """Kish's design effect of rounds measured in clusters (the rounds of one pair of worker
    processes): _kish with intraclass_correlation's rho. 1 when no cluster holds two rounds (every
    round its own processes) or when there is only one cluster (rho unknown: the caller must not
    pretend the rounds are independent then; see speedup_over_rounds)."""
    rho = intraclass_correlation(logs, clusters)
    return 1.0 if rho is None else _kish(rho, Counter(clusters).values())


def halfwidth_with_round(round_logs, clusters, joins) -> float:
    """The relative half-width speedup_over_rounds' interval would have with one more round in
    cluster `joins` (a label of `clusters`: the same workers; a new label: a fresh pair), if the rounds
    kept the spread and the intra-class correlation they have (a projection, not a measurement:
    sweep/adaptive.py prices rounds with it). inf below two rounds (no spread to keep)."""
    logs = np.asarray(round_logs, dtype=float)
    if logs.size < 2:
        return math.inf
    sizes = Counter(clusters)
    rho = intraclass_correlation(logs, clusters)
    sizes[joins] += 1
    deff = 1.0 if rho is None else _kish(rho, sizes.values())  # rho known: two clusters at least
    return math.exp(log_halfwidth(float(logs.std(ddof=1)), logs.size + 1, deff, len(sizes))) - 1.0


def round_log_speedup(pair_logs: np.ndarray) -> float:
    """A round's log speedup: the median of its block pairs' log ratios. The machine shifts level
    for seconds at a time (one compiled block of a round at 609 ms, the other at 320 ms): such a shift
    moves the pairs it falls in, and with four pairs or more a round's median follows the others.
    With one or two pairs it is their mean."""
    return float(np.median(np.asarray(pair_logs, dtype=float)))


def round_clusters(rounds: list[np.ndarray], processes=None) -> tuple[np.ndarray, list]:
    """Each round's log speedup (round_log_speedup; a round without a block pair is dropped) and the
    label of the worker pair that measured it: speedup_over_rounds' input, and halfwidth_with_round's.
    A round without a label (None, or no `processes`) counts as a pair of its own."""
    kept = [(np.asarray(r, dtype=float), p) for r, p in zip(rounds, processes or [None] * len(rounds)) if np.size(r)]
    labels = [p if p is not None else f"round {i}" for i, (_, p) in enumerate(kept)]
    return np.array([round_log_speedup(r) for r, _ in kept]), labels


def speedup_over_rounds(rounds: list[np.ndarray], processes=None) -> SpeedupEstimate:
    """Speedup of a candidate over a baseline from paired rounds: each round's paired_log_ratios.

    Two or more rounds: a t-interval over their round_log_speedup, widened by the design effect of the
    worker pairs `processes` (rows' process_round) that measured them; one round: a t-interval over its
    block pairs. Why: docs/method.md, "The speedup"."""
    kept = [np.asarray(r, dtype=float) for r in rounds if np.size(r)]
    if not kept:
        raise ValueError("rounds: at least one round with a block pair is needed")
    if len(kept) == 1:
        return _t_interval(kept[0], between_process=False)
    logs, labels = round_clusters(rounds, processes)
    clusters = len(set(labels))
    return _t_interval(logs, between_process=clusters > 1, deff=design_effect(logs, labels), clusters=clusters)


def outlying_rounds(round_logs: np.ndarray) -> list[int]:
    """Indices of rounds whose speedup lies outside the 99% prediction interval of the other rounds
    (leave one out): a stretch whose ratio disagrees more than the rounds' spread explains."""
    from scipy.stats import t

    logs = np.asarray(round_logs, dtype=float)
    if logs.size < 4:  # three others at least, for a spread worth the name
        return []
    out = []
    for i in range(logs.size):
        others = np.delete(logs, i)
        limit = float(t.ppf(0.995, others.size - 1)) * others.std(ddof=1) * math.sqrt(1 + 1 / others.size)
        if abs(logs[i] - others.mean()) > limit:
            out.append(i)
    return out


def expected_maximum(k: int) -> float:
    """The expected largest of `k` independent standard normal draws (0 for one, 0.56 for two, 0.85
    for three, 1.16 for five): how far, in standard errors, the best of k equally fast candidates'
    estimates lies above their common truth (the winner's curse; results/race.py)."""
    if k < 2:
        return 0.0
    from scipy import integrate
    from scipy.stats import norm

    value, _ = integrate.quad(lambda x: x * k * norm.pdf(x) * norm.cdf(x) ** (k - 1), -12.0, 12.0)
    return float(value)


def lowered(estimate: SpeedupEstimate, log_bias: float) -> SpeedupEstimate:
    """`estimate` with its point and low end moved down by `log_bias` (log scale) and its high end
    kept: a correction for a selection bias of at most that size, which widens the interval rather
    than trusting the correction's size."""
    factor = math.exp(-log_bias)
    return SpeedupEstimate(estimate.speedup * factor, estimate.ci95_low * factor, estimate.ci95_high,
                           estimate.between_process)


def round_halfwidth(round_logs, clusters) -> float:
    """The 95% half-width, log scale, of ONE round's log speedup around its group's mean, from rounds of
    that group (their worker pairs `clusters`): t * their standard deviation, t's degrees of freedom the
    effective rounds' as in log_halfwidth (n / deff - 1, at least clusters - 1, at most n - 1). 0 below
    two rounds (no spread to go by)."""
    from scipy.stats import t

    logs = np.asarray(round_logs, dtype=float)
    if logs.size < 2:
        return 0.0
    dof = effective_dof(logs.size, design_effect(logs, clusters), len(set(clusters)))
    return float(t.ppf(0.975, dof)) * float(logs.std(ddof=1))


def first_round_halfwidth(deviations) -> float:
    """The 95% half-width, log scale, of a selection round's figure around where more rounds put the same
    configuration: t with k degrees of freedom times the root mean square of the k `deviations` (each a
    configuration's selection-round log speedup less its later rounds' mean; their mean square keeps any
    bias the selection round has, as well as its spread)."""
    from scipy.stats import t

    values = np.asarray(deviations, dtype=float)
    if values.size < 1:
        return 0.0
    return float(t.ppf(0.975, values.size)) * math.sqrt(float(np.mean(values ** 2)))


def widened(estimate: SpeedupEstimate, log_half: float) -> SpeedupEstimate:
    """`estimate` with its interval at least +- `log_half` (log scale) around its point: a one-round
    figure's, whose block pairs see only their own stretch of the machine, as wide as a round moves."""
    if not log_half > 0 or not math.isfinite(log_half):
        return estimate
    point = math.log(estimate.speedup)
    return SpeedupEstimate(estimate.speedup, min(estimate.ci95_low, math.exp(point - log_half)),
                           max(estimate.ci95_high, math.exp(point + log_half)), estimate.between_process)


def relative_halfwidth(estimate: SpeedupEstimate) -> float:
    """Half the interval's width on the log scale, as a fraction: sqrt(high / low) - 1 (0.08 = +-8%)."""
    if not (estimate.ci95_low > 0 and math.isfinite(estimate.ci95_high)):
        return math.inf
    return math.sqrt(estimate.ci95_high / estimate.ci95_low) - 1.0


def percent_improvement(eager_ms: float, compiled_ms: float) -> float:
    """The guide's 'percentage improvement': time saved relative to eager, in percent."""
    return (eager_ms - compiled_ms) / eager_ms * 100.0


def improvement_from_speedup(speedup: float) -> float:
    """The same improvement from a speedup (eager time / compiled time): 100 * (1 - 1/speedup), so that
    a page's improvement and speedup of one configuration say the same thing."""
    return (1.0 - 1.0 / speedup) * 100.0


def breakeven_calls(compile_s: float, eager_ms: float, compiled_ms: float) -> float:
    """Calls after which compiling has paid for itself: compile time / time saved per call.

    Infinite when compiling does not make calls faster.
    """
    saved_s = (eager_ms - compiled_ms) / 1000.0
    return compile_s / saved_s if saved_s > 0 else math.inf
