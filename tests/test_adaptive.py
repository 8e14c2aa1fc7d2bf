"""Which cell gets the next round (bench_utils/sweep/adaptive.py): rows written by hand, no torch.

Each cell group below has eager at 2 ms in every block and its compiled mode at `compiled_ms[r]` in
round r: the round's speedup is exactly 2 / compiled_ms[r], so the interval's width is known."""

import dataclasses
import math

import pytest

from bench_utils.config.bench_config import BenchConfig
from bench_utils.results.sweep_time import seconds_spent
from bench_utils.sweep.adaptive import (contenders, first_pass_left, first_pass_state, next_round, race_round,
                                      round_seconds, widest_halfwidth)
from bench_utils.sweep.jobs import Round
from conftest import make_row

CFG = dict(label="CPU", models=("vit", "resnet"), batch_sizes=(1, 4), configurations=("eager", "default"), repeats=2,
           target_halfwidth=0.05, budget_min=60.0, max_repeats=6)
WIDE = (1.0, 1.25)  # speedups 2 and 1.6: a very wide interval over two rounds
MIDDLE = (1.0, 1.01)  # about +-6.5%: above a 5% target
NARROW = (1.0, 1.0)  # no spread: within any target
LEAD = ("default",)  # the leader an extra round names (only its template times a warm compile)


def group(model, batch_size, compiled_ms, seconds=(20.0, 10.0), label="CPU", status="ok"):
    """The rows of the rounds of one cell group: two blocks of five calls per process (block medians
    are exactly the ms), round r taking seconds[r] (its slowest process)."""
    rows = []
    for repeat, ms in enumerate(compiled_ms):
        duration = seconds[min(repeat, len(seconds) - 1)]
        rows.append(make_row(model, batch_size, "eager", 2.0, repeat=repeat, label=label, block_lengths=[5, 5],
                             duration_s=duration - 1))
        rows.append(make_row(model, batch_size, "default", ms if status == "ok" else None, status, repeat=repeat,
                             label=label, block_lengths=[5, 5] if status == "ok" else [], duration_s=duration))
    return rows


def halfwidths(cfg, rows):
    return {group: widest_halfwidth(records) for group, records in contenders(cfg, rows).items()}


def test_halfwidths_are_the_compiled_modes_relative_halfwidths():
    rows = group("vit", 1, WIDE) + group("vit", 4, MIDDLE) + group("resnet", 1, NARROW)
    widths = halfwidths(BenchConfig(**CFG), rows)
    # two rounds: t(0.975, 1) * sd / sqrt(2) of the round logs; exp of it, minus one
    middle = math.exp(12.706204736 * abs(math.log(2.0) - math.log(2 / 1.01)) / 2) - 1
    assert widths[("vit", 4)] == pytest.approx(middle) and middle == pytest.approx(0.0652, abs=1e-4)
    assert widths[("vit", 1)] > 3 and widths[("resnet", 1)] == 0.0
    failed = group("resnet", 4, (1.0,), status="error")  # a failed compiled cell: no interval, not chased
    assert ("resnet", 4) not in halfwidths(BenchConfig(**CFG), failed)


def test_next_round_goes_to_the_widest_group_above_the_target():
    rows = group("vit", 1, MIDDLE) + group("vit", 4, WIDE) + group("resnet", 1, NARROW)
    assert next_round(BenchConfig(**CFG), rows, elapsed_s=0.0) == Round("vit", 4, 2, ("eager", "default"), leaders=LEAD)
    rows = group("vit", 1, MIDDLE) + group("vit", 4, NARROW) + group("resnet", 1, NARROW)
    assert next_round(BenchConfig(**CFG), rows, 0.0) == Round("vit", 1, 2, ("eager", "default"), leaders=LEAD)
    # every group within its target with five rounds (MIN_ROUNDS_TO_STOP): no extra round
    within = group("vit", 1, MIDDLE + (1.0, 1.01, 1.0)) + group("resnet", 1, NARROW * 3)
    assert next_round(BenchConfig(**CFG | {"target_halfwidth": 0.07}), within, 0.0) is None


def test_a_group_within_the_target_on_few_rounds_gets_rounds_after_the_wide_ones():
    # resnet is within the target on two rounds: too few to trust the spread they show
    rows = group("vit", 1, WIDE) + group("resnet", 1, NARROW)
    assert next_round(BenchConfig(**CFG), rows, 0.0) == Round("vit", 1, 2, ("eager", "default"), leaders=LEAD)
    rows = group("vit", 1, NARROW * 3) + group("resnet", 1, NARROW)
    assert next_round(BenchConfig(**CFG), rows, 0.0) == Round("resnet", 1, 2, ("eager", "default"), leaders=LEAD)


def test_a_group_at_max_repeats_gets_no_more_rounds():
    rows = group("vit", 1, (1.0, 1.25, 1.0, 1.25)) + group("vit", 4, MIDDLE)
    assert next_round(BenchConfig(**CFG | {"max_repeats": 4}), rows, 0.0) == \
        Round("vit", 4, 2, ("eager", "default"), leaders=LEAD)
    assert next_round(BenchConfig(**CFG | {"max_repeats": 5}), rows, 0.0) == \
        Round("vit", 1, 4, ("eager", "default"), leaders=LEAD)
    assert next_round(BenchConfig(**CFG | {"max_repeats": 2}), rows, 0.0) is None  # both groups have 2+ rounds


def test_no_round_starts_that_would_end_after_the_budget():
    # a round of the wide group takes 30 s, one of the middle group 5 s (their later rounds' time)
    rows = group("vit", 1, WIDE, seconds=(90.0, 30.0)) + group("vit", 4, MIDDLE, seconds=(90.0, 5.0))
    cfg = BenchConfig(**CFG | {"budget_min": 1.0})
    assert next_round(cfg, rows, elapsed_s=30.0) == \
        Round("vit", 1, 2, ("eager", "default"), leaders=LEAD)  # 30 + 30 <= 60 s
    assert next_round(cfg, rows, elapsed_s=31.0) == \
        Round("vit", 4, 2, ("eager", "default"), leaders=LEAD)  # only the cheap one fits
    assert next_round(cfg, rows, elapsed_s=56.0) is None  # 56 + 5 > 60 s


def test_no_extra_round_without_a_target_or_a_budget():
    rows = group("vit", 1, WIDE)
    assert next_round(BenchConfig(**CFG | {"target_halfwidth": 0.0}), rows, 0.0) is None
    assert next_round(BenchConfig(**CFG | {"budget_min": 0.0}), rows, 0.0) is None
    # rows of another label, or of a group the profile no longer measures, are not chased
    assert next_round(BenchConfig(**CFG), group("vit", 1, WIDE, label="other"), 0.0) is None
    assert next_round(BenchConfig(**CFG | {"models": ("resnet",)}), rows, 0.0) is None


def test_a_rounds_time_is_its_slowest_process_and_later_rounds_predict_the_next():
    rows = group("vit", 1, (1.0, 1.0, 1.0, 1.0), seconds=(90.0, 10.0, 30.0, 12.0)) + group("vit", 4, (1.0,))
    unstamped = [dataclasses.replace(row, started_at="") for row in rows]
    assert seconds_spent(unstamped) == pytest.approx(90 + 10 + 30 + 12 + 20)  # no start times: one after another
    assert round_seconds(rows, ("vit", 1)) == 12.0  # the median of rounds 1..3: round 0 compiled cold
    assert round_seconds(rows, ("vit", 4)) == 20.0  # only a first round: its time
    assert round_seconds(rows, ("resnet", 1)) == 0.0  # no round yet


def test_the_next_rounds_time_depends_on_whether_it_starts_fresh_workers():
    from bench_utils.sweep.adaptive import next_is_fresh

    # rounds 0-3 in the pair round 0 started, round 4 in a fresh pair: 60 s cold, 8 s prepared, 25 s fresh
    rows = group("vit", 1, (1.0,) * 5, seconds=(60.0, 8.0, 8.0, 8.0, 25.0))
    rows = [dataclasses.replace(row, process_round=4 if row.repeat == 4 else 0) for row in rows]
    assert round_seconds(rows, ("vit", 1), fresh=False) == 8.0 and round_seconds(rows, ("vit", 1), fresh=True) == 25.0
    cfg = BenchConfig(**CFG | {"rounds_per_process": 4})
    assert not next_is_fresh(cfg, rows, ("vit", 1))  # round 5: the second round of round 4's pair
    assert next_is_fresh(BenchConfig(**CFG | {"rounds_per_process": 2}), rows[:8], ("vit", 1))  # round 4 after 0-3
    failed = rows[:-1] + [dataclasses.replace(rows[-1], status="error")]
    assert next_is_fresh(cfg, failed, ("vit", 1))  # a failed round ends its workers
    # rows from before workers measured several rounds: each round its own pair, a fresh one next
    assert round_seconds(group("vit", 1, (1.0, 1.0, 1.0), seconds=(60.0, 20.0, 22.0)), ("vit", 1), fresh=True) == 21.0


def test_the_group_measured_last_waits_while_another_wants_a_round():
    rows = group("vit", 1, WIDE) + group("vit", 4, MIDDLE)
    cfg = BenchConfig(**CFG)
    assert next_round(cfg, rows, 0.0).group == ("vit", 1)  # the widest
    assert next_round(cfg, rows, 0.0, last=("vit", 1)).group == ("vit", 4)  # not twice in a row
    assert next_round(cfg, group("vit", 1, WIDE), 0.0, last=("vit", 1)).group == ("vit", 1)  # the only one left


def _in_pairs(rows, first_rounds):
    """The rows with the worker pair of each round: round r measured by the pair round first_rounds[r]
    started."""
    return [dataclasses.replace(row, process_round=first_rounds[row.repeat]) for row in rows]


def test_a_group_whose_worker_pairs_disagree_gets_a_new_pair_one_whose_rounds_scatter_a_cheap_round():
    cfg = BenchConfig(**CFG | {"models": ("vit",), "batch_sizes": (1,)})
    seconds = (60.0, 8.0, 25.0, 8.0)  # cold, prepared, fresh, prepared: a new pair costs 3x a round
    # speedups 2, 2 in the first pair, 1.6, 1.6 in the second: rho 1, another round of the pair adds nothing
    apart = _in_pairs(group("vit", 1, (1.0, 1.0, 1.25, 1.25), seconds=seconds), (0, 0, 2, 2))
    assert next_round(cfg, apart, 0.0) == Round("vit", 1, 4, ("eager", "default"), new_workers=True, leaders=LEAD)
    # speedups 2, 1.6 in both pairs: the pairs agree (rho 0), the cheaper round in the same pair
    scattered = _in_pairs(group("vit", 1, (1.0, 1.25, 1.0, 1.25), seconds=seconds), (0, 0, 2, 2))
    assert next_round(cfg, scattered, 0.0) == Round("vit", 1, 4, ("eager", "default"), new_workers=False, leaders=LEAD)
    # a new pair that would end after the budget (10 + 25 > 30 s) is not offered; the round in the pair is
    short = BenchConfig(**CFG | {"models": ("vit",), "batch_sizes": (1,), "budget_min": 0.5})
    assert next_round(short, apart, 10.0) == Round("vit", 1, 4, ("eager", "default"), new_workers=False, leaders=LEAD)


def test_the_sweeps_time_is_the_union_of_its_rows_spans_plus_what_runs_now():
    import datetime as dt

    at = lambda s: (dt.datetime(2026, 11, 24, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=s)).isoformat()
    eager, compiled = group("vit", 1, (1.0,), seconds=(10.0,))  # eager 9 s, compiled 10 s
    rows = [dataclasses.replace(eager, started_at=at(0)), dataclasses.replace(compiled, started_at=at(0.5)),
            # a round a minute later (a pause between two invocations does not count), and one measured
            # at the same time on another machine (a launcher running two groups at once): counted once
            dataclasses.replace(compiled, repeat=1, started_at=at(60), duration_s=4.0),
            dataclasses.replace(compiled, model="resnet", started_at=at(62), duration_s=4.0)]
    assert seconds_spent(rows) == pytest.approx(10.5 + 6.0)
    start = dt.datetime.fromisoformat(at(100)).timestamp()  # a round running for 3 s now
    assert seconds_spent(rows, [start], now=start + 3.0) == pytest.approx(10.5 + 6.0 + 3.0)


def test_a_contender_the_leader_beats_beyond_doubt_is_timed_no_more():
    """Round 0 cannot tell the three apart (each block of it swings), so none is dropped; over three
    rounds default+freezing is behind default in every round by 30%: it can change no answer, so the
    next round holds eager, the leader and the runner-up only, and the group's precision is theirs."""
    from bench_utils.results.aggregate import cells

    cfg = BenchConfig(**(CFG | {"models": ("vit",), "batch_sizes": (1,),
                                "configurations": ("eager", "default", "default+freezing", "eager+bf16-autocast")}))

    def swing(ms_first: float, ms_second: float) -> dict:
        return {"samples_s": [ms_first / 1000] * 5 + [ms_second / 1000] * 5, "block_lengths": [5, 5]}

    rows = []
    for repeat in range(3):
        first = repeat == 0
        rows += [make_row("vit", 1, "eager", 2.0, repeat=repeat, block_lengths=[5, 5]),
                 make_row("vit", 1, "default", 2.0 / (1.50 + 0.01 * repeat), repeat=repeat,
                          **(swing(2 / 1.2, 2 / 1.9) if first else {"block_lengths": [5, 5]})),
                 make_row("vit", 1, "default+freezing", 2.0 / (1.15 + 0.01 * repeat), repeat=repeat,
                          **(swing(2 / 1.5, 2 / 0.9) if first else {"block_lengths": [5, 5]})),
                 make_row("vit", 1, "eager+bf16-autocast", 2.0 / (1.45 - 0.02 * repeat), repeat=repeat,
                          **(swing(2 / 1.1, 2 / 1.8) if first else {"block_lengths": [5, 5]}))]
    by_name = {record["configuration"]: record for record in cells(rows)}
    assert by_name["default+freezing"]["race_outcome"] == "contender"  # not dropped: round 0 could not tell
    assert by_name["default+freezing"]["race_trailing"] and not by_name["eager+bf16-autocast"]["race_trailing"]
    chased = {record["configuration"] for record in contenders(cfg, rows)[("vit", 1)]}
    assert chased == {"default", "eager+bf16-autocast"}
    more = next_round(cfg, rows, 0.0)
    assert more is not None and more.configurations == ("eager", "default", "eager+bf16-autocast")
    # the leader is named (one form here: torch.compile's): only its template times a warm compile
    # (measure/task.NextRound)
    leading = [name for name, record in by_name.items() if record["race_outcome"] == "recommended"]
    assert len(leading) == 1 and more.leaders == (leading[0],) and leading[0] != "default+freezing"
    later = race_round(cfg, rows, Round("vit", 1, 3, cfg.configurations))
    assert later.configurations == more.configurations and later.leaders == more.leaders
    assert race_round(cfg, rows, Round("vit", 1, 0, cfg.configurations)).leaders is None  # a selection round


def test_the_next_rounds_time_counts_the_workers_it_will_hold():
    """Round 1 held five workers (one a warm compile of 4 s); two contenders out of reach stop: the next
    round holds three, so it costs three fifths of a round without the warm compile."""
    rows = []
    for repeat, seconds in enumerate((60.0, 24.0, 20.0)):
        for name in ("eager", "default", "default+freezing", "eager+bf16-autocast", "default+bf16-autocast"):
            warm = 4.0 if repeat == 1 and name == "default" else None
            rows.append(make_row("resnet", 1, name, 2.0, repeat=repeat, duration_s=seconds, compile_warm_s=warm))
    assert round_seconds(rows, ("resnet", 1)) == 22.0  # as before: the median of rounds 1 and 2
    assert round_seconds(rows, ("resnet", 1), workers=3) == pytest.approx((20.0 / 5 * 3 + 20.0 / 5 * 3) / 2)


def test_a_group_wider_than_the_margin_goes_before_one_that_narrows_more_per_second():
    # vit 1: +-hundreds of percent (wider than the 1.10 margin's 10%), a round of it 3,000 s; vit 4:
    # +-6.5% (above the 5% target, within the margin), a round 1 s: per second vit 4 narrows more, but
    # only vit 1's interval can still hold both a worthwhile speedup and none
    rows = group("vit", 1, WIDE, seconds=(90.0, 3000.0)) + group("vit", 4, MIDDLE, seconds=(90.0, 1.0))
    assert next_round(BenchConfig(**CFG), rows, 0.0) == Round("vit", 1, 2, ("eager", "default"), leaders=LEAD)
    # with a margin wider than both intervals, the narrowing per second decides again
    assert next_round(BenchConfig(**CFG | {"worthwhile": 50.0}), rows, 0.0) == \
        Round("vit", 4, 2, ("eager", "default"), leaders=LEAD)


def test_the_sweeps_own_work_between_rows_counts_on_its_clock():
    # a profiler pass after a row and the handoff to the next round leave gaps between the rows' spans:
    # uncounted, a Zen 3's deploy sweep read 953 s at 992 s of wall and its last round ended past the budget
    import datetime as dt

    at = lambda s: (dt.datetime(2026, 11, 24, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=s)).isoformat()
    eager, compiled = group("vit", 1, (1.0,), seconds=(10.0,))
    rows = [dataclasses.replace(eager, started_at=at(0), duration_s=10.0),
            dataclasses.replace(compiled, repeat=1, started_at=at(15), duration_s=10.0),  # 5 s of profiler before
            dataclasses.replace(compiled, repeat=2, started_at=at(625), duration_s=10.0)]  # a second invocation
    assert seconds_spent(rows) == pytest.approx(10.0 + 5.0 + 10.0 + 10.0)


def test_a_serving_profiles_leaders_are_one_per_way_of_serving():
    """The warm compile (a package's start-up) is timed for the race's leader and for the fastest of each
    other form the page answers for (AOTInductor, ONNX Runtime), not for every contender: a slower
    torch.compile configuration times none (each cost 5-15 s of a Zen 3's budget)."""
    names = ("eager", "default", "default+freezing", "aot-inductor+freezing", "onnxruntime")
    cfg = BenchConfig(**(CFG | {"models": ("resnet",), "batch_sizes": (1,), "configurations": names}))
    speeds = {"default": 1.50, "default+freezing": 1.47, "aot-inductor+freezing": 1.53, "onnxruntime": 1.49}
    def swing(speed: float, flip: bool) -> dict:  # round 0's blocks swing: it cannot tell them apart
        fast, slow = (2 / (speed + 0.5), 2 / (speed - 0.5))
        return {"samples_s": [(slow if flip else fast) / 1000] * 5 + [(fast if flip else slow) / 1000] * 5}

    rows = []
    for repeat in range(3):
        rows.append(make_row("resnet", 1, "eager", 2.0, repeat=repeat, block_lengths=[5, 5]))
        rows += [make_row("resnet", 1, name, 2.0 / (speed * (1 + 0.06 * ((repeat + i) % 3 - 1))), repeat=repeat,
                          block_lengths=[5, 5],
                          **(swing(speed, i % 2 == 1) if repeat == 0 else {}))
                 for i, (name, speed) in enumerate(speeds.items())]
    records = contenders(cfg, rows)[("resnet", 1)]
    assert {record["configuration"] for record in records} == set(speeds)  # round 0 dropped none
    later = race_round(cfg, rows, Round("resnet", 1, 3, names))
    assert set(later.leaders) == {"default", "aot-inductor+freezing", "onnxruntime"}


def test_on_a_gpu_later_rounds_hold_the_contenders_without_eagers_worker():
    # each compiled worker times eager beside its own blocks (eager_in_process): its speedups are over those
    # calls, so an extra round or a first-pass round after the selection starts no eager worker, and is
    # priced without one
    cfg = BenchConfig(**CFG | dict(device="cuda", label="GPU"))
    rows = group("vit", 1, WIDE, label="GPU")
    raced = race_round(cfg, rows, Round("vit", 1, 2, cfg.configurations))
    assert raced.configurations == ("default",)
    extra = next_round(cfg, rows, 0.0)
    assert extra.configurations == ("default",)
    with_eager = round_seconds(rows, ("vit", 1), workers=2)
    assert round_seconds(rows, ("vit", 1), workers=1) == pytest.approx(with_eager / 2)


def test_the_first_pass_left_is_the_rounds_a_stopped_sweep_lacks_not_those_it_never_runs(tmp_path):
    cfg = BenchConfig(**CFG, size="tiny")  # vit and resnet at batch 1 and 4, 2 repeats: 8 first-pass rounds
    assert first_pass_left(cfg, []) == 8
    rows = group("vit", 1, NARROW) + group("vit", 4, NARROW)
    assert first_pass_left(cfg, rows) == 4  # resnet's four rounds: a sweep stopped after vit's
    # resnet at batch 1: its compile failed in the selection round, no contender is left, and its later
    # round is never run (race_round): not a round left
    rows += group("resnet", 1, (1.0,), status="error")
    assert race_round(cfg, rows, Round("resnet", 1, 1, cfg.configurations)) is None
    assert first_pass_left(cfg, rows) == 2
    rows += group("resnet", 4, NARROW)
    assert first_pass_left(cfg, rows) == 0
    # from a file: none yet is every round left; another label's rows are another run's, no count
    assert first_pass_state(cfg, tmp_path / "none.jsonl") == (8, 8)
    other = tmp_path / "other.jsonl"
    other.write_text(make_row(label="elsewhere").to_json() + "\n")
    assert first_pass_state(cfg, other) is None
