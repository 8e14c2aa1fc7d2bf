"""Run sweeps on a Ray cluster: each round (a cell's modes measured together) is a Ray task on a
worker that has the profile's GPU type, and its rows come back to this process, which writes them with
the same ResultsWriter as a local run; then each profile's studies, as one task.

A task runs its round as the local runner does (runner.run_round: a worker process per mode,
timeout_s, a crashed worker becomes a row), in workers of its own (a task may land on any node, so
`rounds_per_process` does not apply: every round is a fresh pair), then tags the rows' env with the
Ray node, worker and GPU. A cell's later rounds start only after its round 0 ended, so they compile
with the cache it filled. A task whose worker or node dies is retried by Ray (max_retries); if it
still fails, this process writes "crashed" rows for the round. Rows are written as tasks finish, so resume works as
locally. The first `repeats` rounds run on Ray; extra rounds for precision are a local run's.
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
from .jobs import Round, done_keys, first_rounds, read_cell_rows, round_pending
from .runner import SweepSummary, cell_line, default_results_path, failure_row, run_round, run_study

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


def run_round_task(cfg_values: dict, round_: Round, results_dir: str, env: dict) -> list[dict]:
    """In a Ray worker: run one round as the local runner does; its rows as dicts, tagged with where."""
    import ray

    with _environ(env):  # the workers get it (threads, caches, test faults); the Ray worker is reused
        rows = run_round(config_from_dict(cfg_values), round_, _writable_dir(Path(results_dir)))
    context = ray.get_runtime_context()
    where = {"hostname": socket.gethostname(), "ray_node_id": context.get_node_id(),
             "ray_worker_pid": os.getpid(), "ray_gpu_ids": [str(i) for i in ray.get_gpu_ids()]}
    return [dataclasses.asdict(dataclasses.replace(row, env={**row.env, **where})) for row in rows]


def run_studies_task(cfg_values: dict, jobs: list, results_path: str, env: dict) -> list[tuple[str, dict]]:
    """In a Ray worker: a profile's pending study processes in turn (whole-model compile before the
    cache artifacts it leaves); (kind, row as a dict) each."""
    with _environ(env):
        cfg = config_from_dict(cfg_values)
        return [(job.kind, dataclasses.asdict(run_study(cfg, job, Path(results_path)))) for job in jobs]


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


RAY_PROBE_TIMEOUT_S = 5.0  # seconds a --ray HOST:PORT gets to accept a connection before ray.init


def probe_ray_address(target: RayTarget, timeout_s: float = RAY_PROBE_TIMEOUT_S) -> None:
    """One TCP connect to HOST:PORT with a timeout: ray.init itself retries a wrong address for minutes."""
    import socket

    if target.address is None or target.address == "auto":
        return
    host, port = target.address.removeprefix("ray://").rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return
    except OSError as err:
        reason = "no answer" if isinstance(err, TimeoutError) else (err.strerror or type(err).__name__)
        raise ConfigError(f"--ray {target.address}: no Ray cluster there ({reason} within {timeout_s:g} s); "
                          "start one with `ray start --head`, or check the address") from None


def _connect(ray, target: RayTarget) -> bool:
    """ray.init unless already connected; True when this call started the connection."""
    if ray.is_initialized():
        return False
    probe_ray_address(target)
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
            submit, summaries = _submit(ray, configs, paths, options, retry_failed, max_retries, env or {})
            _collect(ray, submit, configs, writers, summaries, max_retries, progress)
        return summaries + _run_studies(ray, configs, paths, options, env or {})
    finally:
        if started_here:
            ray.shutdown()


def _submit(ray, configs, paths, options, retry_failed, max_retries, env) -> tuple[dict, list]:
    """Round 0 of every pending cell of every profile as a Ray task (pending rounds of all profiles are
    read first, so a profile refused for its results file stops the run before any task starts); a
    cell's later rounds wait for its round 0 (`_collect` submits them): they compile warm with the
    cache it filled, on any node that shares it."""
    todos = []
    for cfg, path in zip(configs, paths):
        done = done_keys(read_cell_rows(cfg, path), retry_failed)
        todos.append([round_ for round_ in first_rounds(cfg) if round_pending(cfg, round_, done)])
    summaries = [SweepSummary(path, total=len(first_rounds(cfg)), skipped=len(first_rounds(cfg)) - len(todo))
                 for cfg, path, todo in zip(configs, paths, todos)]
    submit = _Submitter(ray, configs, paths, options, max_retries, env)
    for index, todo in enumerate(todos):
        firsts: dict = {}
        for round_ in sorted(todo, key=lambda r: r.repeat):  # each cell's earliest pending round
            firsts.setdefault(round_.group, round_)
        for round_ in todo:
            if firsts[round_.group] is round_:
                submit(index, round_)
            else:
                submit.later.setdefault((index, round_.group), []).append(round_)
    return submit, summaries


class _Submitter:
    """Submits rounds as Ray tasks and remembers what each task is; holds the rounds that wait."""

    def __init__(self, ray, configs, paths, options, max_retries, env):
        self.task = ray.remote(run_round_task)
        self.configs, self.paths, self.options, self.max_retries, self.env = configs, paths, options, max_retries, env
        self.jobs: dict = {}  # task ref -> (profile index, round, submitted at)
        self.later: dict = {}  # (profile index, cell group) -> rounds waiting for that group's first

    def __call__(self, index: int, round_: Round) -> None:
        cfg, opts = self.configs[index], self.options[index]
        threads = str(opts["num_cpus"])
        round_env = {"OMP_NUM_THREADS": threads, "TORCHINDUCTOR_COMPILE_THREADS": threads, **self.env}
        ref = self.task.options(**opts, max_retries=self.max_retries, name=f"{cfg.slug()}:{round_.name}")
        results_dir = str(self.paths[index].resolve().parent)
        self.jobs[ref.remote(cfg.to_dict(), round_, results_dir, round_env)] = (index, round_, time.perf_counter())

    def release(self, index: int, round_: Round) -> None:
        """A round ended: the rounds of its cell that waited for it may start."""
        for waiting in self.later.pop((index, round_.group), []):
            self(index, waiting)


def _collect(ray, submit: _Submitter, configs, writers, summaries, max_retries: int, progress: bool) -> None:
    """Write each round's rows the moment its task ends; a task that failed for good becomes crashed rows."""
    bar = _bar(len(submit.jobs) + sum(map(len, submit.later.values())), progress)
    waiting = list(submit.jobs)
    try:
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            index, round_, submitted = submit.jobs.pop(done[0])
            try:
                rows = [BenchResult.from_dict(values) for values in ray.get(done[0])]
            except ray.exceptions.RayError as err:
                first = next((line for line in str(err).splitlines() if line.strip()), "")[:500]
                error = f"Ray task failed after {max_retries} retries: {type(err).__name__}: {first}"
                rows = [failure_row(configs[index], job, "crashed", error, time.perf_counter() - submitted)
                        for job in round_.jobs]
            submit.release(index, round_)
            waiting = list(submit.jobs)
            for row in rows:
                writers[index].append(row)
                if bar is not None:
                    bar.write(f"[{configs[index].label} @ {row.env.get('hostname', '?')}] {cell_line(row)}")
            summaries[index].count(rows)
            if bar is not None:
                bar.update(1)
    except BaseException:  # Ctrl-C: stop the rounds still running; the rows written stay, resume redoes the rest
        for ref in waiting:
            ray.cancel(ref, force=True)
        raise
    finally:
        if bar is not None:
            bar.close()


def _run_studies(ray, configs, paths, options, env) -> list[SweepSummary]:
    """Each profile's pending studies as one Ray task (they run in turn: one leaves what the next loads)."""
    from ..results.writer import ResultsWriter as Writer
    from .jobs import STUDY_KINDS, pending_study_jobs, study_jobs

    task = ray.remote(run_studies_task)
    summaries = []
    for cfg, path, opts in zip(configs, paths, options):
        todo = pending_study_jobs(cfg, path)
        if not study_jobs(cfg):
            continue
        summary = SweepSummary(path, total=len(study_jobs(cfg)), skipped=len(study_jobs(cfg)) - len(todo))
        if todo:
            for kind, values in ray.get(task.options(**opts).remote(cfg.to_dict(), todo, str(path.resolve()), env)):
                row = STUDY_KINDS[kind][0].from_dict(values)
                with Writer(STUDY_KINDS[kind][1](path)) as writer:
                    writer.append(row)
                summary.count([row])
        summaries.append(summary)
    return summaries


def _bar(total: int, enabled: bool):
    if not enabled or not total:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="round", file=sys.stderr, dynamic_ncols=True)
