"""A CPU worker as a template (bench_utils/measure/forked.py): it compiles once, in a thread of its own,
and each round is measured by a process forked from it, which compiles nothing; a forked process that
dies takes its template with it, so the runner reads the death as before."""

import os
import re
import signal
from pathlib import Path

import pytest

from bench_utils.config.bench_config import BenchConfig
from bench_utils.measure.injected_failures import ENV_VAR as FAULT
from bench_utils.measure.forked import RELEASE, forks
from bench_utils.measure.task import CELL, Block, Job, NextRound, Task
from bench_utils.sweep.workers import Worker, WorkerLost
from conftest import KILLED

BLOCK = Block(after_switch=True, hand_over=False)


def task(tmp_path, configuration: str = "default", fault: str = "") -> Task:
    cfg = BenchConfig(models=("vit",), configurations=("eager", configuration), iterations=4, min_time_s=0.1,
                      max_warmup_s=1.0, blocks=2, profiler=False)
    environ = {**os.environ, FAULT: fault} if fault else dict(os.environ)
    return Task(cfg, Job(CELL, "vit", 1, configuration), tmp_path / "results.jsonl", environ)


def children(pid: int) -> list[int]:
    """The processes `pid` forked for its rounds (its threads' children lists), the copy of the worker it
    forked before building anything (measure/startup.py's Zygote, its first child) left out."""
    found = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        found += [int(child) for child in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
    started = lambda child: int(Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[19])  # noqa: E731
    return sorted(found, key=started)[1:]


def measure(worker: Worker) -> object:
    for _ in range(2):
        assert worker.ask("block", BLOCK) == ("timed", None)
    kind, row = worker.ask("finish")
    assert kind == "row" and row.status == "ok", row
    return row


def test_only_a_cpu_worker_forks_its_rounds():
    assert forks("cpu") and not forks("cuda")


def test_each_round_is_a_process_forked_from_the_prepared_one_and_compiles_nothing(tmp_path):
    worker = Worker(tmp_path / "logs" / "w.log", timeout_s=300.0)
    try:
        assert worker.ask("cell", task(tmp_path)) == ("ready", None)
        first_child = children(worker.process.pid)
        first = measure(worker)
        worker.send(RELEASE)
        assert worker.ask("round", NextRound(1)) == ("ready", None)
        second_child = children(worker.process.pid)
        second = measure(worker)
    finally:
        worker.close()
    # two rounds, two processes, neither of them the template
    assert len(first_child) == 1 and len(second_child) == 1 and first_child != second_child
    # round 0 carries the template's compile; round 1 compiled nothing (dynamo's frame count after the
    # compiling call is where the fork found it: BenchResult.recompiles) and warmed up on its own
    assert first.compile_s > 0 and first.recompiles == 0 and (first.process_round, first.template_round) == (0, 0)
    # a new process's start, measured once (in a copy of the worker from before it built anything) before
    # its first kept round, whose row carries it and counts its time: the model's build, then the compile
    # from the cell's cache (warm) and the first call
    assert first.compile_warm_s is None and 0 < second.compile_warm_s < second.first_answer_s < second.duration_s
    assert second.start_fx_cache_hits >= 1 and second.start_fx_cache_misses == 0
    assert second.compile_s is None and second.recompiles == 0 and second.graph_count >= 1
    assert (second.process_round, second.template_round) == (1, 0) and second.warmup_calls >= 1
    # the peak memory of a forked round includes the template's compile (a fork's own count starts at the fork)
    assert second.peak_mem_mb >= first.peak_mem_mb * 0.9
    assert worker.exit_code == 0


def test_a_forked_process_killed_mid_round_is_the_workers_death(tmp_path):
    worker = Worker(tmp_path / "w.log", timeout_s=300.0)
    try:
        assert worker.ask("cell", task(tmp_path, "eager+twin")) == ("ready", None)
        (child,) = children(worker.process.pid)
        os.kill(child, signal.SIGKILL)
        with pytest.raises(WorkerLost) as lost:
            worker.ask("block", BLOCK)
        assert lost.value.status == "crashed"
        assert re.fullmatch(KILLED.format("SIGKILL"), lost.value.error)
    finally:
        worker.close()
    assert worker.exit_code == -signal.SIGKILL


def test_a_forked_process_that_dies_after_its_row_keeps_the_row_and_gives_its_status(tmp_path):
    # segfault-at-exit: the round's process sends its row, then dies as it ends (released by the runner)
    worker = Worker(tmp_path / "w.log", timeout_s=300.0)
    try:
        assert worker.ask("cell", task(tmp_path, "eager+twin", "vit/1/eager+twin=segfault-at-exit")) == ("ready", None)
        row = measure(worker)
        worker.send(RELEASE)
        worker.process.join(30)
    finally:
        worker.close()
    assert row.status == "ok" and worker.exit_code == -signal.SIGSEGV


FAULTS_OF_A_FORKS_COLLECTION = """
import gc, os, resource, sys
import torch, transformers  # the template's heap: what a worker's holds before its model
from bench_utils.measure.forked import freeze_heap

def collect_in_a_fork() -> int:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        gc.collect()
        os.write(write, str(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    return int(os.read(read, 64))

apart = collect_in_a_fork()
freeze_heap()
print(apart, collect_in_a_fork())
"""


def test_a_forks_collection_walks_only_what_the_fork_made_not_the_templates_heap():
    # forked.freeze_heap before each fork: a full collection in the child writes every tracked object's
    # reference count, copying the template's heap page by page inside a timed block (520-920 faults a
    # call for tiny ResNet-50 on the Zen 2 EPYC, 2026-12-01); with the heap frozen it walks the child's own
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", FAULTS_OF_A_FORKS_COLLECTION], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parents[1])
    apart, frozen = map(int, done.stdout.split())
    assert apart > 1000 and frozen < apart / 10, (apart, frozen)


COMPILES_AFTER_A_COMPUTE_THREAD = """
import torch
from bench_utils.measure.forked import Compute

def double_gelu(x):
    return torch.nn.functional.gelu(x @ x.T) * 2

x = torch.randn(8, 8)
Compute().run(lambda: torch.compile(double_gelu)(x))  # the template's compile, in a thread that ends
torch._dynamo.reset()
torch.compile(double_gelu)(x)  # a warm compile on the main thread, as a fork's is
print("compiled twice")
"""


def test_a_compile_after_a_compute_threads_compile_does_not_crash(monkeypatch):
    # torch 2.11 in a CUDA build without a GPU: tracing's fake CUDA guard belonged to the thread that made
    # it, and a compile after that thread ended segfaulted (every fork's warm compile, 2026-12-02);
    # forked.own_fake_cuda_guard gives it to the main thread. torch 2.14 does not crash either way: the
    # second half checks that Compute hands it over, on the main thread, before anything runs
    import subprocess
    import sys
    import threading

    import torch

    from bench_utils.measure.forked import Compute

    done = subprocess.run([sys.executable, "-c", COMPILES_AFTER_A_COMPUTE_THREAD], capture_output=True,
                          text=True, timeout=300, cwd=Path(__file__).resolve().parents[1],
                          env={**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": "1"})
    assert done.returncode == 0 and "compiled twice" in done.stdout, (done.returncode, done.stderr[-2000:])
    calls = []
    monkeypatch.setattr(torch._C, "_ensureCUDADeviceGuardSet", lambda: calls.append(threading.current_thread()),
                        raising=False)
    compute = Compute()
    assert calls == [threading.main_thread()]
    assert compute.run(lambda: len(calls)) == 1
