import math

import numpy as np
import pytest

from bench_utils.results.stats import (breakeven_calls, median_ci_ranks, percent_improvement,
                                       speedup_over_processes, summarize)


def test_summary_of_known_samples_in_ms():
    samples_s = [0.001 * v for v in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)]
    s = summarize(samples_s)
    assert s.n == 10
    assert s.mean_ms == pytest.approx(5.5)
    assert s.median_ms == pytest.approx(5.5)
    assert s.p10_ms == pytest.approx(1.9)  # numpy linear interpolation
    assert s.p90_ms == pytest.approx(9.1)
    assert s.std_ms == pytest.approx(3.0276503540974917)  # sample std (ddof=1)
    # n=10: ranks floor(5 - 3.099) = 1 and ceil(5 + 3.099) = 9 (1-based) -> 1 ms and 9 ms
    assert (s.ci95_low_ms, s.ci95_high_ms) == (pytest.approx(1.0), pytest.approx(9.0))


def test_median_ci_ranks_follow_the_binomial_normal_approximation():
    assert median_ci_ranks(10) == (0, 8)
    assert median_ci_ranks(100) == (39, 59)  # 50 -+ 9.8 -> ranks 40..60 (1-based)
    assert median_ci_ranks(300) == (132, 166)  # the guide's 300 calls
    assert median_ci_ranks(1) == (0, 0)
    with pytest.raises(ValueError, match="n:"):
        median_ci_ranks(0)


def test_ci_covers_the_median_and_narrows_with_more_samples():
    rng = np.random.default_rng(1)
    small = summarize(rng.normal(0.010, 0.001, 30))
    large = summarize(rng.normal(0.010, 0.001, 3000))
    assert small.ci95_low_ms <= small.median_ms <= small.ci95_high_ms
    assert (large.ci95_high_ms - large.ci95_low_ms) < (small.ci95_high_ms - small.ci95_low_ms) / 5


def test_summary_rejects_bad_samples():
    for bad in ([], [float("nan")], [-1.0], [[0.1, 0.2]]):
        with pytest.raises(ValueError, match="samples_s"):
            summarize(bad)


def test_noisy_flag_uses_relative_interdecile_range():
    steady = summarize([0.010] * 50 + [0.0101] * 50)
    noisy = summarize([0.005] * 20 + [0.010] * 60 + [0.020] * 20)
    assert not steady.noisy
    assert noisy.noisy and noisy.spread == pytest.approx((20 - 5) / 10)


def test_speedup_ci_is_reproducible_and_significant_for_clear_gap():
    rng = np.random.default_rng(0)
    eager = rng.normal(0.020, 0.0005, 100)
    compiled = rng.normal(0.010, 0.0005, 100)
    est = speedup_over_processes([eager], [compiled])  # one process each: the within-process bootstrap
    assert est == speedup_over_processes([eager], [compiled]) and not est.between_process
    assert est.speedup == pytest.approx(np.median(eager) / np.median(compiled))
    assert 1.9 < est.ci95_low < est.speedup < est.ci95_high < 2.1
    assert est.significant


def test_speedup_ci_not_significant_for_same_distribution():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.010, 0.001, 60), rng.normal(0.010, 0.001, 60)
    est = speedup_over_processes([a], [b])
    assert est.ci95_low < 1.0 < est.ci95_high
    assert not est.significant


def test_guide_percentages_and_breakeven():
    # The guide's A100 ViT batch 1: 9.325 ms eager, 7.584 ms compiled.
    assert percent_improvement(9.325, 7.584) == pytest.approx(18.670241)
    assert breakeven_calls(30.0, 10.0, 8.0) == pytest.approx(15000)  # 30 s / 2 ms saved
    assert math.isinf(breakeven_calls(30.0, 8.0, 10.0))


def test_bootstrap_medians_match_resampling_for_odd_samples():
    import numpy as np

    from bench_utils.results.stats import bootstrap_medians

    samples = np.random.default_rng(3).lognormal(0, 0.3, 501) / 1000  # seconds
    fast = bootstrap_medians(samples, np.random.default_rng(1), 20000)
    brute = np.median(np.random.default_rng(2).choice(samples, (20000, 501)), axis=1) * 1000
    assert np.percentile(fast, [2.5, 50, 97.5]) == pytest.approx(np.percentile(brute, [2.5, 50, 97.5]), rel=0.005)


def test_speedup_point_is_the_ratio_of_the_cells_medians_whatever_the_process_counts():
    from bench_utils.results.stats import speedup_over_processes, summarize_runs

    eager = [[0.002] * 10]
    compiled = [[0.001] * 10, [0.0015] * 50]  # two processes: geometric mean of medians 1.2247 ms
    estimate = speedup_over_processes(eager, compiled)
    assert estimate.speedup == pytest.approx(summarize_runs(eager).median_ms / summarize_runs(compiled).median_ms)
    assert estimate.ci95_low <= estimate.speedup <= estimate.ci95_high and not estimate.between_process
    both = speedup_over_processes([[0.002] * 10, [0.0022] * 10, [0.0018] * 10], compiled)
    assert both.between_process and both.ci95_low < both.speedup < both.ci95_high


# --- rounds: blocks timed in turns (ABBA), a speedup per round, an interval over rounds ---------------

def test_block_medians_split_the_samples_by_block_lengths():
    from bench_utils.results.stats import block_medians_ms

    samples_s = [0.001, 0.002, 0.003, 0.004, 0.005, 0.006]
    assert block_medians_ms(samples_s, [2, 4]).tolist() == pytest.approx([1.5, 4.5])  # ms
    assert block_medians_ms(samples_s, [6]).tolist() == pytest.approx([3.5])  # one block: the process's median
    assert block_medians_ms(samples_s, [1] * 6).tolist() == pytest.approx([1, 2, 3, 4, 5, 6])
    for bad in ([2, 3], [0, 6], [3, 3, 1], []):  # not adding up to the samples, or an empty block
        with pytest.raises(ValueError, match="block_lengths"):
            block_medians_ms(samples_s, bad)


def test_paired_log_ratios_pair_block_i_of_both_modes():
    from bench_utils.results.stats import paired_log_ratios

    ratios = paired_log_ratios(np.array([2.0, 4.0, 3.0]), np.array([1.0, 1.0]))
    assert ratios.tolist() == pytest.approx([math.log(2), math.log(4)])  # the unpaired third block is left out
    assert paired_log_ratios(np.array([5.0]), np.array([5.0])).tolist() == [0.0]
    with pytest.raises(ValueError, match="at least one timed block"):
        paired_log_ratios(np.array([]), np.array([1.0]))


def test_speedup_over_one_round_is_a_t_interval_over_its_block_pairs():
    from bench_utils.results.stats import speedup_over_rounds

    # logs 0.1 and 0.3: mean 0.2, sd 0.141421, t(0.975, 1) = 12.7062 -> half-width 1.27062
    est = speedup_over_rounds([np.array([0.1, 0.3])])
    assert est.speedup == pytest.approx(math.exp(0.2)) == pytest.approx(1.2214028)
    assert (est.ci95_low, est.ci95_high) == (pytest.approx(0.34279576), pytest.approx(4.3519346))
    assert not est.between_process and not est.significant
    same = speedup_over_rounds([np.log([2.0, 2.0, 2.0])])  # no spread: a zero-width interval
    assert (same.speedup, same.ci95_low, same.ci95_high) == (pytest.approx(2.0),) * 3 and same.significant
    single = speedup_over_rounds([np.log([2.0])])  # one block pair: no spread to measure, no interval
    assert single.speedup == pytest.approx(2.0) and single.ci95_low == 0.0 and math.isinf(single.ci95_high)


def test_speedup_over_several_rounds_is_a_t_interval_over_the_round_means():
    from bench_utils.results.stats import speedup_over_rounds

    # round means 0.2, 0.4, 0.3: mean 0.3, sd 0.1, t(0.975, 2) = 4.30265 -> half-width 0.248414
    rounds = [np.array([0.1, 0.3]), np.array([0.4]), np.array([0.25, 0.35])]
    est = speedup_over_rounds(rounds)
    assert est.speedup == pytest.approx(math.exp(0.3)) == pytest.approx(1.3498588)
    assert (est.ci95_low, est.ci95_high) == (pytest.approx(1.05294), pytest.approx(1.7305059))
    assert est.between_process and est.significant
    assert speedup_over_rounds([*rounds, np.array([])]) == est  # a round without a block pair is left out
    with pytest.raises(ValueError, match="rounds"):
        speedup_over_rounds([np.array([])])


def test_a_round_is_the_median_of_its_block_pairs():
    from bench_utils.results.stats import round_log_speedup, speedup_over_rounds

    # four pairs, the first caught by a level shift of the machine (a compiled block twice as slow):
    # the median 0.2 (mean of the middle two, 0.19 and 0.21) where the mean would read 0.0325
    disturbed = np.array([-0.65, 0.19, 0.21, 0.38])
    assert round_log_speedup(disturbed) == pytest.approx(0.2)
    assert round_log_speedup(np.array([0.1, 0.3])) == pytest.approx(0.2)  # two pairs: their mean
    est = speedup_over_rounds([disturbed, np.array([0.2, 0.2]), np.array([0.2])])
    assert est.speedup == pytest.approx(math.exp(0.2)) and est.ci95_low == pytest.approx(est.ci95_high)


def test_outlying_rounds_leave_one_out():
    from bench_utils.results.stats import outlying_rounds

    assert outlying_rounds(np.array([0.0, 0.01, -0.01, 0.005, 1.0])) == [4]  # one stretch far off
    assert outlying_rounds(np.array([0.0, 0.01, -0.01, 0.005, 0.02])) == []  # within the others' spread
    assert outlying_rounds(np.array([0.0, 0.01, 5.0])) == []  # fewer than four rounds: never judged


def test_relative_halfwidth_on_the_log_scale():
    from bench_utils.results.stats import SpeedupEstimate, relative_halfwidth

    assert relative_halfwidth(SpeedupEstimate(1.0, 0.8, 1.25)) == pytest.approx(0.25)  # sqrt(1.25 / 0.8) - 1
    assert relative_halfwidth(SpeedupEstimate(2.0, 2.0, 2.0)) == 0.0
    assert relative_halfwidth(SpeedupEstimate(2.0, 1.9, 2.1)) == pytest.approx(math.sqrt(2.1 / 1.9) - 1)
    assert math.isinf(relative_halfwidth(SpeedupEstimate(2.0, 0.0, math.inf)))  # one block pair: no interval


def test_design_effect_of_rounds_measured_in_pairs_of_processes():
    from bench_utils.results.stats import design_effect

    # two pairs of processes, each pair's rounds agreeing exactly but the pairs apart: rho 1, m 2
    assert design_effect(np.array([0.0, 0.0, 1.0, 1.0]), ["a", "a", "b", "b"]) == pytest.approx(2.0)
    # the pairs agree on average: the spread is within pairs, rho 0
    assert design_effect(np.array([0.0, 1.0, 0.0, 1.0]), ["a", "a", "b", "b"]) == 1.0
    # every round its own processes (rows from before sessions), or one pair for all: nothing to estimate
    assert design_effect(np.array([0.0, 1.0, 2.0]), ["a", "b", "c"]) == 1.0
    assert design_effect(np.array([0.0, 1.0, 2.0]), ["a", "a", "a"]) == 1.0
    # unbalanced: sizes 3 and 1; one-way ANOVA by hand: grand mean 0.25, MSB = (3 * 0.25^2 + 0.75^2) / 1
    # = 0.75, MSW = (0.1^2 + 0 + 0.1^2) / 2 = 0.01, n0 = (4 - 10 / 4) / 1 = 1.5, var_b = 0.74 / 1.5
    logs = np.array([-0.1, 0.0, 0.1, 1.0])
    var_b = (0.75 - 0.01) / 1.5
    rho = var_b / (var_b + 0.01)
    assert design_effect(logs, ["a", "a", "a", "b"]) == pytest.approx(1 + (10 / 4 - 1) * rho)


def test_an_interval_over_clustered_rounds_is_widened_by_the_design_effect():
    from scipy.stats import t

    from bench_utils.results.stats import speedup_over_rounds

    rounds = [np.array([v]) for v in (0.0, 0.0, 1.0, 1.0)]
    plain = speedup_over_rounds(rounds)  # every round its own processes
    clustered = speedup_over_rounds(rounds, ["a", "a", "b", "b"])
    sd = np.std([0.0, 0.0, 1.0, 1.0], ddof=1)
    assert math.log(plain.ci95_high) - 0.5 == pytest.approx(t.ppf(0.975, 3) * sd / 2)
    # deff 2: variance doubled, and the degrees of freedom of 4 / 2 rounds (at least clusters - 1 = 1)
    assert math.log(clustered.ci95_high) - 0.5 == pytest.approx(t.ppf(0.975, 1) * sd * math.sqrt(2 / 4))
    assert clustered.between_process and plain.speedup == clustered.speedup == pytest.approx(math.exp(0.5))
    # all rounds in one pair: the rounds are the stretches; the interval says it saw one pair of processes
    one_pair = speedup_over_rounds(rounds, ["a"] * 4)
    assert (one_pair.ci95_low, one_pair.ci95_high) == (plain.ci95_low, plain.ci95_high)
    assert not one_pair.between_process


def test_one_more_round_is_worth_more_in_a_new_pair_when_the_pairs_disagree():
    from bench_utils.results.stats import halfwidth_with_round

    # pairs a and b apart, their own rounds close: one-way ANOVA by hand: MSB = 0.25, MSW = 0.005,
    # n0 = 2, var_b = 0.1225, rho = 0.1225 / 0.1275; sd of the four rounds sqrt(0.26 / 3)
    logs, pairs = [0.0, 0.1, 0.5, 0.6], ["a", "a", "b", "b"]
    rho, sd = 0.1225 / 0.1275, math.sqrt(0.26 / 3)
    # a fifth round in pair a: sizes 3, 2, deff 1 + (13 / 5 - 1) rho, dof max(5 / deff - 1, 1) = 1
    deff = 1 + 1.6 * rho
    same = math.exp(12.706204736 * sd * math.sqrt(deff / 5)) - 1
    assert halfwidth_with_round(logs, pairs, "a") == pytest.approx(same) and same == pytest.approx(13.36, abs=0.01)
    # in a new pair: sizes 2, 2, 1, deff 1 + (9 / 5 - 1) rho, dof max(5 / deff - 1, clusters - 1) = 2
    deff = 1 + 0.8 * rho
    new = math.exp(4.302652730 * sd * math.sqrt(deff / 5)) - 1
    assert halfwidth_with_round(logs, pairs, "new") == pytest.approx(new) and new == pytest.approx(1.124, abs=0.001)
    # the pairs agree, the spread is within them (rho 0): a round is worth the same in either
    logs = [0.0, 0.6, 0.0, 0.6]
    plain = math.exp(2.776445105 * np.std(logs, ddof=1) / math.sqrt(5)) - 1  # 5 rounds, 4 dof
    assert halfwidth_with_round(logs, pairs, "a") == pytest.approx(plain)
    assert halfwidth_with_round(logs, pairs, "new") == pytest.approx(plain)
    assert math.isinf(halfwidth_with_round([0.3], ["a"], "a"))  # one round: no spread to project


def test_the_expected_best_of_k_equal_draws_matches_a_simulation():
    from bench_utils.results.stats import SpeedupEstimate, expected_maximum, lowered

    rng = np.random.default_rng(3)
    for k, known in ((1, 0.0), (2, 0.5642), (3, 0.8463), (5, 1.1630)):
        assert expected_maximum(k) == pytest.approx(known, abs=1e-4)
        assert rng.standard_normal((200_000, k)).max(axis=1).mean() == pytest.approx(known, abs=0.01)
    moved = lowered(SpeedupEstimate(1.2, 1.1, 1.3), 0.05)  # point and low end down, high end kept
    assert (moved.speedup, moved.ci95_low, moved.ci95_high) == pytest.approx((1.2 * math.exp(-0.05),
                                                                             1.1 * math.exp(-0.05), 1.3))


def test_the_rounds_a_spread_needs_for_a_half_width():
    from bench_utils.results.stats import rounds_for_halfwidth

    # rounds straying by 10% (log) each: +-10% (log 0.0953) first holds at 7 rounds, t(6) 2.447 * 0.1 / sqrt(7)
    # = 0.0925; at 6, t(5) 2.571 * 0.1 / sqrt(6) = 0.105 does not
    assert rounds_for_halfwidth(0.1, math.log1p(0.10), most=100) == 7.0
    assert rounds_for_halfwidth(0.1, math.log1p(0.10), most=6) == math.inf  # not within `most`
    assert rounds_for_halfwidth(0.0, math.log1p(0.05), most=100) == 2.0  # rounds that agree: the least there is
    assert rounds_for_halfwidth(math.nan, 0.1, most=100) == math.inf  # one round: no spread to go by


def test_a_first_round_s_halfwidth_is_t_times_the_root_mean_square_of_its_deviations():
    from scipy.stats import t

    from bench_utils.results.stats import first_round_halfwidth

    assert first_round_halfwidth([0.1, -0.1, 0.1]) == pytest.approx(t.ppf(0.975, 3) * 0.1)
    assert first_round_halfwidth([0.05, 0.05, 0.05]) == pytest.approx(t.ppf(0.975, 3) * 0.05)  # a bias counts
    assert first_round_halfwidth([]) == 0.0


def test_over_several_rounds_p10_and_p90_weigh_each_round_as_the_median_does():
    # a fast round's many calls and a slow round's few: pooled, p90 fell below the median (3 ms beside 6 ms)
    from bench_utils.results.stats import summarize_runs

    fast, slow = [0.003] * 85 + [0.0031] * 15, [0.012] * 5
    summary = summarize_runs([fast, slow])
    assert summary.median_ms == pytest.approx(6.0, rel=1e-3)  # the geometric mean of 3 and 12
    assert summary.p10_ms <= summary.median_ms <= summary.p90_ms
    assert summary.p90_ms == pytest.approx(math.sqrt(3.1 * 12.0), rel=1e-3)  # each round's own p90, geometric mean
    assert summary.mean_ms == pytest.approx((85 * 3.0 + 15 * 3.1 + 5 * 12.0) / 105)  # the guide's mean: every call
