"""The plan: how long a profile will run, from the guide's latencies, before anything runs."""

import pytest

from bench_utils.config.bench_config import BenchConfig
from bench_utils.sweep import plan
from conftest import REPO, run_cli

GPU = dict(label="A100", models=("vit",), size="full", batch_sizes=(1,), modes=("eager", "default"), device="cuda",
           weights="random", warmup=10, iterations=300, min_time_s=1.0, max_warmup_s=10.0, repeats=2,
           cold_compile=False, timeout_s=1800.0)


def test_guide_latency_of_a_published_cell_and_none_elsewhere():
    assert plan.guide_latency_ms("A100", "vit", 1, "eager") == 9.325  # the guide's table, torch 2.0.1
    assert plan.guide_latency_ms("A100", "vit", 1, "default") == 7.584
    assert plan.guide_latency_ms("A100", "vit", 3, "eager") is None
    assert plan.guide_gpu("T4 (nightly)") == "T4" and plan.guide_gpu("H100") is None


def test_process_seconds_add_start_warmup_timing_and_compile():
    cfg = BenchConfig(**GPU)
    # eager, 9.325 ms: warm-up max(10 calls, 0.5 s) = 0.5 s; timing max(300 calls = 2.7975 s, 1 s)
    assert plan.process_seconds(cfg, "eager", 0, 9.325) == pytest.approx(plan.START_S + 0.5 + 2.7975)
    # compiled: a cold compile in the first process (60 s), a warm one (8 s, its own constant) in the next
    first = plan.process_seconds(cfg, "default", 0, 7.584)
    assert first == pytest.approx(plan.START_S + 0.5 + 300 * 0.007584 + 60.0)
    assert plan.process_seconds(cfg, "default", 1, 7.584) == pytest.approx(first - 60.0 + 8.0)
    # cold_compile compiles twice in the first process, cold then warm; tiny models take a tenth
    cold = BenchConfig(**(GPU | {"cold_compile": True, "size": "tiny"}))
    assert plan.process_seconds(cold, "default", 0, None) == pytest.approx(plan.START_S + 0.5 + 1.0 + 6.0 + 0.8)


def test_a_warm_max_autotune_compile_costs_seconds_not_a_share_of_the_cold_one():
    """FastVideo#1445: a max-autotune start takes 4 s warm against +419 s cold; the warm price is the
    mode table's own constant, not 25% of the cold one (which would be 120 s)."""
    from bench_utils.config.modes import COLD_COMPILE_S, WARM_COMPILE_S

    cfg = BenchConfig(**(GPU | {"modes": ("eager", "max-autotune")}))
    cold = plan.process_seconds(cfg, "max-autotune", 0, None)
    warm = plan.process_seconds(cfg, "max-autotune", 1, None)
    assert cold - warm == pytest.approx(COLD_COMPILE_S["max-autotune"] - WARM_COMPILE_S["max-autotune"])
    assert WARM_COMPILE_S["max-autotune"] <= 15 and COLD_COMPILE_S["max-autotune"] >= 60 + 419
    assert plan.process_seconds(cfg, "eager", 0, None) == plan.process_seconds(cfg, "eager", 1, None)


def test_estimate_covers_every_process_and_flags_those_near_the_timeout():
    cfg = BenchConfig(**(GPU | {"timeout_s": 100.0}))
    estimates = plan.estimate(cfg)
    assert [(e.mode, e.repeat) for e in estimates] == [("eager", 0), ("default", 0), ("eager", 1), ("default", 1)]
    assert [e.latency_ms for e in estimates] == [9.325, 7.584, 9.325, 7.584]
    risky = plan.too_long(cfg, estimates)  # 80 s for the cold compiled process: 1.5 x 80 > 100 s
    assert [(e.mode, e.repeat) for e in risky] == [("default", 0)]


def test_plan_command_prints_the_total_per_model_and_warnings(tmp_path):
    params = tmp_path / "a100.yaml"
    params.write_text("label: A100\nmodels: [vit, resnet]\nbatch_sizes: [1]\nmodes: [eager, max-autotune]\n"
                      "size: full\ndevice: cuda\nweights: random\ntimeout_s: 600\niterations: 30\nmax_warmup_s: 10\n"
                      "min_time_s: 1.0\ncold_compile: true\n")
    proc = run_cli("plan", params, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("A100: 12 processes (4 cells x 3 repeats)")
    assert "the guide's A100 tables for 12 of 12 processes" in lines[1]  # its default mode stands in for all
    assert [line.split()[0] for line in lines[2:4]] == ["vit", "resnet"]
    assert any(line.startswith("  warning: vit bs=1 max-autotune #0") and "raise timeout_s" in line for line in lines)


def test_plan_leaves_out_what_the_results_file_already_holds(tmp_path):
    from bench_utils.results.writer import ResultsWriter
    from bench_utils.results.rows import cell_fields
    from conftest import make_row

    cfg = BenchConfig(**GPU)
    results = tmp_path / "results.jsonl"
    with ResultsWriter(results) as writer:  # the first pass: eager and compiled, repeat 0
        for mode in ("eager", "default"):
            writer.append(make_row(**cell_fields(cfg, "vit", 1, mode, "cuda", 0)))
    left = plan.remaining(cfg, plan.estimate(cfg), results)
    assert [(e.mode, e.repeat) for e in left] == [("eager", 1), ("default", 1)]
    text = plan.plan_text(cfg, "a100.yaml", results)
    assert text.splitlines()[0] == f"a100.yaml: A100: 4 processes (2 cells x 2 repeats); 2 already measured in {results}"
    total = sum(e.seconds for e in left)
    assert text.splitlines()[1].startswith(f"  estimated {total:.0f} s ")


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "parameters").glob("*.yaml")))
def test_every_shipped_profile_has_a_plan(name, tmp_path):
    from bench_utils.config.parameters_file import load_config

    cfg = load_config(REPO / "parameters" / name)
    text = plan.plan_text(cfg, name, tmp_path / "none.jsonl")
    assert text.startswith(f"{name}: {cfg.label}: {len(cfg.runs())} processes") and "estimated" in text


def test_a_reader_that_goes_away_is_no_error():
    """`plan ... | head`: the output has nowhere to go; the command stops quietly (exit 1), no traceback."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "bench_utils", "plan", str(REPO / "parameters" / "a100.yaml")],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line is written
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1 and stderr == ""
