"""The verdict on fixture rows: the race's recommendation against the margin, in words; one story per
page (pay-back only where compiling is worth it, a compile cost on every line, caveats that set a model
apart). Rows are made so each round's speedup is exactly what the test names."""

import dataclasses
import math
import re

import numpy as np
import pandas as pd

import pytest

from bench_utils.report.verdict import (Rules, page_caveats, run_next_step, verdict_short, verdict_table, verdict_text,
                                        verdicts)
from bench_utils.results import decision
from bench_utils.results.aggregate import to_dataframe
from bench_utils.results.stats import expected_maximum
from conftest import COMPILED_FIXTURE, make_row

EAGER_MS = 10.0
NO_GAIN = (0.96, 0.90, 1.04, 0.92, 1.01, 0.97, 0.89, 1.03)  # about 0.96x (0.92-1.01x): not worth a compile
CLEAR = (1.5, 1.52, 1.48, 1.5, 1.51, 1.49)  # 1.5x, tight: worth it
SLOWER = (0.8, 0.82, 0.79, 0.81, 0.8, 0.8)
STRADDLE = (1.02, 1.2, 1.05, 1.18, 1.1, 1.12)  # about 1.11x, its interval across 1.10x


def race_rows(model: str, speedups: dict, batch: int = 1, eager: dict | None = None, **common) -> list:
    """Eager at EAGER_MS in every round, and each configuration at EAGER_MS / its speedup of that round
    (two equal blocks per process: a round's speedup is exact). `speedups`: configuration -> per-round
    speedups, or a dict of row fields with "speedups" among them."""
    rounds = max(len(s if not isinstance(s, dict) else s["speedups"]) for s in speedups.values())
    rows = [make_row(model, batch, "eager", EAGER_MS, repeat=r, **(common | (eager or {}) | {"block_lengths": [4, 6]}))
            for r in range(rounds)]
    for name, spec in speedups.items():
        fields = dict(spec) if isinstance(spec, dict) else {"speedups": spec}
        values = fields.pop("speedups")
        # its blocks spread more than eager's: a round's block pairs differ, so one round has an interval
        extra = ((COMPILED_FIXTURE if name != "eager+bf16-autocast" else {}) | {"graph_breaks": 0, "spread": 0.03}
                 | common | fields | {"block_lengths": [4, 6]})
        for r, s in enumerate(values):  # a cold compile in round 0; the later rounds in its workers compile nothing
            compiled = {"compile_s": 33.3 if r == 0 and "eager" not in name else None}
            rows.append(make_row(model, batch, name, EAGER_MS / s, repeat=r, **(extra | compiled)))
    return rows


RULES = Rules(worthwhile=1.10, target_halfwidth=0.05, budget_min=8.0)


def verdict_of(rows, rules=RULES):
    table = verdicts(to_dataframe(rows), rules).set_index(["model", "batch_size"])
    return table


def test_a_gain_below_the_margin_is_an_answer_with_its_figures_and_compile_cost():
    rows = race_rows("resnet", {"default": NO_GAIN})
    row = verdict_of(rows).loc[("resnet", 1)]
    assert row["verdict"] == decision.NO_GAIN
    assert 1.0 <= row["race_ci95_high"] < 1.10 and row["race_ci95_low"] < 1.0  # not slower for sure
    assert row["answer"].startswith(f"No worthwhile gain: {row['race_speedup']:.3g}× (")
    assert "compile (default mode): at most" in row["answer"] and "below the 1.10× a compile must bring" in row["answer"]
    assert row["cost"] == "33 s cold"  # one sample: two figures; shown although nothing pays back
    assert math.isnan(row["breakeven_calls"]) and "pays back" not in row["summary"]
    assert "ResNet-50 (batch 1, CPU)" in row["summary"]


def test_compile_when_the_whole_interval_clears_the_margin_and_it_pays_back():
    rows = race_rows("vit", {"default": CLEAR}) + [make_row("vit", 1, "default", EAGER_MS / 1.5, repeat=6,
                                                            compile_s=4.63)]
    rows += [make_row("vit", 1, "eager", EAGER_MS, repeat=6)]
    row = verdict_of(rows).loc[("vit", 1)]
    assert row["verdict"] == decision.COMPILE and row["answer"].startswith("Compile — compile (default mode): 1.50× faster (")
    # 33.3 s / (10 - 6.67 ms) saved per call = 10,000 calls; warm: 4.63 s -> 1,389
    assert row["breakeven_calls"] == pytest.approx(33.3 / (EAGER_MS - EAGER_MS / 1.5) * 1000, rel=1e-3)
    assert row["cost"] == ("33 s cold, 4.63 s warm; pays back after 10,000 calls (1,400 with a warm "
                           "cache), saving 3.3 ms a call over eager")


def test_slower_and_cant_tell_say_why_and_what_settles_it():
    table = verdict_of(race_rows("resnet", {"default": SLOWER}) + race_rows("vit", {"default": STRADDLE}))
    assert table.loc[("resnet", 1), "verdict"] == decision.SLOWER
    assert table.loc[("resnet", 1), "answer"].startswith("Don't compile — slower: 0.80")
    vit = table.loc[("vit", 1)]
    assert (vit["verdict"], vit["reason"]) == (decision.CANT_TELL, "budget")  # wider than the +-5% asked for
    assert "straddles 1.10×: " in vit["answer"] and "budget ran out" not in vit["answer"]  # the target is not the point
    # what settles it: the rounds its spread asks for; the command is the run's one next step
    assert re.search(r"about \d+ more rounds? would settle it.*: see the next step$", vit["answer"]) or \
        "to settle it within 100 rounds" in vit["answer"]
    assert "make report" not in vit["answer"] and "--budget-min" not in vit["answer"]
    close = verdict_of(race_rows("vit", {"default": STRADDLE}), Rules(1.10, 0.5, 8.0)).loc[("vit", 1)]
    assert (close["verdict"], close["reason"]) == (decision.CANT_TELL, "close")
    assert re.search("more rounds? would settle it", close["answer"]) or "to settle it within 100 rounds" in close["answer"]


def test_where_a_profile_asks_for_no_extra_rounds_the_advice_is_more_repeats_not_a_larger_budget():
    # target_halfwidth 0 (cpu.yaml): the sweep runs `repeats` rounds and no more, whatever budget_min says
    rules = Rules(1.10, 0.0, 8.0, "cpu.yaml")
    vit = verdict_of(race_rows("vit", {"default": (1.05, 1.25, 1.1, 1.3)}), rules).loc[("vit", 1)]
    assert vit["verdict"] == decision.CANT_TELL
    step = run_next_step(to_dataframe(race_rows("vit", {"default": (1.05, 1.25, 1.1, 1.3)})), rules)
    assert re.fullmatch(r"Settle ViT-B/16 \(about \d+ more rounds?(, about \d+ min)?\): raise repeats by \d+ in cpu\.yaml, "
                        r'then make report PARAMS="cpu\.yaml"', step), step
    assert "--budget-min" not in step


@pytest.mark.parametrize("low, high, target, width, disturbed, outcome", [
    (1.12, 1.3, 0.05, 0.07, False, ("compile", "")), (0.905, 1.025, 0.08, 0.06, False, ("no_gain", "")),
    (0.95, 1.074, 0.08, 0.06, False, ("no_gain", "")), (0.8, 0.95, 0.05, 0.08, False, ("slower", "")),
    (1.0, 1.2, 0.05, 0.09, False, ("cant_tell", "budget")), (1.0, 1.2, 0.10, 0.09, True, ("cant_tell", "busy")),
    (1.05, 1.15, 0.10, 0.05, False, ("cant_tell", "close")),
    (1.0, 1.2, 0.05, 0.09, True, ("cant_tell", "busy"))])  # a disturbed machine is said first, before the budget
def test_the_decision_reads_the_interval_against_the_margin(low, high, target, width, disturbed, outcome):
    row = {"configuration": "default", "race_ci95_low": low, "race_ci95_high": high, "race_halfwidth": width,
           "disturbed": disturbed}
    made = decision.decide(row, 1.10, target)
    assert (made.outcome, made.reason) == outcome
    assert decision.decide(row | {"configuration": "eager+bf16-autocast"}, 1.10, target).outcome == (
        "use" if outcome[0] == "compile" else outcome[0])  # worth it without compiling: run it eagerly
    assert decision.decide(None, 1.10, target).outcome == decision.NO_DATA
    assert decision.decide(None, 1.10, target, any_accurate=False).outcome == decision.INACCURATE


def test_the_race_recommends_the_fastest_accurate_configuration_and_names_the_rest():
    rows = race_rows("resnet", {
        "default": NO_GAIN,
        "default+freezing": (1.45, 1.5, 1.52, 1.48, 1.5, 1.49, 1.51, 1.5),
        "max-autotune-no-cudagraphs+freezing": (1.4, 1.49, 1.5, 1.47, 1.52, 1.49, 1.5, 1.48),
        "default+bf16-autocast": {"speedups": (2.5,), "accuracy_ok": False, "task_agreement": 0.0},  # fast, wrong
        "default+channels-last": {"speedups": (0.7,)}})  # clearly slower in the selection round
    rows += [make_row("resnet", 1, name, status="unsupported", error="this CPU has no native bfloat16 (AVX2)")
             for name in ("eager+bf16-autocast", "eager+fp16-autocast")]
    table = verdict_of(rows)
    row = table.loc[("resnet", 1)]
    assert row["verdict"] == decision.COMPILE and row["configuration"] == "default+freezing"
    assert row["answer"].startswith("Compile — compile (default mode) with freezing: 1.")
    assert row["race_speedup"] == pytest.approx(1.5, abs=0.02)
    assert row["runner_up"].startswith("compile (max-autotune-no-cudagraphs mode) with freezing: 1.4")
    assert "within the margin of the choice" in row["runner_up"]
    assert row["others"].startswith("plain torch.compile (default mode) 0.9")
    # dropped with channels_last: its figure first, "and" before the other name, the reason once
    assert re.match(r"plain torch\.compile \(default mode\) 0\.9\d+× \([0-9.–×]+\) and compile \(default mode\) in "
                    "channels_last layout: dropped after the first round", row["others"]), row["others"]
    # never recommended, with the reason; named in words, never by code
    assert "compile (default mode) in bfloat16 autocast: changes the answer" in row["others"]
    assert "compile (default mode) in channels_last layout: dropped after the first round, slower than the choice " \
        "there" in row["others"]
    assert "+" not in row["others"]
    # out for the same reason: named together, the reason said once
    assert ("eager in bfloat16 autocast, eager in float16 autocast: this CPU has no native bfloat16 (AVX2)"
            in row["others"])
    # plain default is named once: with its figure, and why it left the race if it did
    assert row["others"].count("plain torch.compile") == 1 and row["others"].count("(default mode)") == 3
    assert "(default mode):" not in row["others"] and "(default mode), " not in row["others"]


def test_a_model_whose_configurations_are_all_not_supported_here_says_so_not_a_failure_code():
    reason = "this CPU has no native bfloat16 (AVX2)"
    rows = [make_row("resnet", 1, "eager", EAGER_MS)]
    rows += [make_row("resnet", 1, name, status="unsupported", error=reason)
             for name in ("eager+bf16-autocast", "default+bf16-autocast")]
    rows += [make_row("vit", 1, "eager", EAGER_MS), make_row("vit", 1, "default", status="oom", error="oom: fixture"),
             make_row("vit", 1, "default+bf16-autocast", status="unsupported", error=reason)]
    table = verdict_of(rows)
    assert table.loc[("resnet", 1), "answer"] == "No answer: the configurations were not supported here"
    assert table.loc[("vit", 1), "answer"] == "No answer: the configurations were OOM, not supported here"


def test_when_the_first_round_drops_every_rival_the_fastest_of_them_is_the_runner_up():
    rows = race_rows("resnet", {"default+bf16-autocast": (2.0, 2.02, 1.98, 2.0, 2.01),
                                "default": {"speedups": (1.05,), "spread": 0.01},
                                "eager+bf16-autocast": {"speedups": (1.2,), "spread": 0.01}})
    df = to_dataframe(rows).set_index("configuration")
    assert list(df.loc[["default", "eager+bf16-autocast"], "race_outcome"]) == ["dropped", "dropped"]  # not chased
    chosen = df.loc["default+bf16-autocast"]
    assert chosen["runner_up"] == "eager+bf16-autocast"  # the faster of the two dropped
    assert chosen["versus_runner_up"] == pytest.approx(2.0 / 1.2, rel=0.05)  # over round 0, the one both ran
    from bench_utils.results.stats import round_halfwidth

    half = round_halfwidth(np.log((2.0, 2.02, 1.98, 2.0, 2.01)), list(range(5)))  # one round of the leader moves so
    assert chosen["versus_ci95_low"] <= chosen["versus_runner_up"] * math.exp(-half) * (1 + 1e-9)
    assert chosen["versus_ci95_high"] >= chosen["versus_runner_up"] * math.exp(half) * (1 - 1e-9)
    row = verdict_of(rows).loc[("resnet", 1)]
    assert row["runner_up"].startswith("eager in bfloat16 autocast: 1.2")
    assert "the choice is faster (1.6" in row["runner_up"] and "in the first round, which dropped it" in row["runner_up"]
    assert "eager+bf16-autocast" not in row["others"]  # said once, in its own column
    assert row["others"] == ("plain torch.compile (default mode) 1.05× (1.03–1.07×): dropped after the first round, "
                             "slower than the choice there")  # named once, with why it left


def test_a_runner_up_faster_beyond_doubt_over_the_later_rounds_overtakes_the_selection_rounds_leader():
    """One disturbed block can put the slower configuration first in the selection round (a race in a
    notebook on a Zen 3: frozen ResNet-50's last block of round 0 at 0.44x); over every round both ran the
    runner-up is faster beyond doubt, so it leads: the answer never recommends the one the rounds show slower."""
    from bench_utils.results.aggregate import cells
    from bench_utils.results.race import race

    rows = race_rows("resnet", {"default": {"speedups": (1.07, 1.04, 1.05, 1.04, 1.05, 1.06), "spread": 0.3},
                                "default+freezing": {"speedups": (1.05, 1.43, 1.45, 1.42, 1.44, 1.43), "spread": 0.3}})
    records = [r for r in cells(rows) if r["model"] == "resnet"]
    result = race(records)
    assert (result.leader, result.runner_up) == ("default+freezing", "default")
    assert result.versus.ci95_low > 1.0  # the choice is faster than the runner-up, paired by round
    table = verdict_of(rows).loc[("resnet", 1)]
    assert table["configuration"] == "default+freezing" and table["verdict"] == "compile"


def test_a_dropped_runner_up_within_a_round_s_spread_is_not_called_slower_for_sure():
    # round 0's block pairs put the choice clearly ahead (1.5 against 1.2); its rounds move by +-13%, so the
    # ratio over the dropped one, widened to that, crosses 1: the page says what round 0 decided, not more
    rows = race_rows("vit", {"default+bf16-autocast": {"speedups": (1.5, 1.3, 1.7, 1.35, 1.65), "spread": 0.001},
                             "eager+bf16-autocast": {"speedups": (1.2,), "spread": 0.001}})
    rec = to_dataframe(rows).set_index("configuration").loc["default+bf16-autocast"]
    assert rec["runner_up"] == "eager+bf16-autocast" and rec["versus_ci95_low"] < 1.0 < rec["versus_ci95_high"]
    row = verdict_of(rows).loc[("vit", 1)]
    assert "dropped after the first round, where the choice was ahead by 1.2" in row["runner_up"]
    assert row["runner_up"].endswith(": not sure across rounds") and "can't tell which" not in row["runner_up"]


def test_a_dropped_configuration_s_one_round_interval_is_as_wide_as_the_leader_s_rounds_spread():
    from scipy.stats import t

    leader = (2.0, 2.2, 1.8, 2.1, 1.9)
    rows = race_rows("vit", {"default+bf16-autocast": leader, "default": {"speedups": (1.05,), "spread": 0.01}})
    dropped = to_dataframe(rows).set_index("configuration").loc["default"]
    assert dropped["race_outcome"] == "dropped" and dropped["race_rounds"] == 1
    half = t.ppf(0.975, 4) * np.log(leader).std(ddof=1)  # another stretch moves one round by that much
    assert dropped["race_speedup"] == pytest.approx(1.05, rel=1e-3)
    assert (dropped["race_ci95_low"], dropped["race_ci95_high"]) == pytest.approx(
        (1.05 * math.exp(-half), 1.05 * math.exp(half)), rel=2e-3)
    assert dropped["speedup_ci95_high"] < dropped["race_ci95_high"]  # its own round's block pairs: narrower


def test_the_figure_of_the_choice_is_lowered_for_the_round_that_chose_it():
    # round 0 (the selection round) flatters default+freezing: its figure over every round is lowered by
    # E_2 * s / n (the most a pick between two can lift it), the high end kept
    lucky = (1.8, 1.5, 1.5, 1.5, 1.5)
    rows = race_rows("vit", {"default+freezing": lucky, "default": (1.4, 1.3, 1.3, 1.3, 1.3)})
    df = to_dataframe(rows).set_index("configuration")
    logs = np.log(lucky)
    bias = expected_maximum(2) * logs.std(ddof=1) / len(logs)  # 0.564
    chosen = df.loc["default+freezing"]
    assert chosen["race_outcome"] == "recommended" and chosen["race_rounds"] == 5
    assert chosen["race_selection_bias"] == pytest.approx(math.expm1(bias), rel=1e-2)
    assert chosen["race_speedup"] == pytest.approx(chosen["speedup"] / (1 + chosen["race_selection_bias"]), rel=1e-9)
    assert chosen["race_speedup"] == pytest.approx(math.exp(logs.mean() - bias), rel=1e-3)
    assert chosen["race_speedup"] < chosen["speedup"]  # the plain figure over every round keeps the luck
    assert chosen["race_ci95_high"] == pytest.approx(chosen["speedup_ci95_high"], rel=1e-9)
    assert chosen["race_ci95_low"] == pytest.approx(chosen["speedup_ci95_low"] / (1 + chosen["race_selection_bias"]))
    runner = df.loc["default"]  # not picked: its figure is its own, uncorrected
    assert runner["race_speedup"] == pytest.approx(runner["speedup"]) and runner["race_selection_bias"] == 0
    # the paired comparison is lowered too: the choice was the larger of the two in round 0
    diffs = logs - np.log((1.4, 1.3, 1.3, 1.3, 1.3))
    versus_bias = expected_maximum(2) * 2 / math.sqrt(2) * diffs.std(ddof=1) / len(diffs)
    assert chosen["versus_runner_up"] == pytest.approx(math.exp(diffs.mean() - versus_bias), rel=1e-3)
    alone = to_dataframe(race_rows("vit", {"default+freezing": lucky})).set_index("configuration")
    assert alone.loc["default+freezing", "race_selection_bias"] == 0  # nothing to choose from: no correction
    assert alone.loc["default+freezing", "race_speedup"] == pytest.approx(alone.loc["default+freezing", "speedup"])


def test_an_eager_alternative_faster_than_the_margin_is_the_answer_without_a_compile():
    rows = race_rows("vit", {"default": NO_GAIN, "eager+bf16-autocast": (1.25, 1.24, 1.26, 1.25, 1.24, 1.26)})
    row = verdict_of(rows).loc[("vit", 1)]
    assert row["verdict"] == decision.USE
    assert row["answer"].startswith("Don't compile — run eager in bfloat16 autocast: 1.25× faster (")
    assert row["cost"] == "nothing to compile"


def test_a_compile_pays_back_on_what_it_adds_to_the_fastest_configuration_that_compiles_nothing():
    # eager in bfloat16 autocast is 1.6x without a compile: compiled bfloat16's 2x saves 6.25 - 5 ms a
    # call over it, not 10 - 5 ms over eager float32 (ViT-B/16 on this CPU: 2.07x eager, 2.31x compiled);
    # both read from the speedups the page shows, which share eager's time
    fast = (2.0, 2.01, 1.99, 2.0, 2.01, 1.99)
    rows = race_rows("vit", {"default+bf16-autocast": fast, "eager+bf16-autocast": (1.6, 1.61, 1.59, 1.6, 1.61, 1.59)})
    speedups = to_dataframe(rows).set_index("configuration")["race_speedup"]
    row = verdict_of(rows).loc[("vit", 1)]
    assert row["verdict"] == decision.COMPILE
    saved_ms = EAGER_MS / speedups["eager+bf16-autocast"] - EAGER_MS / speedups["default+bf16-autocast"]
    assert row["breakeven_calls"] == pytest.approx(33.3 / saved_ms * 1000) and 25_000 < row["breakeven_calls"] < 29_000
    assert row["cost"] == ("33 s cold; pays back after 27,000 calls, saving 1.2 ms a call over eager in bfloat16 "
                           "autocast, 1.60× without a compile")
    # one that changes the answer, failed, or is not surely faster than eager float32 (its interval
    # reaches 1x, as DeepLabV3's eager bfloat16 once did: 0.945-1.40x), is no alternative: over eager
    lossy = race_rows("vit", {"default+bf16-autocast": fast, "eager+bf16-autocast": {
        "speedups": (1.6, 1.61, 1.59, 1.6, 1.61, 1.59), "accuracy_ok": False}})
    slow = race_rows("vit", {"default+bf16-autocast": fast, "eager+bf16-autocast": (0.9, 0.91, 0.89, 0.9, 0.91, 0.89)})
    unsure = race_rows("vit", {"default+bf16-autocast": fast, "eager+bf16-autocast": (1.01, 1.3, 0.95, 1.2, 0.92, 1.25)})
    unsure_alt = to_dataframe(unsure).set_index("configuration").loc["eager+bf16-autocast"]
    assert unsure_alt["race_speedup"] > 1.0 > unsure_alt["race_ci95_low"]
    failed = race_rows("vit", {"default+bf16-autocast": fast}) + [
        make_row("vit", 1, "eager+bf16-autocast", status="crashed", repeat=0)]
    for other in (lossy, slow, failed, unsure):
        rec = to_dataframe(other).set_index("configuration").loc["default+bf16-autocast"]
        row = verdict_of(other).loc[("vit", 1)]
        assert row["breakeven_calls"] == pytest.approx(33.3 / (EAGER_MS - EAGER_MS / rec["race_speedup"]) * 1000)
        assert row["cost"].startswith("33 s cold; pays back after 6,") and row["cost"].endswith("a call over eager")


def test_a_pay_back_that_never_comes_says_so_and_its_bar_says_why():
    from bench_utils.report import charts
    from bench_utils.report.grouped_bars import figure
    from bench_utils.report.figure_words import payback_words

    # a dropped alternative's figure is its first round's: the choice's, over every round, can fall below it
    rec = {"configuration": "default+bf16-autocast", "race_speedup": 1.96, "eager_ms_median": 10.0,
           "compile_s": 33.3, "compile_warm_s": 4.0}
    over = {"configuration": "eager+bf16-autocast", "race_speedup": 2.0}
    text, cold, warm = payback_words(rec, over)
    assert text == "no pay-back: by these figures not faster than eager in bfloat16 autocast, 2.00× without a compile"
    assert math.isinf(cold) and math.isinf(warm)
    fig, axes = figure(6, 2)
    chosen = {"model": ["vit"], "batch_size": [1], "configuration": ["default+bf16-autocast"],
              "breakeven_calls": [math.inf]}
    charts._payoff_bars(axes[0][0], pd.DataFrame(chosen), {})
    assert [t.get_text() for t in axes[0][0].texts] == ["no pay-back: not faster than a run without compiling"]


def test_caveats_are_said_where_they_set_a_model_apart():
    busy = {"others_cpu_pct": 18.0}
    rows = (race_rows("resnet", {"default": CLEAR}) + race_rows("vit", {"default": CLEAR}, eager=busy)
            + race_rows("segformer", {"default": {"speedups": CLEAR, "graph_breaks": 3, "spread": 0.2}}))
    table = verdict_of(rows)
    assert table.loc[("resnet", 1), "caveats"] == ""  # nothing sets it apart
    assert table.loc[("vit", 1), "caveats"] == "busy machine: other processes used 18% of the CPU"
    assert table.loc[("segformer", 1), "caveats"].startswith("3 graph break(s); noisy timings: calls spread ±")
    same_spread = verdict_of(race_rows("resnet", {"default": {"speedups": CLEAR, "spread": 0.2}}, spread=0.2))
    assert "noisy" not in same_spread.loc[("resnet", 1), "caveats"]  # every cell as noisy: says nothing


def test_the_page_table_says_for_what_and_the_index_line_carries_the_interval_and_cost():
    rows = race_rows("resnet", {"default": NO_GAIN}) + race_rows("resnet", {"default": CLEAR}, batch=16)
    df = to_dataframe(rows)
    shown = verdict_table(df, RULES)
    assert list(shown.columns) == ["Model", "For", "Latency (eager → chosen)", "Answer", "Compile cost", "Watch out"]
    from bench_utils.report.verdict import race_table  # the race behind each answer: folded below it

    assert list(race_table(df, RULES).columns) == ["Model", "For", "Runner-up", "Also raced", "Why"]
    assert list(shown["For"]) == ["batch 1, float32, CPU", "batch 16, float32, CPU"]
    lines = verdict_short(df, RULES)
    assert lines[0].startswith("ResNet-50 (batch 1): no worthwhile gain, 0.9") and lines[0].endswith("33 s cold")
    assert lines[1].startswith("ResNet-50 (batch 16): compile, 1.50× (1.4")
    assert "with compile (default mode), " in lines[1]  # named as the page names it, not by its code
    assert verdict_text(df, RULES).count("\n") == 1


def test_random_weights_and_one_process_per_cell_are_said_once_per_page():
    rows = race_rows("vit", {"default": CLEAR})
    notes = page_caveats(to_dataframe(rows))
    assert notes[0].startswith("Random weights: the latencies stand")
    single = [make_row("vit", 1, "eager", 2.0), make_row("vit", 1, "default", 1.0)]
    assert any("One process per cell" in note for note in page_caveats(to_dataframe(single)))


def test_a_warm_up_that_had_not_ended_is_no_caveat_of_the_answer():
    """Whether a round's first block ran slower is the method's diagnosis (the blocks' warm-up tail, in the
    page's measurement notes), not advice about the user's model beside its answer."""
    rows = race_rows("vit", {"default": CLEAR})
    slow_start = [dataclasses.replace(row, samples_s=[s * (1.2 if i < 4 else 1.0) for i, s in enumerate(row.samples_s)])
                  if row.configuration == "default" else row for row in rows]  # its first block 20% slower
    table = verdict_of(slow_start)
    assert "warm-up" not in (table.loc[("vit", 1), "caveats"] or "")
    assert to_dataframe(slow_start).set_index("configuration").loc["default", "warmup_unfinished"]  # still measured


def test_a_figure_on_fewer_than_five_rounds_is_said_once_for_the_page_or_per_model():
    few = (1.5, 1.52, 1.48)  # one configuration: every round counts, three of them
    everywhere = to_dataframe(race_rows("vit", {"default": few}) + race_rows("resnet", {"default": few}))
    assert any(note.startswith("Every figure rests on fewer than 5 rounds") for note in page_caveats(everywhere))
    assert not any("round(s)" in (c or "") for c in verdicts(everywhere, RULES)["caveats"])  # not on every row
    mixed = to_dataframe(race_rows("vit", {"default": few}) + race_rows("resnet", {"default": CLEAR}))
    assert not any(note.startswith("Every figure") for note in page_caveats(mixed))
    # a sweep stopped in its first pass: the cure is running it again, not a larger budget
    stopped = page_caveats(everywhere, first_pass=(7, 10))
    assert stopped[0].startswith("The sweep stopped before its first pass ended: 7 of 10 rounds are still to measure")
    assert not any(note.startswith("Every figure") or "budget_min" in note for note in stopped)
    table = verdicts(mixed, RULES).set_index("model")
    assert "3 rounds only: so few can give too narrow or too wide an interval" in table.loc["vit", "caveats"]
    assert "round(s)" not in (table.loc["resnet", "caveats"] or "")


def test_an_interval_end_just_below_the_margin_never_reads_as_the_margin():
    # ResNet-50 in a report: 1.01x (0.937-1.0997x), "no worthwhile gain" -- not "(0.937-1.10x) ... at
    # most 10% faster, below the 1.10x"
    row = {"configuration": "default", "race_speedup": 1.012, "race_ci95_low": 0.937, "race_ci95_high": 1.0997,
           "race_halfwidth": 0.083, "disturbed": False}
    made = decision.decide(row, 1.10, 0.05)
    assert made.outcome == decision.NO_GAIN
    from bench_utils.report.verdict import _answer_sentence
    answer = _answer_sentence(made.outcome, made.reason, row, RULES)
    assert "(0.937–1.0997×)" in answer and "less than 10% faster, below the 1.10×" in answer
    plain = _answer_sentence(made.outcome, made.reason, row | {"race_ci95_high": 1.074}, RULES)
    assert "(0.937–1.07×)" in plain and "at most 7% faster" in plain


def test_a_cant_tell_for_the_budget_advises_a_command_whose_budget_adds_the_rounds(tmp_path):
    # eager at 2 ms; the compiled configuration 1.10-1.30x by round: about 1.2x (1.06-1.36x) straddles 1.10,
    # and the budget (1 min) ran out after 4 rounds of 30 s each
    import dataclasses
    import datetime as dt

    from bench_utils.config.bench_config import BenchConfig
    from bench_utils.results.aggregate import to_dataframe
    from bench_utils.results.sweep_time import seconds_spent
    from bench_utils.sweep.adaptive import next_round
    from conftest import make_row

    cfg = BenchConfig(label="CPU", models=("vit",), batch_sizes=(1,), configurations=("eager", "default"), repeats=2,
                      target_halfwidth=0.05, budget_min=1.0, max_repeats=30, blocks=2)
    start = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.timezone.utc)
    rows = []
    for repeat, speedup in enumerate((1.10, 1.30, 1.15, 1.25)):
        when = (start + dt.timedelta(seconds=30 * repeat)).isoformat()
        forked = dict(started_at=when, template_round=0)  # each round a process forked from round 0's
        rows += [make_row("vit", 1, "eager", 2.0, repeat=repeat, duration_s=29.0, **forked),
                 make_row("vit", 1, "default", 2.0 / speedup, repeat=repeat, duration_s=30.0, **forked)]
    df = to_dataframe(rows)
    text = verdict_text(df, Rules.of(cfg, "parameters/mine.yaml"))
    assert "Can't tell" in text and "would settle it" in text
    found = re.search(r"Next step: Settle ViT-B/16 \(about (\d+) more rounds?, about (\d+) min\): "
                      r'make report PARAMS="parameters/mine\.yaml --budget-min ([0-9.]+)"$', text)
    assert found, text
    extra, budget = int(found.group(1)), float(found.group(3))
    spent = seconds_spent(rows)
    assert spent == pytest.approx(120.0) and next_round(cfg, rows, spent) is None  # the budget is spent
    # the advised budget: the sweep's clock so far plus the rounds' minutes (30 s each) with a fifth to spare
    assert budget * 60 >= spent + extra * 30.0
    more = next_round(dataclasses.replace(cfg, budget_min=budget), rows, spent)
    assert more is not None and more.repeat == 4  # the command adds rounds, where "budget_min: 2" added none


def test_between_two_the_rounds_cannot_tell_apart_the_simpler_is_recommended():
    # default+freezing led round 0, but over five rounds plain default is as fast (their paired ratio
    # holds 1x): recommend the one without freezing, with its own figure, and say why
    from conftest import make_row

    from bench_utils.results.aggregate import to_dataframe

    def blocks(ms_first: float, ms_second: float) -> dict:  # round 0's two blocks apart: it cannot drop either
        return {"samples_s": [ms_first / 1000] * 5 + [ms_second / 1000] * 5}

    rows = []
    for repeat, (plain, frozen) in enumerate([(1.50, 1.56), (1.57, 1.52), (1.55, 1.53), (1.52, 1.55), (1.56, 1.54)]):
        spread = ({"default": blocks(3.0 / 1.42, 3.0 / 1.58), "default+freezing": blocks(3.0 / 1.60, 3.0 / 1.52)}
                  if repeat == 0 else {})
        rows += [make_row("vit", 1, "eager", 3.0, repeat=repeat),
                 make_row("vit", 1, "default", 3.0 / plain, repeat=repeat, compile_s=5.0 if repeat == 0 else None,
                          **spread.get("default", {})),
                 make_row("vit", 1, "default+freezing", 3.0 / frozen, repeat=repeat,
                          compile_s=12.0 if repeat == 0 else None, **spread.get("default+freezing", {}))]
    df = to_dataframe(rows).set_index("configuration")
    assert df.loc["default", "race_outcome"] == "recommended" and df.loc["default", "race_simpler"]
    assert df.loc["default+freezing", "race_outcome"] == "runner_up"
    assert df.loc["default", "versus_ci95_low"] <= 1.0 <= df.loc["default", "versus_ci95_high"]
    assert verdict_text(df.reset_index(), Rules()).strip().startswith("ViT-B/16 (batch 1, CPU): Compile — compile "
                                                                      "(default mode):")
    runner_up = verdicts(df.reset_index(), Rules()).iloc[0]["runner_up"]
    assert runner_up.startswith("compile (default mode) with freezing:") and "the simpler to compile and keep" in runner_up
    # one the rounds tell apart stays the choice however elaborate: freezing 10% faster in every round
    faster = [row for row in rows if row.configuration != "default+freezing"] + [
        make_row("vit", 1, "default+freezing", 3.0 / (1.7 + 0.01 * r), repeat=r) for r in range(5)]
    df = to_dataframe(faster).set_index("configuration")
    assert df.loc["default+freezing", "race_outcome"] == "recommended" and not df.loc["default+freezing", "race_simpler"]


def test_a_cant_tell_over_few_rounds_says_when_every_block_pair_was_faster():
    # two rounds far apart (2.0x and 3.2x, the machine's host moved between them), every block pair well
    # above the margin: the answer says what the blocks say, then what more rounds would settle
    from conftest import make_row

    from bench_utils.results.aggregate import to_dataframe

    rows = []
    for repeat, speedup in enumerate((2.0, 3.2)):
        rows += [make_row("convnext", 1, "eager", 6.0, repeat=repeat, n=20, block_lengths=[5, 5, 5, 5]),
                 make_row("convnext", 1, "reduce-overhead", 6.0 / speedup, repeat=repeat, n=20,
                          block_lengths=[5, 5, 5, 5])]
    df = to_dataframe(rows)
    row = df[df["configuration"] == "reduce-overhead"].iloc[0]
    assert row["race_pairs"] == 8 and row["race_least_pair"] == pytest.approx(2.0)
    text = verdict_text(df, Rules(1.10, 0.05, 1.0))
    assert "Can't tell" in text
    assert re.search(r"faster in every one of its 8 block pairs \(by 2(\.0+)?× at least\), but over 2 rounds", text), text


def test_the_rules_defaults_are_the_configs_written_once():
    from bench_utils.config.bench_config import BenchConfig

    cfg = BenchConfig(label="x", models=("resnet",))
    assert Rules() == Rules.of(cfg)
    assert (Rules().worthwhile, Rules().target_halfwidth, Rules().budget_min) == (
        cfg.worthwhile, cfg.target_halfwidth, cfg.budget_min)


def test_configurations_the_rounds_cannot_tell_apart_give_way_to_the_simpler():
    """Three rounds of a noisy machine: the faster-looking compile's speed over eager in bfloat16 autocast
    has an interval holding 1x: nothing measured says it is faster, so the simpler (nothing to compile) is
    recommended, and the answer says the two were not told apart, with the rival's figure and their
    paired comparison in the same row."""
    from conftest import make_row

    from bench_utils.report.verdict import verdicts
    from bench_utils.results.aggregate import to_dataframe

    def blocks(ms_first: float, ms_second: float) -> dict:  # round 0's two blocks apart: it drops neither
        return {"samples_s": [ms_first / 1000] * 5 + [ms_second / 1000] * 5}

    rows = []
    for repeat, (frozen, autocast) in enumerate([(1.89, 1.42), (1.86, 1.67), (2.05, 1.65)]):
        first = repeat == 0
        rows += [make_row("deeplabv3-mobilenet", 1, "eager", 160.0, repeat=repeat),
                 make_row("deeplabv3-mobilenet", 1, "default+freezing", 160.0 / frozen, repeat=repeat,
                          compile_s=12.0 if first else None, **(blocks(160 / 1.5, 160 / 2.3) if first else {})),
                 make_row("deeplabv3-mobilenet", 1, "eager+bf16-autocast", 160.0 / autocast, repeat=repeat,
                          **(blocks(160 / 1.9, 160 / 1.1) if first else {}))]
    df = to_dataframe(rows)
    chosen = df.set_index("configuration").loc["eager+bf16-autocast"]
    assert chosen["race_outcome"] == "recommended" and chosen["race_simpler"]
    assert chosen["versus_ci95_low"] <= 1.0 <= chosen["versus_ci95_high"]  # not told apart
    answer = verdicts(df).iloc[0]["answer"]
    assert re.search(r"\(compile \(default mode\) with freezing reads 1\.\d+×, but the rounds cannot tell the two apart: "
                     r"this choice runs at 0\.\d+× \(0\.\d+–1\.\d+×\) its speed; the simpler is recommended\.\)$", answer), answer


def test_a_compile_adding_less_than_the_margin_over_a_run_without_one_is_not_recommended():
    """default + bf16 5% faster than eager bf16 in every round (their interval excludes 1x): a compile must
    add the margin over what runs without one, so eager bf16 is the choice: "Don't compile", never
    "Compile" beside "no pay-back"."""
    from conftest import make_row

    from bench_utils.results.aggregate import to_dataframe

    def blocks(ms_first: float, ms_second: float) -> dict:  # round 0's two blocks apart: it drops neither
        return {"samples_s": [ms_first / 1000] * 5 + [ms_second / 1000] * 5}

    rows = []
    for repeat in range(4):
        first = repeat == 0
        rows += [make_row("resnet", 1, "eager", 40.0, repeat=repeat),
                 make_row("resnet", 1, "default+bf16-autocast", 40.0 / (1.30 + 0.004 * repeat), repeat=repeat,
                          compile_s=18.0 if first else None, **(blocks(40 / 1.2, 40 / 1.45) if first else {})),
                 make_row("resnet", 1, "eager+bf16-autocast", 40.0 / (1.24 + 0.004 * repeat), repeat=repeat,
                          **(blocks(40 / 1.3, 40 / 1.15) if first else {}))]
    df = to_dataframe(rows).set_index("configuration")
    chosen = df.loc["eager+bf16-autocast"]
    assert chosen["race_outcome"] == "recommended" and chosen["race_simpler"]
    assert chosen["versus_ci95_high"] < 1.0  # the compiled one is faster, by less than the margin
    text = verdict_text(df.reset_index(), Rules())
    assert "Don't compile — run eager in bfloat16 autocast" in text and "Compile —" not in text
    runner_up = verdicts(df.reset_index(), Rules()).iloc[0]["runner_up"]
    assert "less than the 1.10× a compile must add: the choice compiles nothing" in runner_up, runner_up


def test_a_package_is_said_as_built_once_and_started_from_in_a_new_process():
    """An AOTInductor package's cost is its build, then a new process's load and first answer: the
    answer says "to build" and "to start", and its warm pay-back counts from the built package."""
    rows = race_rows("resnet", {"aot-inductor+freezing": {"speedups": CLEAR, "compile_warm_s": 0.55}})
    row = verdict_of(rows).loc[("resnet", 1)]
    assert row["verdict"] == decision.COMPILE and row["configuration"] == "aot-inductor+freezing"
    assert row["answer"].startswith("Compile — an AOTInductor package with freezing: 1.5")
    assert row["cost"].startswith("33 s to build, 0.550 s to start; pays back after ")
    assert "starting from the built package)" in row["cost"] and "warm cache" not in row["cost"]


def test_where_forms_built_ahead_were_raced_the_answer_says_how_to_serve_it_in_one_line():
    """Per way to serve the model: its fastest accurate configuration's figure and what it costs to
    start; a form that could not run says why in the exporter's words. A profile without such forms
    has no such column."""
    rows = race_rows("resnet", {"default+freezing": CLEAR, "default": SLOWER,
                                "aot-inductor+freezing": {"speedups": CLEAR, "compile_warm_s": 0.55}})
    rows.append(make_row("resnet", 1, "onnxruntime", None, "error", error="Unsupported: dynamo export: op aten::foo"))
    df = to_dataframe(rows)
    line = verdicts(df, RULES).iloc[0]["forms"]
    assert line.startswith("torch.compile: 1.5")
    assert " as compile (default mode) with freezing, 33 s cold" in line
    assert "; AOTInductor: 1.5" in line and ") with freezing, 33 s to build, 0.550 s to start" in line
    assert line.endswith("; ONNX Runtime: cannot serve it (Unsupported: dynamo export: op aten::foo)")
    assert "How to serve it" in verdict_table(df, RULES).columns
    plain = to_dataframe(race_rows("resnet", {"default+freezing": CLEAR}))
    assert verdicts(plain, RULES).iloc[0]["forms"] == "" and "How to serve it" not in verdict_table(plain, RULES).columns


def test_a_form_the_budget_left_out_is_not_raced_not_unable_to_serve():
    """A form whose configurations the fit left out (skipped rows) was never tried: the line says it was
    not raced and why, never that it cannot serve the model (as on a Zen 3's deploy report)."""
    rows = race_rows("resnet", {"aot-inductor+freezing": {"speedups": CLEAR, "compile_warm_s": 0.55}})
    why = ("left out to fit the 12.375-min budget (budget_min) at this machine's measured costs, as for the "
           "models measured before (each model races the same configurations)")
    assert len(why) > 160  # the sweep's sentence is shown whole, its closing bracket kept
    rows.append(make_row("resnet", 1, "default+freezing", None, "skipped", error=why))
    line = verdicts(to_dataframe(rows), RULES).iloc[0]["forms"]
    assert line.startswith(f"torch.compile: not raced ({why})") and "cannot serve" not in line


def test_one_next_step_settles_every_undecided_model_in_one_sweep():
    """Two models undecided on one page: one next step, whose --budget-min holds the rounds of both, since
    the same command's sweep gives both their rounds; each answer points at it instead of a command of
    its own."""
    import datetime as dt

    from bench_utils.config.bench_config import BenchConfig
    from bench_utils.report.next_step import Settling
    from bench_utils.results.aggregate import to_dataframe
    from conftest import make_row

    cfg = BenchConfig(label="CPU", models=("vit", "resnet"), batch_sizes=(1,), configurations=("eager", "default"),
                      repeats=2, target_halfwidth=0.05, budget_min=1.0, max_repeats=30, blocks=2)
    start = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.timezone.utc)
    rows = []
    for index, model in enumerate(("vit", "resnet")):
        for repeat, speedup in enumerate((1.10, 1.30, 1.15, 1.25)):
            when = (start + dt.timedelta(seconds=30 * (4 * index + repeat))).isoformat()
            forked = dict(started_at=when, template_round=0)
            rows += [make_row(model, 1, "eager", 2.0, repeat=repeat, duration_s=29.0, **forked),
                     make_row(model, 1, "default", 2.0 / speedup, repeat=repeat, duration_s=30.0, **forked)]
    df = to_dataframe(rows)
    rules = Rules.of(cfg, "parameters/mine.yaml")
    table = verdicts(df, rules).set_index("model")
    assert all(table.loc[model, "answer"].endswith("would settle it (about 1 min): see the next step")
               or "would settle it (about" in table.loc[model, "answer"] for model in ("vit", "resnet"))
    step = run_next_step(df, rules)
    found = re.fullmatch(r"Settle ViT-B/16 and ResNet-50 \(about (\d+) more rounds?, about (\d+) min\): "
                         r'make report PARAMS="parameters/mine\.yaml --budget-min ([0-9.]+)"', step)
    assert found, step
    own = {model: Settling.of(row, cfg.worthwhile).seconds for model, row in
           df.query("configuration == 'default'").set_index("model").iterrows()}
    assert float(found.group(3)) * 60 >= 240.0 + sum(own.values())  # the clock so far (8 rounds of 30 s) and both
    text = verdict_text(df, rules)
    assert text.count("make report") == 1 and text.endswith(f"Next step: {step}")  # one step, said once


def test_a_gain_on_the_margin_says_it_lies_too_close_for_rounds_to_settle_it():
    """A Can't tell whose point sits on the margin (a Zen 3's ResNet-50 read 1.09x, 1.01-1.20x): no
    number of rounds at its spread settles it, and the page says that, with the spread, not that the
    rounds scatter too widely (they moved by a few percent)."""
    on_the_margin = (1.06, 1.14, 1.08, 1.12)  # 1.0997x, a round moving by about 3%
    row = verdict_of(race_rows("resnet", {"default": on_the_margin})).loc[("resnet", 1)]
    assert row["verdict"] == decision.CANT_TELL
    assert re.search(r"at 1\.099\d× it lies too close to 1\.10× for rounds that move by ±[2-4]% each to settle it "
                     r"within 100 rounds: set worthwhile to the gain that matters to you", row["answer"]), row["answer"]
    assert "spread too widely" not in row["answer"]


def test_a_first_compile_the_cache_held_is_not_called_cold_nor_priced_as_one():
    """A round 0 whose compile hit the FX-graph cache (a cell's cache filled before it: a run resumed,
    or a cache shared with an earlier run, which once read "4.0 s cold" for a 26-s compile). The answer
    says no cold compile was measured, the pay-back is the warm compile's alone, the compile table says
    why and the pay-back chart draws no cold bar with a note; a miss keeps "cold"."""
    from bench_utils.report import charts
    from bench_utils.report.grouped_bars import figure
    from bench_utils.report.tables import compile_table

    held = {"speedups": CLEAR, "fx_cache_hits": 2, "fx_cache_misses": 0, "compile_warm_s": 4.0}
    rows = race_rows("resnet", {"default": held})
    row = verdict_of(rows).loc[("resnet", 1)]
    assert row["verdict"] == decision.COMPILE and not row["compile_cold"]
    assert row["cost"].startswith("33 s from a filled compiler cache (no cold compile here), 4.00 s warm; "
                                  "pays back after ") and " calls with a warm cache, saving " in row["cost"]
    assert "cold;" not in row["cost"] and math.isnan(row["breakeven_calls"]) and row["breakeven_warm_calls"] > 0
    notes = compile_table(to_dataframe(rows)).set_index("configuration").loc["default", "compile_notes"]
    assert "the compiler cache held it" in notes
    fig, axes = figure(6, 2)
    chosen = verdicts(to_dataframe(rows), RULES)
    charts._payoff_bars(axes[0][0], chosen, {})
    assert [t.get_text() for t in axes[0][0].texts] == [charts.HELD_NOTE]
    missed = verdict_of(race_rows("resnet", {"default": held | {"fx_cache_hits": 0, "fx_cache_misses": 2}}))
    assert missed.loc[("resnet", 1), "cost"].startswith("33 s cold, 4.00 s warm; pays back after ")
    assert compile_table(to_dataframe(race_rows("resnet", {"default": CLEAR}))).loc[0, "compile_notes"] == ""


def test_a_dropped_configuration_is_as_wide_as_the_run_s_first_rounds_stand_from_their_later_ones():
    # three models whose first round reads 8% above their two later ones, which agree; a fourth whose leader is
    # steady: its dropped rival's one round is as uncertain as the run's first rounds, not as its leader's
    from scipy.stats import t

    lifted = (2.0 * 1.08, 2.0, 2.0)
    rows = [row for model in ("resnet", "vit", "segformer") for row in race_rows(model, {"default": lifted})]
    rows += race_rows("convnext", {"default+bf16-autocast": (2.0, 2.0, 2.0), "default": {"speedups": (1.05,), "spread": 0.01}})
    df = to_dataframe(rows).set_index(["model", "configuration"])
    dropped = df.loc[("convnext", "default")]
    assert dropped["race_outcome"] == "dropped"
    half = t.ppf(0.975, 4) * math.sqrt(3 * math.log(1.08) ** 2 / 4)  # four configurations with three later rounds
    assert (dropped["race_ci95_low"], dropped["race_ci95_high"]) == pytest.approx(
        (1.05 * math.exp(-half), 1.05 * math.exp(half)), rel=2e-3)
    alone = to_dataframe(race_rows("convnext", {"default+bf16-autocast": (2.0, 2.0, 2.0),
                                                "default": {"speedups": (1.05,), "spread": 0.01}}))
    alone = alone.set_index("configuration").loc["default"]
    assert alone["race_ci95_high"] < 1.05 * math.exp(half / 4)  # one such configuration tells nothing: its own round


def test_the_run_s_first_round_spread_needs_three_configurations_with_later_rounds():
    from bench_utils.results.aggregate import cells
    from bench_utils.results.race import first_round_spread

    two = cells([row for model in ("resnet", "vit") for row in race_rows(model, {"default": (2.16, 2.0, 2.0)})])
    assert first_round_spread(two) == 0.0
    short = cells([row for model in ("resnet", "vit", "segformer") for row in race_rows(model, {"default": (2.16, 2.0)})])
    assert first_round_spread(short) == 0.0  # one later round: where later rounds put it is one round's word
    three = cells([row for model in ("resnet", "vit", "segformer") for row in race_rows(model, {"default": (2.16, 2.0, 2.0)})])
    assert first_round_spread(three) == pytest.approx(3.182 * math.log(1.08), rel=2e-3)


def test_cache_artifacts_cost_a_build_and_a_start_from_them_as_a_package_does():
    from bench_utils.report.figure_words import compile_cost_words

    row = {"configuration": "default+artifacts", "compile_s": 40.0, "compile_warm_s": 15.0, "fx_cache_hits": 0}
    assert compile_cost_words(row) == "40 s to build, 15.0 s to start"
