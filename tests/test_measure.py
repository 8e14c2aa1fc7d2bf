"""One cell measured in-process (no subprocess): the row's numbers and failure classification."""

import pytest
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
