"""Forms compiled ahead of time (config/modes.py `form`, measure/deploy.py): an AOTInductor package
raced against eager float32 as any configuration is, through the same loop, worker and rows."""

import pytest

from bench_utils.results.aggregate import load_dataframe
from bench_utils.results.rows import read_results
from conftest import run_cli, tiny_params


@pytest.mark.slow
def test_an_aotinductor_package_is_built_once_and_each_later_round_starts_from_it(tmp_path):
    params = tiny_params(tmp_path, models=["resnet"], configurations=["eager", "aot-inductor+freezing"], repeats=2)
    results = tmp_path / "r.jsonl"
    proc = run_cli("run", params, "--results", results)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {(r.configuration, r.repeat): r for r in read_results(results).rows}
    built, started = rows[("aot-inductor+freezing", 0)], rows[("aot-inductor+freezing", 1)]
    assert built.status == started.status == "ok" and built.accuracy_ok and built.accuracy_reference == "elementwise"
    # the build (export, package, load, first answer) in round 0; a later round's process loads the
    # package and answers: no export, no compile, a fraction of the build
    assert built.compile_s > 1.0 and 0 < started.compile_warm_s < built.compile_s / 3
    assert built.graph_breaks == 0 and built.graph_count == 1
    cell = load_dataframe(results).set_index("configuration").loc["aot-inductor+freezing"]
    assert cell["race_speedup"] > 0 and cell["compile_warm_s"] == started.compile_warm_s


@pytest.mark.slow
def test_onnx_runtime_runs_as_a_configuration_or_says_what_is_missing(tmp_path):
    import importlib.util

    # each CPU round is a process forked from the one that built the file: the second round's process
    # opens a session of its own (the template's was closed before the fork: a fork with its threads
    # alive hung), and the template's warm compile is a new process's load and first answer
    params = tiny_params(tmp_path, models=["resnet"], configurations=["eager", "onnxruntime"], repeats=2)
    results = tmp_path / "results.jsonl"
    proc = run_cli("run", str(params), "--results", str(results), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {(r.configuration, r.repeat): r for r in read_results(results).rows}
    built = rows[("onnxruntime", 0)]
    if importlib.util.find_spec("onnxruntime") is None:  # the optional dependencies: a row saying so
        assert built.status == "unsupported" and "pip install -e '.[deploy]'" in built.error
        return
    started = rows[("onnxruntime", 1)]
    assert built.status == started.status == "ok" and built.accuracy_ok, built.error
    assert started.template_round == 0 and started.process_round == 1  # forked from the building process
    assert built.compile_s > 0 and 0 < started.compile_warm_s < built.compile_s


@pytest.mark.slow
def test_a_loaded_package_answers_without_compiling(tmp_path):
    """What a serving process pays is a load: after aoti_load_package, the first call runs no dynamo
    frame and no Inductor compile (their counters stay at zero)."""
    import torch
    from torch._dynamo.utils import counters

    from bench_utils.measure import deploy
    from bench_utils.measure.models import load_model
    from bench_utils.config.registry import get_spec

    model = load_model(get_spec("resnet"), "tiny", "random", "cpu", "float32").model
    inputs = {"pixel_values": torch.randn(1, 3, 64, 64)}
    with torch.inference_mode():
        path = deploy.build("aot-inductor", model, inputs, {}, tmp_path)
        counters.clear()
        runner = deploy.load("aot-inductor", path, model(**inputs))
        output = runner(**inputs)
        assert sum(counters["frames"].values()) == 0 and sum(counters["inductor"].values()) == 0
        assert torch.allclose(output.logits, model(**inputs).logits, atol=1e-4)


def test_a_model_that_does_not_export_is_a_row_with_the_exporters_words(monkeypatch):
    """An export failure is the configuration's row (status error, the exporter's first line), measured
    in this process as a worker would: the race goes on without it."""
    import torch

    from bench_utils.config.bench_config import BenchConfig
    from conftest import measure_cell

    def refuse(*args, **kwargs):
        raise torch._dynamo.exc.Unsupported("data-dependent branching: Could not guard on u0 > 0")

    monkeypatch.setattr(torch.export, "export", refuse)
    cfg = BenchConfig(label="t", models=("resnet",), size="tiny", configurations=("eager", "aot-inductor"),
                      weights="random", iterations=3, min_time_s=0.0, warmup=1, max_warmup_s=0.2, profiler=False)
    row = measure_cell(cfg, "resnet", 1, "aot-inductor")
    assert row.status == "error" and "Could not guard on u0 > 0" in row.error and row.compile_s is None
