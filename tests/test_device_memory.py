"""A row's memory is its own calls' (bench_utils/measure/device_memory.py): where eager float32 is timed
between a configuration's blocks (eager_in_process, a GPU's default), eager's activations never reach the
configuration's peaks. A stand-in CUDA allocator here: nothing touches a GPU."""

import pytest

import bench_utils.measure.cell as measure
from bench_utils.config.bench_config import BenchConfig
from bench_utils.measure import device_memory
from bench_utils.measure.cell import CellProcess
from bench_utils.measure.task import CELL, Job, Task


class StandInAllocator:
    """CUDA's peak statistics as torch keeps them: a peak since the last reset, which starts from what is
    allocated at the reset; a call holds its activations (MiB) over the weights and inputs while it runs."""

    def __init__(self, resident_mb: float):
        self.resident, self.peak, self.reserved_peak, self.resets = resident_mb, resident_mb, resident_mb, 0

    def run(self, activations_mb: float) -> None:
        self.peak = max(self.peak, self.resident + activations_mb)
        self.reserved_peak = max(self.reserved_peak, self.resident + 2 * activations_mb)  # the cache rounds up

    def reset(self, device: str) -> None:
        self.peak = self.reserved_peak = self.resident
        self.resets += 1

    def peaks(self, device: str, before_fork_mb: float = 0.0) -> dict:
        return {"peak_mem_mb": self.peak, "peak_reserved_mb": self.reserved_peak}


@pytest.fixture
def allocator(monkeypatch):
    stand_in = StandInAllocator(resident_mb=100.0)
    monkeypatch.setattr(device_memory, "reset_peak_memory", stand_in.reset)
    monkeypatch.setattr(device_memory, "peaks_mb", stand_in.peaks)
    monkeypatch.setattr(device_memory, "held_now_mb", lambda device: {"cudagraph_pool_mb": 40.0})
    monkeypatch.setattr(device_memory, "release_cuda_memory", lambda: None)
    monkeypatch.setattr(measure, "time_calls", lambda fn, device, calls, seconds: [fn() or 1e-3 for _ in range(2)])
    monkeypatch.setattr(measure.environment, "collect", lambda device: {})
    return stand_in


def _cuda_process(tmp_path, allocator, eager_mb: float | None, compiled_mb: float) -> CellProcess:
    cfg = BenchConfig(models=("vit",), configurations=("eager", "default"), iterations=2, size="tiny", device="cpu",
                      weights="random", min_time_s=0.0, max_warmup_s=0.0, eager_in_process=eager_mb is not None)
    process = CellProcess(Task(cfg, Job(CELL, "vit", 1, "default", 0), tmp_path / "results.jsonl"))
    process.device = "cuda"  # the rule is CUDA's; the allocator is the stand-in above
    process._own_peaks = device_memory.OwnPeaks("cuda")
    process.call = lambda: allocator.run(compiled_mb)
    if eager_mb is not None:
        process.eager_call = lambda: allocator.run(eager_mb)
    return process


def test_a_configurations_peaks_leave_out_eager_timed_beside_it(tmp_path, allocator):
    process = _cuda_process(tmp_path, allocator, eager_mb=800.0, compiled_mb=200.0)
    for block in range(4):  # ABBA: eager first in even blocks, so it runs both before and after the configuration
        process.time_block(after_switch=block % 2 == 0, hand_over=block % 2 == 1)
    row = process.finish()
    assert (row.peak_mem_mb, row.peak_reserved_mb, row.cudagraph_pool_mb) == (300.0, 500.0, 40.0)
    assert allocator.peak == 900.0  # what the row would have read at its end: eager's
    # reset where the configuration's calls follow eager's (blocks 0 and 2), not at ABBA's middle
    assert allocator.resets == 2


def test_without_eager_beside_the_peaks_are_the_blocks_own_and_never_reset_between_them(tmp_path, allocator):
    process = _cuda_process(tmp_path, allocator, eager_mb=None, compiled_mb=250.0)
    for block in range(3):
        process.time_block(after_switch=True, hand_over=True)
    row = process.finish()
    assert (row.peak_mem_mb, row.peak_reserved_mb) == (350.0, 600.0) and allocator.resets == 0


def test_a_later_round_starts_its_peaks_again(tmp_path, allocator):
    process = _cuda_process(tmp_path, allocator, eager_mb=800.0, compiled_mb=200.0)
    process.time_block()
    process.finish()
    process.call = lambda: allocator.run(50.0)  # the same process, a round whose calls hold less
    process.next_round(1)
    process.time_block()
    assert process.finish().peak_mem_mb == 150.0


def test_a_later_round_without_eager_beside_starts_its_peaks_again_too(tmp_path, allocator):
    process = _cuda_process(tmp_path, allocator, eager_mb=None, compiled_mb=600.0)
    process.time_block()
    assert process.finish().peak_mem_mb == 700.0
    process.call = lambda: allocator.run(50.0)
    process.next_round(1)  # its reset: no eager stretch here to start the peaks again
    process.time_block()
    assert process.finish().peak_mem_mb == 150.0


def test_a_cpu_row_keeps_its_templates_peak_up_to_the_fork(tmp_path, monkeypatch):
    monkeypatch.setattr(measure, "time_calls", lambda fn, device, calls, seconds: [fn() or 1e-3 for _ in range(2)])
    monkeypatch.setattr(measure.environment, "collect", lambda device: {})
    process = _cuda_process(tmp_path, StandInAllocator(0.0), eager_mb=None, compiled_mb=0.0)
    process.device, process._own_peaks = "cpu", device_memory.OwnPeaks("cpu")
    process.before_fork_mb = device_memory.peak_rss_mb() * 10  # a forked round: the compile's peak came before it
    process.time_block()
    row = process.finish()
    assert row.peak_mem_mb == process.before_fork_mb and row.peak_reserved_mb is None


def test_own_peaks_keep_the_largest_of_each_reading(monkeypatch):
    readings = iter([{"peak_mem_mb": 300.0, "peak_reserved_mb": 400.0},
                     {"peak_mem_mb": 250.0, "peak_reserved_mb": 450.0}])
    monkeypatch.setattr(device_memory, "peaks_mb", lambda device, before_fork_mb=0.0: next(readings))
    peaks = device_memory.OwnPeaks("cuda")
    peaks.end()
    peaks.end()
    assert peaks.of_row() == {"peak_mem_mb": 300.0, "peak_reserved_mb": 450.0}


def test_on_a_cpu_the_peak_is_the_processs_and_a_forks_includes_its_templates():
    rss = device_memory.peak_rss_mb()
    assert device_memory.peaks_mb("cpu") == {"peak_mem_mb": pytest.approx(rss, rel=0.05)}
    assert device_memory.peaks_mb("cpu", before_fork_mb=rss * 10)["peak_mem_mb"] == rss * 10
    assert device_memory.held_now_mb("cpu") == {}
