"""What moves a launch-bound call, and what a GPU worker removes of it (bench_utils/measure/launch_thread.py,
measure/cell.py): the CPU its launching thread runs on, pinned once it warms up; the others' CPU share and
the GPU's SM clock per block. A stand-in CUDA process here: nothing touches a GPU."""

import os
import threading

import pytest

import bench_utils.measure.cell as measure
from bench_utils.config.bench_config import BenchConfig
from bench_utils.measure import device_memory, launch_thread
from bench_utils.measure.cell import CellProcess
from bench_utils.measure.task import CELL, Job, Task
from bench_utils.results.aggregate import cells
from bench_utils.results.row_schema import row_problem, field_types
from bench_utils.results.rows import BenchResult
from conftest import make_row


def _process(tmp_path, device: str) -> CellProcess:
    cfg = BenchConfig(models=("vit",), configurations=("eager", "default"), iterations=2, size="tiny", device="cpu",
                      weights="random", min_time_s=0.0, max_warmup_s=0.0)
    process = CellProcess(Task(cfg, Job(CELL, "vit", 1, "default", 0), tmp_path / "results.jsonl"))
    process.device = device  # the rules are CUDA's; nothing here touches a GPU
    process.call = lambda: None
    return process


def test_a_gpu_workers_blocks_record_its_threads_cpu_the_others_share_and_the_sm_clock(monkeypatch, tmp_path):
    monkeypatch.setattr(measure, "time_calls", lambda fn, device, calls, seconds: [1e-3] * 2)
    monkeypatch.setattr(device_memory, "release_cuda_memory", lambda: None)
    monkeypatch.setattr(measure.environment, "sm_clock_mhz", lambda: 1755.0)
    cpus = iter([3, 3, 7])
    monkeypatch.setattr(launch_thread, "current_cpu", lambda: next(cpus))
    process = _process(tmp_path, "cuda")
    for _ in range(3):
        process.time_block()
    fields = process.fields
    assert fields["block_cpus"] == [3, 3, 7] and fields["block_sm_clock_mhz"] == [1755.0] * 3
    assert len(fields["block_others_cpu_pct"]) == 3 and all(0 <= pct <= 100 for pct in fields["block_others_cpu_pct"])
    # without NVML the clock is not read, and a CPU run reads none
    monkeypatch.setattr(measure.environment, "sm_clock_mhz", lambda: None)
    monkeypatch.setattr(launch_thread, "current_cpu", lambda: 0)
    process.time_block()
    cpu = _process(tmp_path, "cpu")
    cpu.time_block()
    assert process.fields["block_sm_clock_mhz"] == [1755.0] * 3 and cpu.fields["block_sm_clock_mhz"] == []
    assert cpu.fields["block_cpus"] == [0]


def test_a_gpu_worker_pins_its_launching_thread_once_as_it_warms_up_a_cpu_worker_never(monkeypatch, tmp_path):
    # after its compile (whose workers keep every CPU), before its warm-up and blocks
    pinned = []
    monkeypatch.setattr(launch_thread, "pin", lambda: pinned.append("pin") or 5)
    monkeypatch.setattr(measure, "warm_up", lambda *args, **kwargs: {"warmup_calls": 1})
    monkeypatch.setattr(device_memory, "reset_peak_memory", lambda device: None)  # a later round's: CUDA's allocator
    process = _process(tmp_path, "cuda")
    process._warm_up(process.call, 0)
    process._warm_up(process.call, 0)  # eager beside it warms up too: still one pin
    assert pinned == ["pin"] and process.fields["pinned_cpu"] == 5
    process.next_round(1)  # a later round of the same process carries it
    assert process.fields["pinned_cpu"] == 5
    cpu = _process(tmp_path, "cpu")
    cpu._warm_up(cpu.call, 0)
    assert pinned == ["pin"] and "pinned_cpu" not in cpu.fields


def test_pin_keeps_the_calling_thread_alone_on_the_cpu_it_runs_on():
    # in a thread of its own: the test's own thread keeps its CPUs
    before = os.sched_getaffinity(0)
    seen = {}

    def worker():
        seen["cpu"] = launch_thread.pin()
        seen["affinity"] = os.sched_getaffinity(0)  # pid 0: the calling thread

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen["cpu"] in before and seen["affinity"] == {seen["cpu"]}
    assert os.sched_getaffinity(0) == before
    assert launch_thread.current_cpu() in before


def test_a_cells_record_holds_its_threads_cpus_and_the_clocks_range():
    rows = [make_row(configuration="eager", block_cpus=[3, 3], block_sm_clock_mhz=[1980.0, 1755.0]),
            make_row(configuration="eager", repeat=1, block_cpus=[5, 3], block_sm_clock_mhz=[1830.0])]
    record = cells(rows)[0]
    assert record["launch_cpus"] == [3, 5]
    assert (record["sm_clock_mhz_low"], record["sm_clock_mhz_high"]) == (1755.0, 1980.0)
    assert cells([make_row()])[0]["sm_clock_mhz_low"] is None  # no NVML: no clock


@pytest.mark.parametrize("field, value", [("block_cpus", [-2]), ("block_cpus", [1.5]), ("block_others_cpu_pct", [101.0]),
                                          ("block_sm_clock_mhz", [-1.0]), ("pinned_cpu", -1)])
def test_a_row_with_a_host_state_no_machine_has_is_refused(field, value):
    values = vars(make_row()) | {field: value}
    assert row_problem(values, field_types(BenchResult)).startswith(field)
    assert row_problem(vars(make_row()) | {"block_cpus": [-1, 0, 15], "pinned_cpu": 15}, field_types(BenchResult)) == ""


def test_a_gpu_worker_runs_torch_on_one_intra_op_thread_once_its_model_is_loaded(monkeypatch, tmp_path):
    # its model runs on the GPU: an idle worker's OpenMP pool then has no threads to spin beside the one
    # that times (the row's environment says so: torch_threads)
    import torch

    class Loaded:
        model, num_params, weights, note = torch.nn.Linear(2, 2), 6, "random", ""

    def stop(*args):
        raise measure.Unsupported("stopped after the load (test)")

    threads = torch.get_num_threads()
    monkeypatch.setattr(measure, "load_for_process", lambda cfg, name, device, fields: (None, Loaded()))
    monkeypatch.setattr(measure, "process_inputs", stop)
    try:
        process = _process(tmp_path, "cuda")
        process.prepare()
        assert torch.get_num_threads() == launch_thread.GPU_WORKER_THREADS == 1
        assert process.failure[1] == "stopped after the load (test)"
    finally:
        torch.set_num_threads(threads)


def test_unpinned_gives_the_thread_and_what_it_starts_its_cpus_back_then_pins_it_again():
    # the profiler's threads start inside it: they must not share the launching thread's one CPU
    before = os.sched_getaffinity(0)
    seen = {}

    def worker():
        seen["cpu"] = launch_thread.pin()
        with launch_thread.unpinned():
            seen["inside"] = os.sched_getaffinity(0)
            child = threading.Thread(target=lambda: seen.setdefault("child", os.sched_getaffinity(0)))
            child.start()
            child.join()
        seen["after"] = os.sched_getaffinity(0)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen["inside"] == seen["child"] == before and seen["after"] == {seen["cpu"]}
    with launch_thread.unpinned():  # a thread never pinned: nothing changes
        assert os.sched_getaffinity(0) == before


def test_a_gpu_workers_profiler_pass_runs_unpinned(monkeypatch, tmp_path):
    entered = []

    class Unpinned:
        def __enter__(self):
            entered.append("unpinned")

        def __exit__(self, *exc):
            entered.append("pinned again")

    monkeypatch.setattr(launch_thread, "unpinned", Unpinned)
    monkeypatch.setattr(measure.profiling, "profile_calls", lambda *args: entered.append("profile") or {})
    monkeypatch.setattr(device_memory, "hand_over_memory", lambda device: None)
    process = _process(tmp_path, "cuda")
    process.profile()
    assert entered == ["unpinned", "profile", "pinned again"]
