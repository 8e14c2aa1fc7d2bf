"""A new process's start for every form (measure/startup.py), on a tiny ViT through the sweep as a user
runs it (startup: true): each configuration's round 0 carries its first answer in a process forked from a
copy of the worker made before it built anything, and what that process compiled."""

import importlib.util

import pytest

from bench_utils.results.rows import read_results
from conftest import run_cli, tiny_params

FORMS = ["eager", "default", "default+artifacts", "default+regional", "aot-inductor", "onnxruntime", "precompile"]


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("startup")
    params = tiny_params(tmp, configurations=FORMS, startup=True, profiler=False)
    results = tmp / "results.jsonl"
    # C++ kernels built in the compiling process: on a 2-core machine faster than Inductor's pool of workers
    proc = run_cli("run", params, "--results", results, env={"TORCHINDUCTOR_COMPILE_THREADS": "1"}, timeout=3000)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {row.configuration: row for row in read_results(results).rows}


def ok(row):
    assert row.status == "ok", row.error
    return row


@pytest.mark.slow
def test_eager_starts_with_its_build_and_one_call(started):
    eager = ok(started["eager"])
    # build_s is round 0's build, in the template; first_answer_s a new process's build and call (a tiny
    # model's build there can take less than the template's first one: neither bounds the other)
    assert eager.build_s > 0 and eager.first_answer_s > 0 and eager.start_frames == 0 and eager.compile_warm_s is None


@pytest.mark.slow
def test_torch_compile_starts_cold_in_round_0_and_warm_from_its_own_cache(started):
    default = ok(started["default"])
    assert default.fx_cache_hits == 0 and default.fx_cache_misses >= 1  # round 0: a cold compile
    # the new process compiled from the cell's cache: every graph a hit, dynamo traced again
    assert default.start_fx_cache_hits >= 1 and default.start_fx_cache_misses == 0 and default.start_frames >= 1
    assert 0 < default.compile_warm_s < default.first_answer_s < default.build_s + default.compile_s
    assert default.ships_bytes is None


@pytest.mark.slow
def test_cache_artifacts_start_an_empty_cache_without_compiling_a_graph(started):
    artifacts = ok(started["default+artifacts"])
    assert artifacts.ships_bytes > 0 and artifacts.fx_cache_misses >= 1
    # loaded into an empty cache, the artifacts served every graph: none compiled from scratch (the CPU's
    # kernels' C++ is built again: the artifacts hold Inductor's graphs, not compiled C++)
    assert artifacts.start_fx_cache_hits >= 1 and artifacts.start_fx_cache_misses == 0 and artifacts.start_frames >= 1
    assert artifacts.accuracy_ok is True and artifacts.first_answer_s > 0


@pytest.mark.slow
def test_regional_compiles_the_repeated_blocks_into_one_graph(started):
    regional = ok(started["default+regional"])
    assert regional.regions == 2 and regional.regions_at == "2 x ViTLayer at vit.layers"
    assert regional.graph_count == 1 and regional.fx_cache_misses == 1  # the second layer reused the first's graph
    assert regional.start_fx_cache_hits == 1 and regional.start_fx_cache_misses == 0
    assert regional.accuracy_ok is True and regional.first_answer_s > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["aot-inductor", "onnxruntime", "precompile"])
def test_a_shipped_form_starts_without_tracing_or_compiling_a_graph(started, name):
    row = started[name]
    if name == "onnxruntime" and importlib.util.find_spec("onnxruntime") is None:
        assert row.status == "unsupported" and "pip install" in row.error
        return
    ok(row)
    assert row.ships_bytes > 0 and row.first_answer_s > 0 and row.compile_warm_s <= row.first_answer_s
    assert row.start_frames == row.start_fx_cache_hits == row.start_fx_cache_misses == 0
    if name != "precompile":  # a package holds its weights: no model built before its first answer
        assert row.first_answer_s == pytest.approx(row.compile_warm_s, abs=1e-3)
