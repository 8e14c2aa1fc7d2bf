"""The plan: how long a profile will run, from the guide's latencies, before anything runs."""

import dataclasses
import re

import pytest

from bench_utils.config.bench_config import BenchConfig
from bench_utils.config.modes import MODE_BY_NAME
from bench_utils.config.registry import MODEL_NAMES
from bench_utils.sweep import plan
from bench_utils.sweep.compile_estimate import cpu_compile_scale, gpu_compile_s
from conftest import REPO, make_row, run_cli

GPU = dict(label="A100", models=("vit",), size="full", batch_sizes=(1,), configurations=("eager", "default"), device="cuda",
           weights="random", warmup=10, iterations=300, min_time_s=1.0, max_warmup_s=10.0, repeats=2,
           timeout_s=1800.0, blocks=4, eager_in_process=False)  # eager in its own worker


def test_guide_latency_of_a_published_cell_and_none_elsewhere():
    assert plan.guide_latency_ms("A100", "vit", 1, "eager") == 9.325  # the guide's table, torch 2.0.1
    assert plan.guide_latency_ms("A100", "vit", 1, "default") == 7.584
    assert plan.guide_latency_ms("A100", "vit", 3, "eager") is None
    assert plan.guide_gpu("T4 (nightly)") == "T4" and plan.guide_gpu("H100") is None


VIT_COLD_S = gpu_compile_s("vit", "default", True).point
VIT_WARM_S = gpu_compile_s("vit", "default", False).point


def _round(cfg, repeat=0, known=None):
    from bench_utils.sweep.jobs import Round

    return plan.round_estimate(cfg, Round("vit", 1, repeat, cfg.configurations), "cuda", known or {}, "A100")


def test_a_round_is_every_workers_preparation_one_at_a_time_then_every_modes_blocks():
    cfg = BenchConfig(**GPU)  # 300 calls per process in 4 blocks of 75, 0.25 s each at least
    first = _round(cfg)
    # eager 9.325 ms, default 7.584 ms (the guide's A100 table); the workers prepare one after the other
    # (rounds.py): two starts (START_S), a cold default compile of ViT-B/16 (the mode
    # table's ResNet-50 figure scaled by the operators each lowers: compile_estimate.py), two warm-ups
    # of max(10 calls, 2 blocks) 0.5 s
    cold, warm = VIT_COLD_S, VIT_WARM_S
    assert first.seconds["start"] == 2 * plan.START_S["cuda"] and first.seconds["cold compile"] == cold and first.seconds["warm-up"] == 1.0
    # 4 blocks of 75 timed calls each, and an untimed call where a turn begins (E C C E E C C E: five
    # turns), counted as ceil(5 / 2) = 3 per worker (eager's are 3, the compiled worker's 2)
    timing = (4 * 75 + 3) * 0.009325 + (4 * 75 + 3) * 0.007584
    assert first.seconds["timing"] == pytest.approx(timing)
    assert first.seconds["settle"] == pytest.approx(5 * 0.25)  # E C C E E C C E: five turns begin
    assert "profiler" not in first.seconds  # round 1 is profiled (sweep/jobs.profiled)
    assert first.total == pytest.approx(2 * plan.START_S["cuda"] + 1.0 + cold + timing + 1.25)
    # round 1 in the workers round 0 prepared (rounds_per_process 4, 3 rounds: round 2 starts fresh ones)
    later = _round(BenchConfig(**(GPU | {"repeats": 3})), repeat=1)
    assert set(later.seconds) == {"timing", "settle", "profiler"}  # at the smallest batch size, both modes
    assert later.total == pytest.approx(timing + 1.25 + 2 * plan.PROFILE_S)
    # fresh workers every round: each later round starts and compiles warm
    fresh = _round(BenchConfig(**(GPU | {"rounds_per_process": 1})), repeat=1)
    assert fresh.seconds["warm compile"] == warm and "cold compile" not in fresh.seconds
    assert fresh.total == pytest.approx(2 * plan.START_S["cuda"] + 1.0 + warm + timing + 1.25 + 2 * plan.PROFILE_S)


def test_a_profilers_pass_costs_what_the_results_file_measured_for_the_cell_else_its_other_passes_median():
    cfg = BenchConfig(**(GPU | {"repeats": 3}))
    known = {("vit", 1, "eager"): plan.Measured(9.0, profile_s=1.5), ("resnet", 1, "default"): plan.Measured(profile_s=2.5),
             ("resnet", 1, "eager"): plan.Measured(profile_s=3.5)}
    # eager's pass as measured for the cell (1.5 s); default's, not measured here, the file's median (2.5 s)
    assert _round(cfg, repeat=1, known=known).seconds["profiler"] == pytest.approx(1.5 + 2.5)
    assert _round(cfg, repeat=1).seconds["profiler"] == pytest.approx(2 * plan.PROFILE_S)  # none measured
    rows = [make_row("vit", 1, "eager", 9.0, profile_s=1.2), make_row("vit", 1, "eager", 9.0, repeat=1, profile_s=None)]
    assert plan.measured(rows)[("vit", 1, "eager")].profile_s == 1.2


def test_eager_timed_beside_adds_its_blocks_and_a_switch_call_each_to_the_compiled_workers_timing():
    cpu = BenchConfig(**(GPU | {"eager_in_process": "auto", "device": "cpu", "label": "CPU"}))
    assert not cpu.times_eager_beside("cpu") and BenchConfig(**(GPU | {"eager_in_process": True})).times_eager_beside("cpu")
    alone = _round(BenchConfig(**GPU))
    beside = _round(BenchConfig(**(GPU | {"eager_in_process": "auto"})))  # auto: beside on a GPU
    # the compiled worker times 4 eager blocks of 75 calls (9.325 ms, the guide's eager) beside its own,
    # each block's switch of callable an untimed call of eager and one of the configuration
    extra = 4 * (75 * 0.009325 + 0.009325 + 0.007584)
    assert beside.seconds["timing"] == pytest.approx(alone.seconds["timing"] + extra)
    assert beside.seconds["settle"] == alone.seconds["settle"]  # the handoffs between workers are the same


def test_on_a_cpu_and_a_gpu_every_workers_preparation_counts():
    # one at a time (rounds.py): the starts and warm-ups of both workers add up
    cfg = BenchConfig(**(GPU | {"device": "cpu", "label": "CPU", "rounds_per_process": 1}))
    gpu = _round(BenchConfig(**(GPU | {"rounds_per_process": 1})), repeat=1)
    alone = plan.round_estimate(cfg, plan.Round("vit", 1, 1, cfg.configurations), "cpu", {}, None)
    assert alone.seconds["start"] == 2 * plan.START_S["cpu"] and gpu.seconds["start"] == 2 * plan.START_S["cuda"]
    # eager compiles nothing; the constant is the default report's models' mean, ViT-B/16 compiles less
    assert alone.seconds["warm compile"] == pytest.approx(plan.CPU_COMPILE_S["point"][1] * cpu_compile_scale("vit"))


def test_a_warm_max_autotune_compile_costs_seconds_not_a_share_of_the_cold_one():
    cfg = BenchConfig(**(GPU | {"configurations": ("eager", "max-autotune")}))
    # default's compile + FastVideo's 419 s of autotuning, scaled by ViT's GEMM shapes against ResNet-50's
    cold = _round(cfg).seconds["cold compile"]
    assert cold == gpu_compile_s("vit", "max-autotune", True).point > VIT_COLD_S
    # warm, it benchmarks its choices again (the first GPU run: 12.5 s for a tiny ViT, default 2 s),
    # seconds more than default's warm compile, not a share of its cold one
    warm = _round(cfg, repeat=1).seconds["warm compile"]
    assert warm == gpu_compile_s("vit", "max-autotune", False).point and VIT_WARM_S < warm < cold / 10


def test_plan_prints_the_compile_times_range_beside_its_estimate():
    # DETR: its compiles outlast the spares' imports beside them (plan.with_spares), at either end of its range
    cfg = BenchConfig(**GPU | {"models": ("detr",)})
    low, point, high = (sum(e.total for e in plan.estimate(cfg, None, bound=bound)[0]) for bound in ("low", "point", "high"))
    assert low < point < high
    line = plan.plan_text(cfg, "a100.yaml").splitlines()[1]
    assert line == (f"  estimated {plan._duration(point)} ({plan._duration(low)} to {plan._duration(high)} with GPU "
                    "compile times as ranges)")
    cpu_cfg = BenchConfig(**(GPU | {"device": "cpu", "label": "CPU"}))
    low, point, high = (sum(e.total for e in plan.estimate(cpu_cfg, None, bound=bound)[0]) for bound in ("low", "point", "high"))
    assert low < point < high  # CPUs compile 2-3x apart: the 2026-11-27 default report took 9.4 min, plan said 19
    cpu = plan.plan_text(cpu_cfg, "cpu.yaml").splitlines()[1]
    assert cpu.startswith(f"  estimated {plan._duration(point)} ({plan._duration(low)} to {plan._duration(high)} with "
                          "the CPUs measured, fastest to slowest compiling)"), cpu


def test_what_the_results_file_measured_comes_before_the_constants():
    cfg = BenchConfig(**GPU)
    known = {("vit", 1, "eager"): plan.Measured(latency_ms=20.0), ("vit", 1, "default"): plan.Measured(10.0, 30.0, 3.0)}
    first, later = _round(cfg, 0, known), _round(cfg, 1, known)  # round 1: the first pass's last, fresh workers
    assert first.seconds["cold compile"] == 30.0 and later.seconds["warm compile"] == 3.0
    assert first.seconds["timing"] == pytest.approx((4 * 75 + 3) * 0.020 + (4 * 75 + 3) * 0.010)


def test_plan_flags_workers_near_the_timeout_and_suggests_trims_past_an_hour():
    cfg = BenchConfig(**(GPU | {"timeout_s": 20.0}))
    estimates, done = plan.estimate(cfg)
    assert [e.round.repeat for e in estimates] == [0, 1] and done == 0
    risky = plan.too_long(cfg, estimates)  # the cold compiled worker: 1.5 x (start, compile, warm-up, timing) > 20 s
    assert [(e.round.repeat, mode) for e, mode, _ in risky] == [(0, "default")]
    big = BenchConfig(**(GPU | {"models": MODEL_NAMES, "batch_sizes": (1, 4, 16),
                                "configurations": ("eager", "default", "reduce-overhead"), "repeats": 3}))
    text = plan.plan_text(big, "big.yaml")
    assert "over an hour; to trim: drop batch size" in text and "drop configuration reduce-overhead" in text


def test_plan_names_the_profilers_pass_as_a_trim_only_where_the_profile_has_one():
    """The guide's tables need no profiler: its passes are a trim a user can take (a100.yaml: about 2 min)."""
    profiled = plan.plan_text(BenchConfig(**(GPU | {"profiler": True})), "gpu.yaml")
    assert "profiler: false (about " in profiled and "does not explain the speedups" in profiled
    assert "profiler: false" not in plan.plan_text(BenchConfig(**(GPU | {"profiler": False})), "gpu.yaml")


def test_plan_detail_prints_the_total_where_it_goes_and_per_model(tmp_path):
    params = tmp_path / "a100.yaml"
    params.write_text("label: A100\nmodels: [vit, resnet]\nbatch_sizes: [1]\nconfigurations: [eager, default]\n"
                      "size: full\ndevice: cuda\nweights: random\ntimeout_s: 600\niterations: 30\nmin_time_s: 1\n")
    proc = run_cli("plan", params, "--detail", timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("A100: 6 rounds (2 models x 1 batch size x 3 repeats; a worker per configuration in each)")
    assert lines[1].startswith("  estimated ") and "at least" not in lines[1]  # the guide has both models' latencies
    assert lines[2].startswith("  where it goes: start ") and "cold compile" in lines[2] and "timing" in lines[2]
    assert [line.split()[0] for line in lines if line.startswith("    ")] == ["vit", "resnet"]


def test_plan_leaves_out_what_the_results_file_already_holds(tmp_path):
    from bench_utils.results.rows import cell_fields
    from bench_utils.results.writer import ResultsWriter
    from conftest import make_row

    cfg = BenchConfig(**GPU)
    results = tmp_path / "results.jsonl"
    with ResultsWriter(results) as writer:  # round 0: eager and compiled
        for mode in ("eager", "default"):
            writer.append(make_row(n=300, **cell_fields(cfg, "vit", 1, mode, "cuda", 0) | {"compile_s": 42.0}))
    estimates, done = plan.estimate(cfg, results)
    assert [e.round.repeat for e in estimates] == [1] and done == 1
    text = plan.plan_text(cfg, "a100.yaml", results)
    assert text.splitlines()[0].endswith(f"; 1 already measured in {results}")
    finished = plan.plan_text(dataclasses.replace(cfg, repeats=1, target_halfwidth=0.0), "a100.yaml", results)
    assert "nothing left to measure" in finished and "did not end ok" not in finished
    # a failed process is in the file too, and a re-run skips it: plan names the command that redoes it
    with ResultsWriter(results) as writer:
        writer.append(make_row(**cell_fields(cfg, "resnet", 1, "eager", "cuda", 0), status="timeout"))
        writer.append(make_row(n=300, **cell_fields(cfg, "resnet", 1, "default", "cuda", 0) | {"compile_s": 42.0}))
    once = dataclasses.replace(cfg, models=("vit", "resnet"), repeats=1, target_halfwidth=0.0)
    assert plan.plan_text(once, "a100.yaml", results).splitlines()[-1] == (
        f"  1 measuring process in it did not end ok: python -m bench_utils run a100.yaml --results {results} "
        "--retry-failed measures them again")
    # with a precision target the sweep goes on to extra rounds within its budget: plan says so
    adaptive = plan.plan_text(dataclasses.replace(cfg, repeats=1, target_halfwidth=0.05, budget_min=12),
                              "a100.yaml", results)
    assert "nothing left" not in adaptive and "extra rounds for precision (target +-5%)" in adaptive
    assert "within budget_min 12" in adaptive


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "parameters").glob("*.yaml")))
def test_every_shipped_profile_has_a_plan(name, tmp_path):
    from bench_utils.config.parameters_file import load_config

    cfg = load_config(REPO / "parameters" / name)
    text = plan.plan_text(cfg, name, tmp_path / "none.jsonl")
    rounds = len(cfg.models) * len(cfg.batch_sizes) * cfg.repeats
    assert text.startswith(f"{name}: {cfg.label}: {rounds} rounds") and "estimated" in text and "where it goes" in text
    # a CPU profile's compile times are another machine's until this one measured them: said, with the figures
    assert ("else 35 s cold and 4.5 s warm a full-size model" in text) == (cfg.device == "cpu")


def test_a_reader_that_goes_away_is_no_error():
    """`plan ... | head`: the output has nowhere to go; the command stops quietly (exit 1), no traceback."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "bench_utils", "plan", str(REPO / "parameters" / "a100.yaml")],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line is written
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1 and stderr == ""


def test_a_tiny_model_compiles_as_long_as_a_full_one_on_a_gpu_and_a_tenth_as_long_on_a_cpu():
    # the first GPU run: a tiny ViT compiled cold in 12.5 s, ViT-B/16 in 12.3 s (docs/gpu.md)
    tiny, full = BenchConfig(**(GPU | {"size": "tiny"})), BenchConfig(**GPU)
    on_gpu = [plan._compile_s(cfg, "vit", "default", True, None, "cuda", "point") for cfg in (tiny, full)]
    assert on_gpu[0] == on_gpu[1] == gpu_compile_s("vit", "default", True).point
    cpu = BenchConfig(**(GPU | {"size": "tiny", "device": "cpu", "label": "CPU"}))
    assert plan._compile_s(cpu, "vit", "default", True, None, "cpu", "point") == pytest.approx(plan.CPU_COMPILE_S["point"][0] / 10)


def test_an_auto_profile_is_planned_for_the_device_its_workers_will_use(monkeypatch):
    # "auto" on a machine without a GPU runs on the CPU: its plan counts CPU compiles, not a GPU's
    from bench_utils.sweep import workers

    auto = BenchConfig(**(GPU | {"device": "auto", "label": "CPU"}))
    monkeypatch.setattr(plan, "uses_cuda", lambda device: False)
    assert plan.planned_device(auto) == "cpu"
    assert "the CPUs measured" in plan.plan_text(auto, "auto.yaml")
    assert plan.estimate(auto, None)[0][0].seconds["start"] == 2 * plan.START_S["cpu"]
    monkeypatch.setattr(plan, "uses_cuda", workers.uses_cuda)
    assert plan.planned_device(BenchConfig(**GPU)) == "cuda"  # cuda is cuda, without asking torch


def test_plan_says_before_measuring_when_the_first_pass_fills_the_budget():
    """Not "extra rounds ... for up to 0 s more": the budget is gone before precision, and what buys it."""
    cfg = BenchConfig(**(GPU | {"device": "cpu", "label": "CPU", "budget_min": 1.0, "target_halfwidth": 0.05}))
    text = plan.plan_text(cfg, "cpu.yaml")
    assert "for up to" not in text and "the first pass alone takes about the whole budget (budget_min 1)" in text
    # one model: nothing can leave its race (fit.py spares the first model), so the budget buys extra rounds
    assert re.search(r"--budget-min [0-9.]+ \(this estimate and 3 minutes of extra rounds\) gives it extra rounds", text)
    roomy = plan.plan_text(dataclasses.replace(cfg, budget_min=600.0), "cpu.yaml")
    assert "then extra rounds for precision (target +-5%) for up to" in roomy
    # what is left holds an extra round when it holds a later round's price, not a fixed minute: a tiny profile's
    # 11-s first pass under a 30-s budget had been told "no extra rounds", and its sweep then ran one
    tiny = dataclasses.replace(cfg, size="tiny", models=("resnet",), repeats=2, iterations=4, min_time_s=0.2)
    first_pass = sum(e.total for e in plan.estimate(tiny)[0])
    later = min(e.total for e in plan.estimate(tiny)[0] if e.round.repeat >= 1)
    left = 2 * later  # room for two more later rounds, and well under a minute
    assert left < 60
    text = plan.plan_text(dataclasses.replace(tiny, budget_min=(first_pass + left) / 60), "tiny.yaml")
    assert "then extra rounds for precision (target +-5%) for up to" in text and "whole budget" not in text
    text = plan.plan_text(dataclasses.replace(tiny, budget_min=(first_pass + later / 2) / 60), "tiny.yaml")
    assert "the first pass alone takes about the whole budget" in text


def test_plan_is_linear_in_the_batch_sizes():
    """20,000 batch sizes took 16 s (a sum over every round per batch size, and per model); one pass now."""
    import time

    cfg = BenchConfig(label="many", models=("resnet",), configurations=("eager", "default"), device="cpu",
                      batch_sizes=tuple(range(1, 20_001)), repeats=1)
    started = time.perf_counter()
    text = plan.plan_text(cfg, "many.yaml")
    assert time.perf_counter() - started < 8.0
    assert "to trim: drop batch size " in text


def test_an_interrupted_plan_does_not_promise_saved_cells(monkeypatch, capsys):
    import bench_utils.__main__ as cli

    def planning(args):
        raise KeyboardInterrupt

    def running(args):
        raise KeyboardInterrupt

    params = str(REPO / "parameters" / "cpu.yaml")
    monkeypatch.setattr(cli, "_cmd_plan", planning)
    monkeypatch.setattr(cli, "_cmd_run", running)
    assert cli.main(["plan", params]) == 130
    assert capsys.readouterr().err == "interrupted\n"  # plan measures nothing: nothing to resume
    assert cli.main(["run", params]) == 130
    assert "finished cells are saved" in capsys.readouterr().err


def test_a_package_is_planned_as_a_build_then_a_load_not_a_second_compile():
    # a later process starts from the built package (modes.py: its warm figure is the load and first
    # answer), on a CPU and a GPU alike; its build costs what a compile costs
    for device, label in (("cpu", "CPU"), ("cuda", "A100")):
        cfg = BenchConfig(**(GPU | {"device": device, "label": label}))
        warm = plan._compile_s(cfg, "resnet", "aot-inductor+freezing", False, None, device, "point")
        cold = plan._compile_s(cfg, "resnet", "aot-inductor+freezing", True, None, device, "point")
        assert warm == MODE_BY_NAME["aot-inductor"].warm_compile_s < 1.0 < cold
        assert cold == plan._compile_s(cfg, "resnet", "default+freezing", True, None, device, "point")
    # ONNX Runtime's export runs outside Inductor: its own constants, cold and warm
    cpu = BenchConfig(**(GPU | {"device": "cpu", "label": "CPU"}))
    onnx = MODE_BY_NAME["onnxruntime"]
    assert [plan._compile_s(cpu, "resnet", "onnxruntime", cold, None, "cpu", "point") for cold in (True, False)] == [
        onnx.cold_compile_s, onnx.warm_compile_s]


def test_on_a_gpu_a_later_round_is_its_contenders_workers_alone():
    # eager's own worker measures the selection round only where every compiled worker times eager beside
    # its blocks (jobs.eager_after_selection): later rounds cost the contenders' workers, fresh or kept
    cfg = BenchConfig(label="A100", models=("resnet",), batch_sizes=(1,), configurations=("eager", "default"),
                      device="cuda", repeats=3, profiler=False)
    estimates, _ = plan.estimate(cfg)
    assert [sorted(e.worker_s) for e in estimates] == [["default", "eager"], ["default"], ["default"]]
    apart = dataclasses.replace(cfg, eager_in_process=False)
    assert [sorted(e.worker_s) for e in plan.estimate(apart)[0]] == [["default", "eager"]] * 3


def test_on_a_gpu_a_fresh_round_takes_the_spares_the_one_before_started_beside_its_compiles():
    # workers.Spares: the first group starts its own workers, and two spares beside its first compile
    # (DETR's, longer than their imports: nothing to wait for); the second group's workers are those
    # spares, each the part of a start left to do (model build, CUDA context)
    cfg = BenchConfig(**GPU | {"models": ("detr",), "batch_sizes": (1, 4), "repeats": 1})
    first, second = plan.estimate(cfg)[0]
    assert first.seconds["start"] == pytest.approx(2 * plan.START_S["cuda"])
    assert second.seconds["start"] == pytest.approx(2 * (plan.START_S["cuda"] - plan.SPARE_START_S))
    # a compile (and the compiled worker's warm-up, half the round's) shorter than the spares' imports: the
    # runner waits for them before it times (rounds.py)
    short = [e for e in plan.estimate(dataclasses.replace(cfg, models=("vit",)), bound="low")[0]]
    beside = short[0].seconds["cold compile"] + short[0].seconds["warm-up"] / 2
    assert beside < 2 * plan.SPARE_START_S
    assert short[0].seconds["start"] == pytest.approx(2 * plan.START_S["cuda"] + 2 * plan.SPARE_START_S - beside)


def test_past_its_budget_plan_says_what_the_fit_leaves_out_of_the_later_models():
    # the guide's matrix with reduce-overhead on a GPU compiles twice per cell: past budget_min the fit
    # (sweep/fit.py) leaves a compiled configuration out of the races after the first model's, each way of
    # serving keeping one; plan says how many, which in the fit's order before any race (the most elaborate
    # first), and the time with them out
    cfg = BenchConfig(label="H100", models=("vit", "resnet", "convnext"), batch_sizes=(1, 16), device="cuda",
                      configurations=("eager", "default", "reduce-overhead"), repeats=3, budget_min=2.0)
    estimates, _ = plan.estimate(cfg)
    cut, total = plan.fit_cut(cfg, estimates)
    later = sum(e.worker_s.get("reduce-overhead", 0.0) for e in estimates if e.round.model != "vit")
    assert cut == ["reduce-overhead"] and total == pytest.approx(sum(e.total for e in estimates) - later)
    line = next(line for line in plan.plan_text(cfg, "h100.yaml").splitlines() if "whole budget" in line)
    assert (f"it leaves 1 of the 2 compiled configurations out of the 2 models after vit (here reduce-overhead; the first "
            f"model's race decides which), about {plan._duration(total)} in all, still past the budget") in line
    # the headline leads with that figure, the sweep's, and gives the full race's after it
    full = sum(e.total for e in estimates)
    assert plan.plan_text(cfg, "h100.yaml").splitlines()[1].startswith(
        f"  estimated about {plan._duration(total)} as the budget fits it (the fit's cut, below); {plan._duration(full)} (")
    roomy = dataclasses.replace(cfg, budget_min=total / 60 + 0.5)
    assert plan.fit_cut(roomy, estimates)[0] == ["reduce-overhead"]
    assert "still past" not in next(line for line in plan.plan_text(roomy, "x").splitlines() if "whole budget" in line)
    # one compiled configuration: nothing can leave (torch.compile keeps its best)
    single = dataclasses.replace(cfg, configurations=("eager", "default"))
    assert plan.fit_cut(single, plan.estimate(single)[0])[0] == []
    # and plan says the first pass runs on past the budget, by how much, instead of promising a cut
    single_total = sum(e.total for e in plan.estimate(single)[0])
    line = next(line for line in plan.plan_text(single, "a100.yaml").splitlines() if "whole budget" in line)
    assert ("nothing can leave it (each model keeps eager and default: the fit takes a way of serving down to its "
            "best configuration, no further, and spares the first model), so the first pass ends about "
            f"{plan._duration(single_total - 120.0)} past the budget, with no extra rounds") in line
    assert "leaves out what the budget cannot hold" not in line and "races every configuration" not in line
    # one model: its race is the first, which runs every configuration whatever the budget
    alone = dataclasses.replace(cfg, models=("vit",))
    line = next(line for line in plan.plan_text(alone, "x").splitlines() if "whole budget" in line)
    assert "nothing can leave it (each model keeps eager, default and reduce-overhead:" in line


@pytest.mark.parametrize("profile", sorted(p.name for p in (REPO / "parameters").glob("*.yaml")))
def test_the_plan_report_prints_is_at_most_six_lines_and_names_its_detail(profile):
    from bench_utils.config.parameters_file import load_config

    cfg = load_config(REPO / "parameters" / profile)
    text = plan.plan_summary(cfg, f"parameters/{profile}")
    lines = text.splitlines()
    assert 2 <= len(lines) <= 6, text
    assert lines[-1] == f"  details: python -m bench_utils plan parameters/{profile} --detail"
    assert re.match(r"  estimated \d+ (s|min|\.\d h)|  estimated [\d.]+ h", lines[1]) or "nothing left" in lines[1], text


def test_a_startup_profile_prices_every_configurations_start_in_round_0_and_no_later_warm_compile():
    from bench_utils.config.parameters_file import load_config

    cfg = load_config(REPO / "parameters" / "cpu-startup.yaml")
    assert cfg.startup and cfg.repeats == 2
    first = plan.round_estimate(cfg, plan.Round("vit", 1, 0, cfg.configurations), "cpu", {}, None)
    later = plan.round_estimate(cfg, plan.Round("vit", 1, 1, cfg.configurations), "cpu", {}, None)
    assert "warm compile" not in later.seconds and "start-up" not in later.seconds  # timed once, in round 0
    cold = plan.CPU_COMPILE_S["point"][0] * cpu_compile_scale("vit")
    warm = plan.CPU_COMPILE_S["point"][1] * cpu_compile_scale("vit")
    starts = {  # the model's build where the form runs its code, then its warm compile or load
        "eager": plan.START_S["cpu"], "default": plan.START_S["cpu"] + warm,
        "default+regional": plan.START_S["cpu"] + 0.8 * warm,  # regional compiles less (compile_cost)
        # an empty cache: the CPU kernels' C++ built again, about half a cold compile (start_share)
        "default+artifacts": plan.START_S["cpu"] + 0.5 * cold, "precompile": plan.START_S["cpu"] + 0.5 * cold,
        "aot-inductor+freezing": MODE_BY_NAME["aot-inductor"].warm_compile_s,  # a package holds its weights
        "onnxruntime": MODE_BY_NAME["onnxruntime"].warm_compile_s}
    assert first.seconds["start-up"] == pytest.approx(sum(starts.values()))  # latencies unknown: no first call
    measured = {("vit", 1, "default"): plan.Measured(latency_ms=20.0, cold_s=30.0, first_answer_s=9.0)}
    again = plan.round_estimate(cfg, plan.Round("vit", 1, 0, cfg.configurations), "cpu", measured, None)
    # the results file's start replaces the estimate (its first call included)
    assert again.seconds["start-up"] - first.seconds["start-up"] == pytest.approx(9.0 - starts["default"])
