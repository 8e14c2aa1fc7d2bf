"""One cell measured in-process (no subprocess): the row's numbers and failure classification."""

import torch

from bench_utils.config import BenchConfig
from bench_utils.measure import block_sizes, error_text, measure_cell


def test_block_sizes_split_iterations_evenly():
    assert block_sizes(300) == [60] * 5
    assert block_sizes(12) == [3, 3, 2, 2, 2]
    assert block_sizes(5) == [3, 2]
    assert block_sizes(2) == [2]
    assert sum(block_sizes(301)) == 301


def test_eager_cell_row_numbers():
    cfg = BenchConfig(models=("resnet",), modes=("eager",), device="cpu", weights="random", iterations=5,
                      warmup=1)
    row = measure_cell(cfg, "resnet", 2, "eager")
    assert row.status == "ok" and row.error == ""
    assert row.samples_s == row.eager_samples_s and len(row.samples_s) == 5
    assert row.latency_ms_median == row.eager_ms_median and row.speedup == 1.0
    assert row.compile_s is None and row.graph_breaks is None
    assert row.settings == cfg.settings_fingerprint() and row.checkpoint == "microsoft/resnet-50"
    assert row.duration_s > 0 and row.started_at.endswith("+00:00")


def test_failures_become_statuses(monkeypatch):
    cfg = BenchConfig(models=("vit",), modes=("eager",), device="cpu", weights="random", iterations=2)
    monkeypatch.setenv("BENCH_UTILS_FAULT", "vit/1/eager=oom;vit/2/eager=eager-error")
    oom = measure_cell(cfg, "vit", 1, "eager")
    assert oom.status == "oom" and oom.error.startswith("MemoryError: injected fault: out of memory")
    err = measure_cell(cfg, "vit", 2, "eager")
    assert err.status == "error" and err.error.startswith("InjectedFault: injected fault: eager-error")
    assert err.weights == "random"  # what happened before the failure is kept


def test_cpu_allocator_failure_counts_as_oom(monkeypatch):
    import bench_utils.measure as measure

    def fail(*args, **kwargs):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory")

    monkeypatch.setattr(measure, "load_model", fail)
    row = measure_cell(BenchConfig(device="cpu", weights="random"), "vit", 1, "eager")
    assert row.status == "oom" and "can't allocate memory" in row.error


def test_error_text_is_short_and_names_the_frame():
    try:
        torch.zeros(2) @ torch.zeros(3)
    except RuntimeError as err:
        text = error_text(err)
    assert text.startswith("RuntimeError: ") and "test_measure.py:" in text and "\n" not in text


def test_autocast_channels_last_and_cold_then_warm_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "user-cache"))
    cfg = BenchConfig(models=("resnet",), modes=("default",), device="cpu", weights="random", iterations=4,
                      warmup=1, dtype="bfloat16", autocast=True, channels_last=True, cold_compile=True)
    row = measure_cell(cfg, "resnet", 1, "default")
    assert row.status == "ok", row.error
    assert (row.dtype, row.autocast, row.channels_last) == ("bfloat16", True, True)
    # the second compile finds what the first wrote to the (then empty) cache: clearly cheaper
    assert 0 < row.compile_warm_s < row.compile_s / 2
    assert row.accuracy_ok and row.graph_breaks == 0 and row.graph_count == 1  # one compile counted, not two
    # the cold compile used a folder of its own, and the user's cache setting is back afterwards
    assert not [path for path in (tmp_path / "user-cache").rglob("*") if path.is_file()]
    import os

    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "user-cache")


def test_autocast_keeps_float32_weights_and_computes_in_the_autocast_dtype():
    cfg = BenchConfig(models=("resnet",), modes=("eager",), device="cpu", weights="random", iterations=2,
                      dtype="bfloat16", autocast=True)
    import bench_utils.measure as measure

    seen = {}
    real_load = measure.load_model

    def spy(spec, size, weights, device, dtype):
        loaded = real_load(spec, size, weights, device, dtype)
        seen["weights_dtype"] = next(loaded.model.parameters()).dtype
        return loaded

    measure.load_model = spy
    try:
        with measure._precision(cfg, "cpu"):
            assert torch.get_autocast_dtype("cpu") == torch.bfloat16 and torch.is_autocast_enabled("cpu")
        row = measure_cell(cfg, "resnet", 1, "eager")
    finally:
        measure.load_model = real_load
    assert row.status == "ok" and seen["weights_dtype"] == torch.float32


def test_graph_stats_name_graph_breaks_and_failed_guards_from_dynamo():
    from bench_utils.measure import clear_graph_stats, graph_stats

    def breaks(x):
        x = x * 2
        print("a side effect dynamo cannot trace")  # a graph break
        return x + 1

    torch._dynamo.reset()
    clear_graph_stats()
    compiled = torch.compile(breaks, dynamic=False, backend="eager")  # dynamo only: no codegen, fast
    compiled(torch.ones(2))
    first = graph_stats(frames_after_first_call=0)
    assert first["graph_breaks"] >= 1 and first["graph_count"] == 2
    assert any("print" in reason.lower() or "builtin" in reason.lower() for reason in first["break_reasons"])
    frames = int(torch._dynamo.utils.counters["frames"]["total"])
    compiled(torch.ones(3))  # a new static shape: the size guard fails and dynamo compiles again
    again = graph_stats(frames)
    assert again["recompiles"] >= 1
    assert any("size mismatch" in reason and "expected 2, actual 3" in reason for reason in again["recompile_reasons"])
    torch._dynamo.reset()
