"""A plan that fits the machine (bench_utils/sweep/fit.py): a later group's selection round leaves out the
configurations the budget cannot hold at the costs the first group showed, lowest rank first."""

import dataclasses
import datetime as dt

import pytest

from bench_utils.config.bench_config import BenchConfig
from bench_utils.results.rows import BenchResult, cell_fields
from bench_utils.sweep.fit import far_behind, fitted, machine_costs, remaining_s
from bench_utils.sweep.jobs import Round
from bench_utils.sweep.plan import CPU_COMPILE_S

CONFIGS = ("eager", "default", "default+freezing", "max-autotune-no-cudagraphs+freezing")
SPEED = {"eager": 1.0, "default": 1.5, "default+freezing": 1.0, "max-autotune-no-cudagraphs+freezing": 0.8}
COMPILE_S = {"eager": None, "default": 20.0, "default+freezing": 30.0, "max-autotune-no-cudagraphs+freezing": 40.0}
START = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.timezone.utc)


def config(budget_min: float) -> BenchConfig:
    return BenchConfig(label="fit", models=("resnet", "vit", "segformer"), configurations=CONFIGS, size="full",
                       budget_min=budget_min, target_halfwidth=0.05, blocks=4)


def selection_rows(cfg, model: str, speed: dict = SPEED, wobble: float = 0.0) -> list:
    """A measured selection round of `model`: 100 s of wall, each worker's compile, 2 s of warm-up and
    2 s of timed calls; eager at 10 ms, the others at 10 ms / speed; with `wobble`, each worker's four
    blocks move by up to that share, in an order of its own (a noisy machine)."""
    rows, moves = [], (0.0, 1.0, -1.0, 0.5)  # a block's move, as a share of `wobble`
    for index, name in enumerate(CONFIGS):
        ms = 10.0 / speed[name]
        samples = [ms / 1000 * (1 + 0.002 * (i % 5)) * (1 + wobble * moves[(i // 4 + index) % 4])
                   for i in range(200 // int(ms))][:16]
        rows.append(BenchResult(**cell_fields(cfg, model, 1, name, "cpu", 0), status="ok", samples_s=samples,
                                block_lengths=[len(samples) // 4] * 4, process_round=0, template_round=0,
                                compile_s=COMPILE_S[name], warmup_s=2.0, latency_ms_median=ms, latency_ms_mean=ms,
                                started_at=START.isoformat(), duration_s=100.0, env={"device_name": "CPU"}))
    return rows


def test_the_costs_are_read_from_the_measured_selection_round():
    cfg = config(8.75)
    costs = machine_costs(selection_rows(cfg, "resnet"))
    timed = {name: sum(row.samples_s) for name, row in zip(CONFIGS, selection_rows(cfg, "resnet"))}
    assert costs.own_s["default"] == pytest.approx(20.0 + 2.0 + timed["default"])
    assert costs.own_s["eager"] == pytest.approx(2.0 + timed["eager"])
    # what the workers' own times leave of the round's 100 s, per configuration
    assert costs.overhead_s == pytest.approx((100.0 - sum(costs.own_s.values())) / 4)
    assert machine_costs([]) is None


def test_the_first_group_and_a_budget_that_holds_keep_every_configuration():
    cfg = config(60.0)
    rounds = [Round(model, 1, 0, CONFIGS) for model in cfg.models]
    assert fitted(cfg, [], rounds[0], rounds[1:], 0.0).round == rounds[0]  # nothing measured here yet
    rows = selection_rows(cfg, "resnet")
    fit = fitted(cfg, rows, rounds[1], rounds[2:], 100.0)
    assert fit.round == rounds[1] and fit.skipped == []


def test_a_short_budget_leaves_out_the_dropped_and_dearest_first_and_keeps_the_winner():
    cfg = config(4.0)  # 240 s: 100 s spent; two selection rounds of ~100 s each and the rounds to decide left
    rows = selection_rows(cfg, "resnet")
    rounds = [Round(model, 1, 0, CONFIGS) for model in cfg.models]
    fit = fitted(cfg, rows, rounds[1], rounds[2:], 100.0)
    # max-autotune (slowest in resnet's race, dearest to compile) goes first, then default+freezing;
    # default, recommended in resnet's race, stays with eager
    assert fit.skipped == ["max-autotune-no-cudagraphs+freezing", "default+freezing"]
    assert fit.round.configurations == ("eager", "default")
    assert fit.full_s > cfg.budget_min * 60 >= fit.fitted_s
    # what was left out stays out of the next group's selection round, whatever it costs
    later = fitted(config(600.0), rows, rounds[2], [], 200.0, left_out=set(fit.skipped))
    assert later.round.configurations == ("eager", "default") and set(later.skipped) == set(fit.skipped)


def test_one_configuration_beside_eager_is_always_left():
    cfg = config(0.5)  # nothing fits
    rows = selection_rows(cfg, "resnet")
    fit = fitted(cfg, rows, Round("vit", 1, 0, CONFIGS), [], 100.0)
    assert fit.round.configurations == ("eager", "default")


def test_the_rest_of_the_sweep_counts_the_first_pass_rounds_each_group_lacks():
    cfg = config(8.75)
    rows = selection_rows(cfg, "resnet")
    costs = machine_costs(rows)
    nothing_pending = remaining_s(cfg, rows, [], costs)
    # resnet has 1 round of the first pass's 3; vit and segformer have none and are not pending: 2 + 3 + 3,
    # and before the first later round of each, its contenders' warm compiles
    contenders = sum(costs.workers_of((model, 1)) - 1 for model in cfg.models)
    assert costs.workers_of(("resnet", 1)) == 2 and contenders == 3  # resnet's race kept default alone
    assert nothing_pending == pytest.approx(8 * costs.later_round_s + contenders * costs.warm_compile_s)
    # a round of eager and one contender: two workers' warm-up and blocks (2 s each and their timed calls),
    # and their share of the round's rest
    per_worker = sorted(2.0 + sum(row.samples_s) for row in rows)[1:3]
    assert costs.later_round_s == pytest.approx(2 * (sum(per_worker) / 2 + costs.overhead_s))


def test_among_equal_showings_plain_torch_compile_is_the_last_to_leave():
    cfg = config(0.5)
    rows = [row for row in selection_rows(cfg, "resnet") if row.configuration == "eager"]  # no race to rank by
    fit = fitted(cfg, rows, Round("vit", 1, 0, CONFIGS), [], 100.0)
    assert fit.skipped == ["max-autotune-no-cudagraphs+freezing", "default+freezing"]
    assert fit.round.configurations == ("eager", "default")


def test_a_lead_its_race_could_not_tell_apart_ranks_as_a_contender():
    """Where no configuration helps the first model (ResNet-50 on the Zen 3), its selection round's
    leader leads by the noise's choice: the fit ranks it with the others, and among equals plain
    torch.compile is the last to leave. A lead the race told apart stands (the short-budget test:
    default at 1.5x beside 1.0x and 0.8x)."""
    from bench_utils.results.aggregate import cells

    cfg = config(4.0)
    even = {"eager": 1.0, "default": 1.0, "default+freezing": 0.99, "max-autotune-no-cudagraphs+freezing": 1.02}
    rows = selection_rows(cfg, "resnet", even, wobble=0.08)
    record = {r["configuration"]: r for r in cells(rows)}
    # the race itself gives way to the simplest of those it cannot tell apart (results/race.simpler_first)
    chosen = record["default"]
    assert chosen["race_outcome"] == "recommended" and chosen["race_simpler"]
    assert chosen["versus_ci95_low"] <= 1.0 <= chosen["versus_ci95_high"]
    rounds = [Round(model, 1, 0, CONFIGS) for model in cfg.models]
    fit = fitted(cfg, rows, rounds[1], rounds[2:], 100.0)
    assert fit.skipped == ["max-autotune-no-cudagraphs+freezing", "default+freezing"]
    assert fit.round.configurations == ("eager", "default")


def test_among_equal_ranks_one_far_behind_its_groups_best_leaves_first():
    """One noisy selection round tells nothing apart, yet its points say which configuration can win (the
    AMX Xeon's ResNet-50, 2026-11-29: bfloat16 compiled 1.77x beside 1.47-1.53x): a configuration more
    than the margin below its group's best leaves before one within it, whatever it costs to compile."""
    from bench_utils.results.aggregate import cells

    cfg = config(4.0)
    speed = {"eager": 1.0, "default": 1.3, "default+freezing": 1.6, "max-autotune-no-cudagraphs+freezing": 1.25}
    rows = selection_rows(cfg, "resnet", speed, wobble=0.2)
    record = {r["configuration"]: r for r in cells(rows)}
    # not told apart: the race recommends the simpler (results/race.simpler_first), every rank a contender's
    assert record["default"]["race_outcome"] == "recommended" and record["default"]["race_simpler"]
    assert record["default"]["versus_ci95_low"] <= 1.0 <= record["default"]["versus_ci95_high"]
    assert far_behind(cells(rows), cfg.label, cfg.worthwhile) == {"default", "max-autotune-no-cudagraphs+freezing"}
    rounds = [Round(model, 1, 0, CONFIGS) for model in cfg.models]
    fit = fitted(cfg, rows, rounds[1], rounds[2:], 100.0)
    # the dearest compile (default+freezing, 30 s beside default's 20 s) would leave before plain default
    # by the order among equals alone; 1.6x against 1.3x keeps it
    assert fit.skipped == ["max-autotune-no-cudagraphs+freezing", "default"]
    assert fit.round.configurations == ("eager", "default+freezing")
    # within the margin the points are the noise's: nothing is far behind
    even = {"eager": 1.0, "default": 1.0, "default+freezing": 1.05, "max-autotune-no-cudagraphs+freezing": 0.97}
    assert far_behind(cells(selection_rows(cfg, "resnet", even, wobble=0.2)), cfg.label, cfg.worthwhile) == set()


def test_one_even_with_the_best_on_one_model_and_far_behind_on_another_is_behind_over_both():
    """A default report on a Zen 3: plain torch.compile even with the rest on ViT-B/16 (1.04x beside 1.05x)
    and far behind on ResNet-50 (1.14x beside frozen 1.52x) kept its place by the order among equals and
    the other models raced it alone; over both, it lies more than the margin behind (the geometric mean of
    its shares of each model's best, 0.86 < 1/1.1), the frozen compiles do not."""
    from bench_utils.results.aggregate import cells

    cfg = config(4.0)
    vit = {"eager": 1.0, "default": 1.04, "default+freezing": 1.045, "max-autotune-no-cudagraphs+freezing": 1.048}
    resnet = {"eager": 1.0, "default": 1.14, "default+freezing": 1.52, "max-autotune-no-cudagraphs+freezing": 1.48}
    rows = selection_rows(cfg, "vit", vit) + selection_rows(cfg, "resnet", resnet)
    assert far_behind(cells(rows), cfg.label, cfg.worthwhile) == {"default"}


def test_a_configuration_that_did_not_apply_costs_nothing_and_is_never_left_out():
    cfg = BenchConfig(label="fit", models=("resnet", "vit"), size="full", budget_min=0.5, target_halfwidth=0.05,
                      configurations=(*CONFIGS, "eager+bf16-autocast"))
    rows = selection_rows(cfg, "resnet")
    rows.append(BenchResult.failed(cell_fields(cfg, "resnet", 1, "eager+bf16-autocast", "cpu", 0), "unsupported",
                                   "this CPU has no native bfloat16 (AVX2)", 0.3))
    costs = machine_costs(rows)
    assert costs.free == {"eager+bf16-autocast"}
    fit = fitted(cfg, rows, Round("vit", 1, 0, cfg.configurations), [], 100.0)
    assert "eager+bf16-autocast" not in fit.skipped and "eager+bf16-autocast" in fit.round.configurations


def test_a_contenders_warm_compile_is_priced_once_before_its_groups_first_later_round():
    """A CPU template times its warm compile before its first kept round (measure/worker.py), not in its
    selection round: the rest of the sweep counts one per contender of each group that has not had
    that round yet, at the median measured so far, or before any at the cold compiles' median scaled as
    the CPUs measured scale it."""
    cfg = dataclasses.replace(config(8.75), models=("resnet",))
    rows = selection_rows(cfg, "resnet")
    costs = machine_costs(rows)
    low_cold, low_warm = CPU_COMPILE_S["low"]
    assert costs.warm_compile_s == pytest.approx(30.0 * low_warm / low_cold)  # the cold compiles' median: 30 s
    assert costs.own_s["default"] == pytest.approx(20.0 + 2.0 + sum(rows[1].samples_s))  # no warm compile in it
    later = [dataclasses.replace(row, repeat=1, compile_s=None, compile_warm_s=6.0 if row.compile_s else None)
             for row in rows]
    costs = machine_costs(rows + later)
    assert costs.warm_compile_s == 6.0
    workers = costs.workers_of(("resnet", 1))  # eager and default, the one its race kept
    before, after = remaining_s(cfg, rows, [], costs), remaining_s(cfg, rows + later, [], costs)
    assert before - after == pytest.approx(costs.later_round(workers) + (workers - 1) * 6.0)
    on_gpu = dataclasses.replace(cfg, device="cuda")  # a GPU's later rounds compile in fresh workers
    assert remaining_s(on_gpu, rows, [], costs) == pytest.approx(before - (workers - 1) * 6.0)


def test_a_measured_groups_later_rounds_are_priced_with_every_configuration_its_race_keeps():
    """A noisy first round drops nothing: each later round of that group holds every configuration (on
    the Zen 5, ResNet-50's six: 27 s a round where eager and one contender took 11-14 s)."""
    cfg = config(8.75)
    def swinging(row):  # eager's blocks and the others' slow in turn, by 60%: nothing is dropped
        per, shift = row.block_lengths[0], row.configuration != "eager"
        return dataclasses.replace(row, samples_s=[s * (1 + 0.6 * ((i // per + shift) % 2))
                                                   for i, s in enumerate(row.samples_s)])

    rows = [swinging(row) for row in selection_rows(cfg, "resnet")]
    costs = machine_costs(rows)
    assert costs.racing[("resnet", 1)] == 4  # eager and three contenders
    assert costs.workers_of(("resnet", 1)) == 4 and costs.workers_of(("vit", 1)) == 2  # not measured yet
    # resnet lacks 2 rounds of 4 workers; vit and segformer 3 rounds each of 2; before them, each
    # group's leader's warm compile (the other contenders time none: measure/task.NextRound)
    assert remaining_s(cfg, rows, [], costs) == pytest.approx(2 * costs.later_round(4) + 6 * costs.later_round(2)
                                                              + 3 * costs.warm_compile_s)
    assert costs.later_round(4) == pytest.approx(2 * costs.later_round_s)


def test_what_compiles_nothing_is_never_left_out():
    cfg = BenchConfig(label="fit", models=("resnet", "vit"), size="full", budget_min=0.5, target_halfwidth=0.05,
                      configurations=(*CONFIGS, "eager+bf16-autocast"), blocks=4)
    rows = selection_rows(cfg, "resnet")
    fit = fitted(cfg, rows, Round("vit", 1, 0, cfg.configurations), [], 100.0)
    assert fit.round.configurations == ("eager", "default", "eager+bf16-autocast")  # nothing fits: it stays


def test_each_serving_form_keeps_its_best_ranked_configuration():
    # a serving profile answers per way to serve the model: with nothing fitting, torch.compile's best
    # (default), the AOTInductor package and ONNX Runtime each stay; only default's slower siblings leave
    forms = (*CONFIGS, "aot-inductor+freezing", "onnxruntime")
    cfg = BenchConfig(label="fit", models=("resnet", "vit"), size="full", budget_min=0.5, target_halfwidth=0.05,
                      configurations=forms, blocks=4)
    rows = selection_rows(cfg, "resnet")
    fit = fitted(cfg, rows, Round("vit", 1, 0, forms), [], 100.0)
    assert fit.round.configurations == ("eager", "default", "aot-inductor+freezing", "onnxruntime")
    assert set(fit.skipped) == {"default+freezing", "max-autotune-no-cudagraphs+freezing"}


def test_a_skipped_row_says_why_in_words_that_agree_with_its_budget():
    """The why of a skipped row: a configuration this group's fit leaves out gives the full sweep's
    minutes rounded up (above budget_min, never "about 14 min" beside 14); one an earlier group left out
    says so, since this group alone might have fitted it."""
    from bench_utils.sweep.loop import _Schedule

    cfg = config(4.0)
    rows = selection_rows(cfg, "resnet")
    rounds = [Round(model, 1, 0, CONFIGS) for model in cfg.models]
    schedule = _Schedule(cfg, rounds[1:], [], rows)
    schedule._fitted(rounds[1], 100.0)
    first = {row.configuration: row.error for row in schedule.take_skipped()}
    assert set(first) == {"max-autotune-no-cudagraphs+freezing", "default+freezing"}
    minutes = int(first["default+freezing"].split("would take about ")[1].split(" min")[0])
    assert minutes > cfg.budget_min
    assert first["default+freezing"].startswith(f"left out to fit the {cfg.budget_min:g}-min budget (budget_min) ")
    schedule._fitted(rounds[2], 200.0)
    later = {row.configuration: row.error for row in schedule.take_skipped()}
    assert all("as for the models measured before" in why for why in later.values()), later


def test_where_eager_is_timed_beside_a_later_round_is_the_contenders_workers_alone():
    # jobs.eager_after_selection false (a GPU's eager_in_process): a later round holds no eager worker, and
    # the fit prices it so
    from bench_utils.sweep.fit import Costs

    with_eager = Costs({}, 1.0, 10.0)
    beside = Costs({}, 1.0, 10.0, eager_worker=False)
    assert with_eager.workers_of(("vit", 1)) == 2 and beside.workers_of(("vit", 1)) == 1
    assert beside.later_round(beside.workers_of(("vit", 1))) == pytest.approx(5.0)
    assert with_eager.later_round(with_eager.workers_of(("vit", 1))) == pytest.approx(10.0)
