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

    params = tiny_params(tmp_path, models=["resnet"], configurations=["eager", "onnxruntime"], repeats=2)
    results = tmp_path / "r.jsonl"
    proc = run_cli("run", params, "--results", results)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {(r.configuration, r.repeat): r for r in read_results(results).rows}
    built = rows[("onnxruntime", 0)]
    if importlib.util.find_spec("onnxruntime") is None:  # the optional dependencies: a row saying so
        assert built.status == "unsupported" and "pip install -e '.[deploy]'" in built.error
        return
    started = rows[("onnxruntime", 1)]
    assert built.status == started.status == "ok" and built.accuracy_ok, built.error
    assert built.compile_s > 0 and 0 < started.compile_warm_s < built.compile_s
