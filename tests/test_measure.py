"""One cell's process measured in-process (no worker): the row's numbers, its blocks, and failure
classification."""

import torch

from bench_utils.config.bench_config import BenchConfig
from bench_utils.measure import device_memory
from bench_utils.measure.cell import CellProcess
from bench_utils.measure.settings import cpu_native, precision_context
from bench_utils.measure.task import CELL, Job, Task
from conftest import measure_cell
from bench_utils.results.aggregate import cells

FAST = dict(target_halfwidth=0.0, size="tiny", device="cpu", weights="random", min_time_s=0.2, max_warmup_s=1.0)  # seconds: a quick cell


def test_eager_cell_row_numbers():
    cfg = BenchConfig(models=("resnet",), configurations=("eager",), iterations=5, warmup=1, blocks=4, **FAST)
    row = measure_cell(cfg, "resnet", 2, "eager", repeat=1)
    assert row.status == "ok" and row.error == "" and row.repeat == 1
    # at least `iterations` calls and at least min_time_s seconds of them, in `blocks` blocks of at
    # least ceil(5 / 4) = 2 calls and 0.2 / 4 s each
    assert len(row.samples_s) >= 5 and sum(row.samples_s) >= 0.2 * 0.9
    assert len(row.block_lengths) == cfg.blocks == 4 and sum(row.block_lengths) == len(row.samples_s)
    assert min(row.block_lengths) >= 2
    assert row.warmup_calls >= 1 and 0 < row.warmup_s and row.warmup_steady in (True, False)
    assert row.others_cpu_pct is not None and row.others_cpu_pct >= 0
    assert row.compile_s is None and row.graph_breaks is None
    assert row.settings == cfg.settings_fingerprint() and row.checkpoint == "microsoft/resnet-50"
    assert row.duration_s > 0 and row.started_at.endswith("+00:00")


def test_failures_become_statuses(monkeypatch):
    cfg = BenchConfig(models=("vit",), configurations=("eager",), iterations=2, **FAST)
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


def test_freezing_takes_effect_the_weights_are_folded(tmp_path, monkeypatch):
    # a tiny conv model: every parameter must be folded into a constant, none left a graph input
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cell-cache"))  # the cell's own, as a worker sets it
    name = "default+freezing"
    cfg = BenchConfig(models=("resnet",), configurations=("eager", name), iterations=4, warmup=1, **FAST)
    row = measure_cell(cfg, "resnet", 1, name)
    assert row.status == "ok", row.error
    assert row.params_folded > 0 and row.params_unfolded == 0
    assert row.autotune_choices is None and row.matmuls_seen is None  # evidence asked of freezing alone
    assert row.accuracy_ok and row.accuracy_reference == "elementwise"


def test_freezing_passed_as_a_compile_option_is_a_failed_row_not_a_figure(tmp_path, monkeypatch):
    # torch.compile(options={"freezing": True}) reaches Inductor after dynamo traced the parameters as
    # graph inputs: nothing is folded, and the row must say so rather than time plain default mode
    import contextlib

    import bench_utils.measure.cell as measure
    from torch._inductor import list_mode_options

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cell-cache"))
    monkeypatch.setattr(measure, "inductor_context", lambda config: contextlib.nullcontext())
    monkeypatch.setattr(measure, "compile_model", lambda model, config, fullgraph, dynamic: torch.compile(
        model, options={**list_mode_options(config.mode), **config.inductor_settings}))
    name = "default+freezing"
    cfg = BenchConfig(models=("resnet",), configurations=("eager", name), iterations=2, warmup=1, **FAST)
    row = measure_cell(cfg, "resnet", 1, name)
    assert row.status == "error" and row.latency_ms_median is None
    assert "freezing did not take effect:" in row.error and "parameters stayed inputs of the compiled graphs" in row.error
    assert row.params_folded == 0 and row.params_unfolded > 0


def test_channels_last_shows_in_the_convolutions_and_a_filled_cache_makes_a_later_compile_warm(tmp_path,
                                                                                             monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cell-cache"))  # empty: the cell's first compile
    name = "default+channels-last"
    cfg = BenchConfig(models=("resnet",), configurations=("eager", name), iterations=4, warmup=1, **FAST)
    row = measure_cell(cfg, "resnet", 1, name)
    assert row.status == "ok", row.error
    assert row.convs_seen > 0 and row.convs_channels_last == row.convs_seen
    assert row.fx_cache_misses >= 1 and row.fx_cache_hits == 0  # compile_s was a cold compile
    assert row.graph_breaks == 0 and row.graph_count == 1  # one compile counted, not two
    # a later round compiles once, with the cache the first filled: warm (every graph a cache hit; how
    # much cheaper it is depends on the machine's load, which a test does not choose)
    again = measure_cell(cfg, "resnet", 1, name, repeat=1)
    assert again.status == "ok" and again.compile_s > 0
    assert again.fx_cache_hits >= 1 and again.fx_cache_misses == 0
    # the cell: round 0's cold compile, and the later rounds' compile as its warm compile
    record = cells([row, again])[0]
    assert (record["compile_s"], record["compile_warm_s"]) == (row.compile_s, again.compile_s)


def test_a_process_times_blocks_when_asked_and_keeps_its_first_failure(monkeypatch, tmp_path):
    cfg = BenchConfig(models=("resnet",), configurations=("eager",), iterations=6, warmup=1, blocks=3, profiler=False, **FAST)
    process = CellProcess(Task(cfg, Job(CELL, "resnet", 1, "eager", 2), tmp_path / "results.jsonl"))
    process.prepare()
    assert not process.failed and process.fields["samples_s"] == []  # prepared: warmed up, nothing timed
    assert process.fields["warmup_calls"] >= 1
    calls = []
    timed_call = process.call
    process.call = lambda: calls.append(1) or timed_call()
    process.time_block()  # after another worker's turn: an untimed call first
    process.time_block(after_switch=False)  # right after its own block: none
    lengths = process.fields["block_lengths"]
    assert len(lengths) == 2 and min(lengths) >= 2  # ceil(6 / 3)
    assert len(calls) == sum(lengths) + 1
    good = list(process.fields["samples_s"])

    def broken():
        raise RuntimeError("the model broke in block 3")

    process.call = broken
    process.time_block()
    process.time_block()  # after a failure a process times nothing more
    row = process.finish()
    assert row.status == "error" and row.error.startswith("RuntimeError: the model broke in block 3")
    assert row.samples_s == good and sum(row.block_lengths) == len(good) and len(row.block_lengths) == 2
    assert row.latency_ms_median is None and row.repeat == 2  # no numbers from a failed process


def test_autocast_keeps_float32_weights_and_computes_in_the_autocast_dtype_where_native():
    from bench_utils.config.configurations import configuration

    name = "eager+bf16-autocast"
    cfg = BenchConfig(models=("resnet",), configurations=("eager", name), iterations=2, **FAST)
    import bench_utils.measure.cell as measure

    seen = {}
    real_load = measure.load_model

    def spy(spec, size, weights, device, dtype):
        loaded = real_load(spec, size, weights, device, dtype)
        seen["weights_dtype"] = next(loaded.model.parameters()).dtype
        return loaded

    measure.load_model = spy
    try:
        with precision_context(configuration(name), "cpu"):
            assert torch.get_autocast_dtype("cpu") == torch.bfloat16 and torch.is_autocast_enabled("cpu")
        row = measure_cell(cfg, "resnet", 1, name)
    finally:
        measure.load_model = real_load
    if not cpu_native("bfloat16"):  # emulated it would be slower: not measured, said so
        assert row.status == "unsupported" and row.error.startswith("this CPU has no native bfloat16 (")
        assert "weights_dtype" not in seen  # refused before loading the model
        return
    assert row.status == "ok" and seen["weights_dtype"] == torch.float32 and row.accuracy_reference == "task"
    assert row.matmuls_in_autocast_dtype > 0  # the matrix multiplies ran in bfloat16, read back from the profiler


def test_no_minimum_time_still_warms_up_and_times_its_calls():
    # min_time_s 0: blocks of `iterations` calls only; warm-up windows keep their floor (schedule.MIN_WINDOW_S)
    cfg = BenchConfig(models=("resnet",), configurations=("eager",), iterations=4, warmup=1, blocks=2, profiler=False, size="tiny",
                      device="cpu", weights="random", min_time_s=0.0, max_warmup_s=0.5)
    row = measure_cell(cfg, "resnet", 1, "eager")
    assert row.status == "ok", row.error
    assert row.block_lengths == [2, 2] and len(row.samples_s) == 4 and row.warmup_calls >= 1


def test_a_rows_environment_names_no_host_and_no_local_path():
    """Rows are published beside the page: the host is a pseudonym (hosts of a cluster stay apart), and
    no value is a path of this machine (the Python executable's was)."""
    import json
    import socket
    import sys

    from bench_utils.measure.environment import collect, host_id

    env = collect("cpu")
    assert env["hostname"] == host_id() != socket.gethostname() and host_id("a") != host_id("b")
    assert env["hostname"].startswith("host-") and len(env["hostname"]) == 13
    text = json.dumps(env)
    assert socket.gethostname() not in text and sys.prefix not in text and sys.executable not in text


def test_an_own_folders_rows_name_it_by_its_name_only(tmp_path):
    from bench_utils.config.registry import get_spec, own_spec
    from bench_utils.results.rows import cell_fields
    from transformers import AutoConfig, AutoImageProcessor

    from bench_utils.config.bench_config import BenchConfig

    folder = tmp_path / "models" / "my-vit"
    shipped = get_spec("vit").config_dir("tiny")
    AutoConfig.from_pretrained(shipped).save_pretrained(folder)
    AutoImageProcessor.from_pretrained(shipped).save_pretrained(folder)
    cfg = BenchConfig(models=("mine",), checkpoints=(("mine", str(folder), ""),))
    assert own_spec("mine", str(folder)).published == "my-vit" and get_spec("vit").published == get_spec("vit").checkpoint
    assert cell_fields(cfg, "mine", 1, "eager", "cpu")["checkpoint"] == "my-vit"


def _process(tmp_path, mode="eager", **settings) -> CellProcess:
    cfg = BenchConfig(models=("vit",), configurations=("eager", "default"), iterations=2, **(FAST | settings))
    return CellProcess(Task(cfg, Job(CELL, "vit", 1, mode, 0), tmp_path / "results.jsonl"))


def test_after_an_oom_memory_is_recovered_outside_the_except_block(monkeypatch, tmp_path):
    # inside the except block the traceback still holds the failed call's tensors: releasing the CUDA
    # cache there frees nothing; the failed step's objects must be gone when the cache is released
    import sys
    import weakref

    import bench_utils.measure.cell as measure

    class Activations:
        pass

    held, seen = [], []

    def failing_step():
        activations = Activations()
        held.append(weakref.ref(activations))
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(device_memory, "release_cuda_memory", lambda: seen.append((held[0]() is None, sys.exc_info()[0])))
    process = _process(tmp_path)
    process.device = "cuda"  # the rule is CUDA's; nothing here touches a GPU
    process._guarded(failing_step)
    assert process.failure[0] == "oom" and seen == [(True, None)]
    monkeypatch.setattr(measure.environment, "collect", lambda device: {})
    row = measure.measured_row(dict, {}, "cuda", lambda fields: failing_step())  # a study's process: the same rule
    assert row["status"] == "oom" and seen[-1] == (True, None) and len(seen) == 2


def test_a_block_that_hands_the_turn_over_gives_the_cuda_cache_back_after_its_calls(monkeypatch, tmp_path):
    import bench_utils.measure.cell as measure

    events = []
    monkeypatch.setattr(measure, "time_calls", lambda fn, device, calls, seconds: events.append("timed") or [1e-3])
    monkeypatch.setattr(device_memory, "release_cuda_memory", lambda: events.append("cache given back"))
    process = _process(tmp_path)
    process.call, process.device = (lambda: events.append("untimed call")), "cuda"
    process.time_block(after_switch=True, hand_over=False)  # ABBA's first of a pair: the worker goes on
    process.time_block(after_switch=False, hand_over=True)  # the next turn is another worker's
    assert events == ["untimed call", "timed", "timed", "cache given back"]
    process.device = "cpu"  # nothing to give back on a CPU
    process.time_block(after_switch=False, hand_over=True)
    assert events[-1] == "timed"


def test_eager_in_process_takes_turns_with_the_configuration_abba_with_an_untimed_call_at_each_switch(
        monkeypatch, tmp_path):
    """eager_in_process on a stand-in process: eager first in even blocks, second in odd ones; an untimed
    call whenever the other callable (or another worker) ran last; each side's samples and blocks apart."""
    import bench_utils.measure.cell as measure

    events = []

    def timed(fn, device, calls, seconds):
        fn()
        return [2e-3 if events[-1] == "eager" else 1e-3] * 3

    monkeypatch.setattr(measure, "time_calls", timed)
    process = _process(tmp_path, "default", eager_in_process=True)
    process.call, process.eager_call = (lambda: events.append("compiled")), (lambda: events.append("eager"))
    process.time_block(after_switch=True)  # block 0: eager, then the configuration
    process.time_block(after_switch=False)  # block 1, right after its own: the configuration (warm), then eager
    process.time_block(after_switch=True)  # block 2, after another worker's turn
    untimed_then_timed = ["eager", "eager", "compiled", "compiled"]
    assert events == [*untimed_then_timed, "compiled", "eager", "eager", *untimed_then_timed]
    fields = process.fields
    assert fields["block_lengths"] == fields["eager_block_lengths"] == [3, 3, 3]
    assert fields["samples_s"] == [1e-3] * 9 and fields["eager_samples_s"] == [2e-3] * 9


def test_eager_in_process_times_eager_float32_on_the_configurations_own_model(tmp_path):
    """A real tiny compiled process: eager's calls beside it run the same module uncompiled, in float32
    (an autocast configuration's eager calls turn autocast off), and its row carries their blocks."""
    cfg = BenchConfig(models=("resnet",), configurations=("eager", "default"), iterations=4, warmup=1, blocks=2,
                      eager_in_process=True, profiler=False, **FAST)
    row = measure_cell(cfg, "resnet", 1, "default", results_path=tmp_path / "results.jsonl")
    assert row.status == "ok", row.error
    assert len(row.eager_block_lengths) == len(row.block_lengths) == 2
    assert sum(row.eager_block_lengths) == len(row.eager_samples_s) >= 4
    assert measure_cell(cfg, "resnet", 1, "eager", results_path=tmp_path / "results.jsonl").eager_samples_s == []
    calls = []
    model = torch.nn.Linear(2, 2)
    model.register_forward_hook(lambda module, args, out: calls.append(out.dtype))
    from bench_utils.config.configurations import configuration
    from bench_utils.measure.cell import eager_beside

    with torch.autocast("cpu", dtype=torch.bfloat16):
        eager_beside(model, {"input": torch.ones(1, 2)}, configuration("default+bf16-autocast"), "cpu")()
        eager_beside(model, {"input": torch.ones(1, 2)}, configuration("default"), "cpu")()
    assert calls == [torch.float32, torch.bfloat16]  # turned off for the autocast configuration's eager only
    assert not configuration("default+channels-last").eager_beside and not configuration("eager").eager_beside


def test_two_machines_of_one_name_get_two_host_pseudonyms(tmp_path, monkeypatch):
    # both VMs of the page review were named "vm": the hostname alone gave them one pseudonym
    import socket

    from bench_utils.measure import environment

    monkeypatch.setattr(socket, "gethostname", lambda: "vm")
    ids = []
    for boot in ("boot-1", "boot-2"):
        (tmp_path / "boot_id").write_text(boot)
        monkeypatch.setattr(environment, "HOST_FACTS", (str(tmp_path / "none"), str(tmp_path / "boot_id")))
        ids.append(environment.host_id())
    assert ids[0] != ids[1] and all(i.startswith("host-") and len(i) == 13 for i in ids)
    assert environment.host_id() == ids[1]  # the same machine, the same pseudonym
