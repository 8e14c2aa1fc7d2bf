"""Run sweeps on a Ray cluster: each cell is a Ray task on a worker that has the profile's GPU type,
and each row comes back to this process, which writes it with the same ResultsWriter as a local run.

A task runs its cell exactly as the local runner does (runner.run_cell_subprocess: a process of its
own, timeout_s, a crashed cell becomes a row), then tags the row's env with the Ray node, worker and
GPU. A task whose worker or node dies is retried by Ray (max_retries); if it still fails, this process
writes a "crashed" row for the cell. Rows are written as tasks finish, so resume works as locally.
Ray is imported here only, and lazily: `pip install 'compile-bench[cluster]'`. No torch import.
"""

from __future__ import annotations

import dataclasses
import os
import re
import socket
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..config.bench_config import BenchConfig, ConfigError
from ..config.parameters_file import config_from_dict
from ..results.rows import BenchResult
from ..results.writer import ResultsWriter
from .runner import SweepSummary, cell_line, failure_row, default_results_path, pending_runs, run_cell_subprocess

ADDRESS_SPELLINGS = "auto, ray://HOST:PORT, HOST:PORT or local:N"


@dataclass(frozen=True)
class RayTarget:
    address: str | None  # for ray.init(address=...); None = start a Ray instance on this machine
    num_cpus: int | None = None  # local:N only: CPUs of that instance (cells at once, for CPU cells)


def parse_ray_address(spec: str) -> RayTarget:
    """`--ray` value -> where to connect; raises ConfigError naming --ray for any other spelling."""
    text = str(spec).strip()
    local = re.fullmatch(r"local:(\d+)", text)
    if local and int(local.group(1)) >= 1:
        return RayTarget(address=None, num_cpus=int(local.group(1)))
    if text == "auto" or (not local and re.fullmatch(r"(ray://)?[\w.\-]+:\d+", text)):
        return RayTarget(address=text)
    raise ConfigError(f"--ray: {spec!r} is not allowed; allowed: {ADDRESS_SPELLINGS} (N >= 1)")


def accelerator_type(label: str) -> str | None:
    """The Ray accelerator type a hardware label names ("A100 (nightly)" -> "A100"), else None.

    Ray gives every GPU node the resource "accelerator_type:<type>" (detected, e.g. A100, T4), and a
    task with that accelerator_type runs only on such nodes.
    """
    from ray.util.accelerators import accelerators  # the full table; the package exports a subset

    known = {value.upper(): value for name, value in vars(accelerators).items()
             if name.startswith("NVIDIA_") and isinstance(value, str) and value.isalnum()}
    for word in re.findall(r"[A-Za-z0-9]+", label):
        if word.upper() in known:
            return known[word.upper()]
    return None


def cpus_per_gpu(nodes: list[dict]) -> int:
    """The CPU share of one GPU on the leanest GPU node (its CPUs / its GPUs, at least 1), from
    ray.nodes(): a GPU cell compiles with Inductor's worker pool and, at batch 1, is host-bound; with
    one CPU each, eight cells on an 8-GPU node would compile and launch kernels on top of each other."""
    shares = [int(node["Resources"].get("CPU", 1) // node["Resources"]["GPU"]) for node in nodes
              if node.get("Alive", True) and node.get("Resources", {}).get("GPU", 0) > 0]
    return max(1, min(shares, default=1))


def task_options(cfg: BenchConfig, cluster_has_gpus: bool, cpus_per_cell: int = 1, gpu_cpus: int = 1) -> dict:
    """Ray resources for one cell of `cfg`: one GPU for a cuda profile (or auto on a cluster with
    GPUs), else none; CPUs: `cpus_per_cell`, and for a GPU cell at least `gpu_cpus` (its node's CPU
    share per GPU, cpus_per_gpu); the accelerator type the label names, if any."""
    gpu = cfg.device == "cuda" or (cfg.device == "auto" and cluster_has_gpus)
    options = {"num_gpus": 1 if gpu else 0, "num_cpus": max(cpus_per_cell, gpu_cpus) if gpu else cpus_per_cell}
    kind = accelerator_type(cfg.label)
    if kind:
        options["accelerator_type"] = kind
    return options


def run_cell_task(cfg_values: dict, cell: tuple, log_dir: str, env: dict) -> dict:
    """In a Ray worker: run one cell as the local runner does; the row as a dict, tagged with where."""
    import ray

    with _environ(env):  # the cell process inherits it (threads, caches, test faults); the worker is reused
        row = run_cell_subprocess(config_from_dict(cfg_values), tuple(cell), _writable_dir(Path(log_dir)))
    context = ray.get_runtime_context()
    where = {"hostname": socket.gethostname(), **row.env, "ray_node_id": context.get_node_id(),
             "ray_worker_pid": os.getpid(), "ray_gpu_ids": [str(i) for i in ray.get_gpu_ids()]}
    return dataclasses.asdict(dataclasses.replace(row, env=where))


@contextmanager
def _environ(extra: dict):
    saved = dict(os.environ)
    os.environ.update(extra)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _writable_dir(path: Path) -> Path:
    """The driver's log folder path on this node (the same folder on the driver's machine or a shared
    disk, else that path on the worker's own disk); a temp folder where it cannot be created."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        return path
    except OSError:
        return Path(tempfile.gettempdir()) / "compile-bench-logs" / path.parent.name


def _connect(ray, target: RayTarget) -> bool:
    """ray.init unless already connected; True when this call started the connection."""
    if ray.is_initialized():
        return False
    try:
        if target.address is None:
            ray.init(num_cpus=target.num_cpus, include_dashboard=False)
        else:
            ray.init(address=target.address)
    except ConnectionError as err:
        raise ConfigError(f"--ray {target.address}: no Ray cluster there ({err}); "
                          "start one with `ray start --head`") from None
    return True


def _check_feasible(ray, configs: list[BenchConfig], options: list[dict]) -> None:
    """Fail before anything runs when no node could take a profile's cells (they would wait forever)."""
    offered = ray.cluster_resources()
    for cfg, opts in zip(configs, options):
        wanted = [("GPU", opts["num_gpus"]), ("CPU", opts["num_cpus"])]
        if "accelerator_type" in opts:
            wanted.append((f"accelerator_type:{opts['accelerator_type']}", 0.001))
        for resource, amount in wanted:
            if amount and offered.get(resource, 0) < amount:
                have = ", ".join(f"{k}={v:g}" for k, v in sorted(offered.items()) if not k.startswith("node:"))
                raise ConfigError(f"profile {cfg.label!r}: no Ray node offers {resource} (cluster has: {have})")


def run_sweeps_on_ray(configs: list[BenchConfig], address: str = "auto", results_paths: list | None = None,
                      retry_failed: bool = False, progress: bool = True, cpus_per_cell: int = 1,
                      max_retries: int = 2, env: dict | None = None) -> list[SweepSummary]:
    """Measure the pending cells of every profile at once on Ray; one SweepSummary per profile.

    `env`: extra environment variables for the cell processes on the workers. A cell's OpenMP threads
    and Inductor compile workers are as many as the CPUs it was given (cpus_per_cell; a GPU cell at
    least its node's CPUs per GPU), so cells sharing a machine do not fight over its cores.
    """
    target = parse_ray_address(address)
    if type(cpus_per_cell) is not int or cpus_per_cell < 1:
        raise ConfigError(f"cpus_per_cell (--cpus-per-cell): {cpus_per_cell!r} is not allowed; "
                          "allowed: an integer >= 1")
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray: pip install 'compile-bench[cluster]'") from None
    results_paths = list(results_paths) if results_paths is not None else [None] * len(configs)
    if len(results_paths) != len(configs):
        raise ValueError(f"results_paths: {len(results_paths)} paths for {len(configs)} configs; "
                         "allowed: one per config")
    paths = [Path(p) if p else default_results_path(cfg) for cfg, p in zip(configs, results_paths)]
    started_here = _connect(ray, target)
    try:
        has_gpus = ray.cluster_resources().get("GPU", 0) > 0
        gpu_cpus = cpus_per_gpu(ray.nodes())
        options = [task_options(cfg, has_gpus, cpus_per_cell, gpu_cpus) for cfg in configs]
        _check_feasible(ray, configs, options)
        with ExitStack() as stack:
            writers = [stack.enter_context(ResultsWriter(path)) for path in paths]
            jobs, summaries = _submit(ray, configs, paths, options, retry_failed, max_retries, env or {})
            _collect(ray, jobs, configs, writers, summaries, max_retries, progress)
        return summaries
    finally:
        if started_here:
            ray.shutdown()


def _submit(ray, configs, paths, options, retry_failed, max_retries, env) -> tuple[dict, list]:
    """Every pending cell of every profile as a Ray task; pending cells of all profiles are read first,
    so a profile refused for its results file stops the run before any task starts."""
    todos = [pending_runs(cfg, path, retry_failed) for cfg, path in zip(configs, paths)]
    summaries = [SweepSummary(path, total=len(cfg.runs()), skipped=len(cfg.runs()) - len(todo))
                 for cfg, path, todo in zip(configs, paths, todos)]
    task = ray.remote(run_cell_task)
    jobs = {}
    for index, (cfg, path, opts, todo) in enumerate(zip(configs, paths, options, todos)):
        log_dir = str(path.resolve().parent / "logs")
        threads = str(opts["num_cpus"])
        cell_env = {"OMP_NUM_THREADS": threads, "TORCHINDUCTOR_COMPILE_THREADS": threads, **env}
        for cell in todo:
            ref = task.options(**opts, max_retries=max_retries, name=f"{cfg.slug()}:{'/'.join(map(str, cell))}")
            jobs[ref.remote(cfg.to_dict(), cell, log_dir, cell_env)] = (index, cell, time.perf_counter())
    return jobs, summaries


def _collect(ray, jobs: dict, configs, writers, summaries, max_retries: int, progress: bool) -> None:
    """Write each row the moment its task ends; a task that failed for good becomes a crashed row."""
    bar = _bar(len(jobs), progress)
    waiting = list(jobs)
    try:
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            index, cell, submitted = jobs[done[0]]
            try:
                row = BenchResult.from_dict(ray.get(done[0]))
            except ray.exceptions.RayError as err:
                first = next((line for line in str(err).splitlines() if line.strip()), "")[:500]
                error = f"Ray task failed after {max_retries} retries: {type(err).__name__}: {first}"
                row = failure_row(configs[index], cell, "crashed", error, time.perf_counter() - submitted)
            writers[index].append(row)
            statuses = summaries[index].statuses
            statuses[row.status] = statuses.get(row.status, 0) + 1
            if bar is not None:
                bar.update(1)
                bar.write(f"[{configs[index].label} @ {row.env.get('hostname', '?')}] {cell_line(row)}")
    except BaseException:  # Ctrl-C: stop the cells still running; the rows written stay, resume redoes the rest
        for ref in waiting:
            ray.cancel(ref, force=True)
        raise
    finally:
        if bar is not None:
            bar.close()


def _bar(total: int, enabled: bool):
    if not enabled or not total:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="cell", file=sys.stderr, dynamic_ncols=True)
