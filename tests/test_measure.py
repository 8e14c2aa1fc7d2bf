"""One cell measured in-process (no subprocess): the row's numbers and failure classification."""

import torch

from bench_utils.config.bench_config import BenchConfig
from bench_utils.measure.cell import error_text, measure_cell

FAST = dict(size="tiny", device="cpu", weights="random", min_time_s=0.2, max_warmup_s=1.0)  # seconds: a quick cell


def test_eager_cell_row_numbers():
    cfg = BenchConfig(models=("resnet",), modes=("eager",), iterations=5, warmup=1, **FAST)
    row = measure_cell(cfg, "resnet", 2, "eager", repeat=1)
    assert row.status == "ok" and row.error == "" and row.repeat == 1
    # at least `iterations` calls and at least min_time_s seconds of them
    assert len(row.samples_s) >= 5 and sum(row.samples_s) >= 0.2 * 0.9
    assert row.warmup_calls >= 1 and 0 < row.warmup_s and row.warmup_steady in (True, False)
    assert row.others_cpu_pct is not None and row.others_cpu_pct >= 0
    assert row.compile_s is None and row.graph_breaks is None
    assert row.settings == cfg.settings_fingerprint() and row.checkpoint == "microsoft/resnet-50"
    assert row.duration_s > 0 and row.started_at.endswith("+00:00")


def test_failures_become_statuses(monkeypatch):
    cfg = BenchConfig(models=("vit",), modes=("eager",), iterations=2, **FAST)
    monkeypatch.setenv("BENCH_UTILS_FAULT", "vit/1/eager=oom;vit/2/eager=eager-error")
    oom = measure_cell(cfg, "vit", 1, "eager")
    assert oom.status == "oom" and oom.error.startswith("MemoryError: injected fault: out of memory")
    err = measure_cell(cfg, "vit", 2, "eager")
    assert err.status == "error" and err.error.startswith("InjectedFault: injected fault: eager-error")
    assert err.weights == "random"  # what happened before the failure is kept


def test_cpu_allocator_failure_counts_as_oom(monkeypatch):
    import bench_utils.measure.cell as measure

    def fail(*args, **kwargs):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory")

    monkeypatch.setattr(measure, "load_model", fail)
    row = measure_cell(BenchConfig(**FAST), "vit", 1, "eager")
    assert row.status == "oom" and "can't allocate memory" in row.error


def test_error_text_is_short_and_names_the_frame():
    try:
        torch.zeros(2) @ torch.zeros(3)
    except RuntimeError as err:
        text = error_text(err)
    assert text.startswith("RuntimeError: ") and "test_measure.py:" in text and "\n" not in text


def test_autocast_channels_last_and_cold_then_warm_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "user-cache"))
    cfg = BenchConfig(models=("resnet",), modes=("eager", "default"), iterations=4, warmup=1, dtype="bfloat16",
                      autocast=True, channels_last=True, cold_compile=True, **FAST)
    row = measure_cell(cfg, "resnet", 1, "default")
    assert row.status == "ok", row.error
    assert row.fx_cache_misses >= 1 and row.fx_cache_hits == 0  # compile_s was a cold compile
    assert (row.dtype, row.autocast, row.channels_last) == ("bfloat16", True, True)
    # the second compile finds what the first wrote to the (then empty) cache: clearly cheaper
    assert 0 < row.compile_warm_s < row.compile_s / 2
    assert row.accuracy_ok and row.graph_breaks == 0 and row.graph_count == 1  # one compile counted, not two
    assert row.accuracy_reference == "float64"  # bfloat16: both outputs measured against a float64 run
    # the user's cache setting is back afterwards, and holds what the cold compile generated
    import os

    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "user-cache")
    assert [path for path in (tmp_path / "user-cache").rglob("*") if path.is_file()]
    # a later repeat compiles once, with the user's cache, as a later process would: warm
    again = measure_cell(cfg, "resnet", 1, "default", repeat=1)
    assert again.status == "ok" and again.compile_warm_s is None and 0 < again.compile_s < row.compile_s / 2
    assert again.fx_cache_hits >= 1 and again.fx_cache_misses == 0


def test_autocast_keeps_float32_weights_and_computes_in_the_autocast_dtype():
    cfg = BenchConfig(models=("resnet",), modes=("eager",), iterations=2, dtype="bfloat16", autocast=True, **FAST)
    import bench_utils.measure.cell as measure

    seen = {}
    real_load = measure.load_model

    def spy(spec, size, weights, device, dtype):
        loaded = real_load(spec, size, weights, device, dtype)
        seen["weights_dtype"] = next(loaded.model.parameters()).dtype
        return loaded

    measure.load_model = spy
    try:
        with measure.precision_context(cfg, "cpu"):
            assert torch.get_autocast_dtype("cpu") == torch.bfloat16 and torch.is_autocast_enabled("cpu")
        row = measure_cell(cfg, "resnet", 1, "eager")
    finally:
        measure.load_model = real_load
    assert row.status == "ok" and seen["weights_dtype"] == torch.float32
