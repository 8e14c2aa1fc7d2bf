"""The Ray launcher: the sweep loop's units measured on a Ray cluster, several at once, each on a node
with the profile's GPU type. Rows come back to the loop in this process, which writes them as a local
run does (resume, --retry-failed and failure rows alike).

Each cell group gets an actor (`GroupActor`, placed with the profile's resources) that measures its
rounds exactly as the local launcher does (sweep/rounds.py), so a Ray run has the local run's design
(docs/ray.md); a study's jobs of one model run in an actor of their own. At most `capacity` actors
live at once: what the cluster's alive nodes can place for the profile, counted again while a call
waits (an idle actor holds its GPU or CPUs: when a node leaves, the least recently used idle one
ends). An actor whose process or node dies is restarted and its round retried (`max_retries`); then
the round's rows are "crashed". Ray is imported here only, and lazily: `pip install
'compile-bench[cluster]'`. No torch import.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
import socket
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from ...config.bench_config import BenchConfig, ConfigError
from ...measure.environment import host_id
from ..jobs import Round, failure_row, unit_group
from ..rounds import Sessions, measure_unit, run_round

ADDRESS_SPELLINGS = "auto, ray://HOST:PORT, HOST:PORT or local:N"
RAY_PROBE_TIMEOUT_S = 5.0  # seconds a --ray HOST:PORT gets to accept a connection before ray.init
RECOUNT_S = 5.0  # while no call ends, the cluster's room is counted again this often (a node may have left)
# An actor Ray has not placed (its resources held by another job) is said after PLACE_WARN_S and the run stops
# after PLACE_LIMIT_S, in one line: it waited silently for 240 s, then ended in a traceback
PLACE_WARN_S, PLACE_LIMIT_S = 30.0, 300.0
# A local instance's node gets 30 s to register (ray/_private/node.py, not a setting): on a loaded 2-core
# machine that passed, and the start is tried once more
LOCAL_START_TRIES = 2
# what a gRPC server (Ray's GCS and its client server) answers to an HTTP/2 preface: a SETTINGS frame
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
HTTP2_SETTINGS = 4  # the frame type, byte 3 of a frame's 9-byte header
# no dashboard; Ray's INFO lines and its raylets' log lines ("Task GroupActor.measure failed ... retried" for an
# actor killed at Ctrl-C) stay off the terminal: a worker's output is in its log, an actor's failure in its row
QUIET = {"include_dashboard": False, "logging_level": logging.WARNING, "log_to_driver": False}


MAX_LOCAL_CPUS = 4096  # local:N's CPUs at most: Ray was asked for 10^30 and ended in a 37-line traceback


@dataclass(frozen=True)
class RayTarget:
    address: str | None  # for ray.init(address=...); None = start a Ray instance on this machine
    num_cpus: int | None = None  # local:N only: CPUs of that instance (cells at once, for CPU cells)


def parse_ray_address(spec: str) -> RayTarget:
    """`--ray` value -> where to connect; raises ConfigError naming --ray for any other spelling."""
    text = str(spec).strip()
    local = re.fullmatch(r"local:(\d{1,7})", text)  # a local instance's CPUs: beyond a million, a typo
    if local and 1 <= int(local.group(1)) <= MAX_LOCAL_CPUS:
        return RayTarget(address=None, num_cpus=int(local.group(1)))
    if text == "auto" or (not text.startswith("local:") and re.fullmatch(r"(ray://)?[\w.\-]+:\d{1,5}", text)):
        return RayTarget(address=text)
    raise ConfigError(f"--ray: {str(spec)[:60]!r} is not allowed; allowed: {ADDRESS_SPELLINGS} "
                      f"(1 <= N <= {MAX_LOCAL_CPUS:,})")


def accelerator_type(label: str) -> str | None:
    """The Ray accelerator type a hardware label names ("A100 (nightly)" -> "A100"), else None.

    Ray gives every GPU node the resource "accelerator_type:<type>" (detected, e.g. A100, T4), and a
    task or actor with that accelerator_type runs only on such nodes.
    """
    from ray.util.accelerators import accelerators  # the full table; the package exports a subset

    known = {value.upper(): value for name, value in vars(accelerators).items()
             if name.startswith("NVIDIA_") and isinstance(value, str) and value.isalnum()}
    words = (word.upper() for word in re.findall(r"[A-Za-z0-9]+", label))
    return next((known[word] for word in words if word in known), None)


def cpus_per_gpu(nodes: list[dict]) -> int:
    """The CPU share of one GPU on the leanest GPU node (its CPUs / its GPUs, at least 1), from
    ray.nodes(): a GPU cell compiles with Inductor's worker pool and, at batch 1, is host-bound; with
    one CPU each, eight cells on an 8-GPU node would compile and launch kernels on top of each other."""
    shares = [int(node["Resources"].get("CPU", 1) // node["Resources"]["GPU"]) for node in nodes
              if node.get("Alive", True) and node.get("Resources", {}).get("GPU", 0) > 0]
    return max(1, min(shares, default=1))


def task_options(cfg: BenchConfig, cluster_has_gpus: bool, cpus_per_cell: int = 1, gpu_cpus: int = 1) -> dict:
    """Ray resources for one cell group of `cfg`: one GPU for a cuda profile (or auto on a cluster with
    GPUs), else none; CPUs: `cpus_per_cell`, and for a GPU cell at least `gpu_cpus` (its node's CPU
    share per GPU, cpus_per_gpu); the accelerator type the label names, if any."""
    gpu = cfg.device == "cuda" or (cfg.device == "auto" and cluster_has_gpus)
    options = {"num_gpus": 1 if gpu else 0, "num_cpus": max(cpus_per_cell, gpu_cpus) if gpu else cpus_per_cell}
    kind = accelerator_type(cfg.label)
    if kind:
        options["accelerator_type"] = kind
    return options


def capacity(nodes: list[dict], options: dict) -> int:
    """Cell groups the cluster can measure at once for a profile of `options`: per alive node that has
    its accelerator type, as many as its GPUs and CPUs hold (at least 1: Ray queues the rest)."""
    wanted = f"accelerator_type:{options['accelerator_type']}" if "accelerator_type" in options else None
    total = 0
    for node in nodes:
        resources = node.get("Resources", {})
        if not node.get("Alive", True) or (wanted and wanted not in resources):
            continue
        fits = [int(resources.get("CPU", 0) // options["num_cpus"])] if options["num_cpus"] else []
        if options["num_gpus"]:
            fits.append(int(resources.get("GPU", 0) // options["num_gpus"]))
        total += min(fits, default=0)
    return max(1, total)


def _writable_path(results_path: Path) -> Path:
    """The driver's results path on this node when its folder can be made here (the driver's machine, or a
    shared disk), else the same name under a temp folder: logs, traces and artifacts go beside it."""
    try:
        results_path.parent.mkdir(parents=True, exist_ok=True)
        return results_path
    except OSError:
        return Path(tempfile.gettempdir()) / "compile-bench-logs" / results_path.parent.name / results_path.name


class GroupActor:
    """In a Ray actor: one cell group's rounds (or one model's study jobs), measured as the local
    launcher measures them; its rows tagged with the node, worker and GPU that measured them."""

    def __init__(self, cfg: BenchConfig, results_path: str, round_runner=run_round):
        self.cfg, self.results_path = cfg, _writable_path(Path(results_path))
        # no spares (workers.Spares): an actor measures one group, whose next fresh round may never come, and
        # other actors on its node time blocks while its spares would import
        self.sessions, self.round_runner = Sessions(cfg, self.results_path, spares=False), round_runner

    def measure(self, unit, keep: bool) -> tuple[list, list]:
        """(the unit's rows, earlier rows given exit codes of workers that ended meanwhile)."""
        rows = measure_unit(self.cfg, unit, self.results_path, self.sessions, keep, self.round_runner)
        return self._where(rows), self._where(self.sessions.take_ended_rows())

    def close(self) -> list:
        return self._where(self.sessions.close_all())

    @staticmethod
    def _where(rows: list) -> list:
        import ray

        context = ray.get_runtime_context()
        where = {"hostname": host_id(), "ray_node_id": context.get_node_id(),
                 "ray_worker_pid": os.getpid(), "ray_gpu_ids": [str(i) for i in ray.get_gpu_ids()]}
        return [dataclasses.replace(row, env={**row.env, **where}) for row in rows]


class RayLauncher:
    """The loop's units as calls on group actors, up to `capacity` at once. `round_runner`: what an actor
    measures a round with (rounds.run_round; tests give a stand-in)."""

    def __init__(self, ray, cfg: BenchConfig, results_path: Path, options: dict, capacity: int,
                 env: dict, max_retries: int = 2, round_runner=run_round, nodes=None):
        threads = str(options["num_cpus"])  # a cell's OpenMP threads and Inductor compile workers
        env_vars = {"OMP_NUM_THREADS": threads, "TORCHINDUCTOR_COMPILE_THREADS": threads, **env}
        self.ray, self.cfg, self.results_path, self.capacity = ray, cfg, Path(results_path).resolve(), capacity
        self.actor_class = ray.remote(GroupActor).options(
            **options, max_restarts=max_retries, max_task_retries=max_retries,
            runtime_env={"env_vars": env_vars})
        self.round_runner, self.options, self.nodes = round_runner, options, nodes or ray.nodes
        self.actors: dict[tuple, object] = {}  # unit_group -> actor, least recently used first
        self.calls: dict = {}  # ObjectRef -> (unit, actor group, submitted at)
        self.placing: dict = {}  # actor group -> (its readiness ObjectRef, created at, the unit's name): not yet placed
        self.said_waiting = False
        self.ended: list = []

    def start(self, unit, keep: bool) -> None:
        group = unit_group(unit)
        actor = self.actors.pop(group, None)
        if actor is None:
            while len(self.actors) >= self.capacity:  # end the least recently used idle actor
                self._end(self._idle()[0])
            actor = self.actor_class.remote(self.cfg, str(self.results_path), self.round_runner)
            self.placing[group] = (actor.__ray_ready__.remote(), time.perf_counter(), unit.name)
        self.actors[group] = actor  # most recently used last
        self.calls[actor.measure.remote(unit, keep)] = (unit, group, time.perf_counter())

    def finished(self) -> list[tuple]:
        done = []
        while not done:
            done, _ = self.ray.wait(list(self.calls), num_returns=1, timeout=RECOUNT_S)
            if not done:
                self._fit(capacity(self.nodes(), self.options))
                self._check_placed()
        unit, group, submitted = self.calls.pop(done[0])
        try:
            rows, ended = self.ray.get(done[0])
            self.ended += ended
        except self.ray.exceptions.RayError as err:  # the actor died for good (retries spent)
            self.actors.pop(group, None)
            first = next((line for line in str(err).splitlines() if line.strip()), "")[:500]
            error = f"Ray actor lost after its retries: {type(err).__name__}: {first}"
            jobs = unit.jobs if isinstance(unit, Round) else [unit]
            rows = [failure_row(self.cfg, job, "crashed", error, time.perf_counter() - submitted) for job in jobs]
        return [(unit, rows)]

    def _check_placed(self) -> None:
        """Actors Ray has not placed yet: said once past PLACE_WARN_S, with the cluster's free resources;
        past PLACE_LIMIT_S the run stops in one line (ConfigError): a cluster whose CPUs another job
        holds would keep it waiting without end."""
        refs = [ref for ref, _, _ in self.placing.values()]
        placed = set(self.ray.wait(refs, num_returns=len(refs), timeout=0)[0]) if refs else set()
        self.placing = {group: entry for group, entry in self.placing.items() if entry[0] not in placed}
        if not self.placing:
            return
        _, since, name = min(self.placing.values(), key=lambda entry: entry[1])
        waited = time.perf_counter() - since
        if waited < PLACE_WARN_S or (self.said_waiting and waited < PLACE_LIMIT_S):
            return
        free, total = self.ray.available_resources(), self.ray.cluster_resources()
        room = ", ".join(f"{key} {free.get(key, 0):g} of {total[key]:g}" for key in ("CPU", "GPU") if total.get(key))
        wanted = ", ".join(f"{resource} {self.options[key]:g}" for key, resource in (("num_cpus", "CPU"),
                                                                                      ("num_gpus", "GPU"))
                           if self.options.get(key))
        what = (f"Ray has not placed profile {self.cfg.label!r}: {name} (it needs {wanted}) for {waited:.0f} s: the "
                f"cluster has {room or 'nothing'} free (another job may hold them)")
        if waited >= PLACE_LIMIT_S:
            raise ConfigError(f"--ray: {what}; free them or add a node, then run again (resume keeps what was "
                              "measured)")
        warnings.warn(f"{what}; waiting up to {PLACE_LIMIT_S:g} s")
        self.said_waiting = True

    def take_ended_rows(self) -> list:
        ended, self.ended = self.ended, []
        return ended

    def _fit(self, room: int) -> None:
        """The cluster has room for `room` actors now: idle ones beyond it end, least recently used first
        (an actor waiting to be placed, or restarted after its node left, then gets their resources)."""
        self.capacity = room
        for group in self._idle()[:max(0, len(self.actors) - room)]:
            self._end(group)

    def _idle(self) -> list[tuple]:
        """The groups whose actor no call is waiting on, least recently used first."""
        busy = {group for _, group, _ in self.calls.values()}
        return [group for group in self.actors if group not in busy]

    def _end(self, group: tuple) -> None:
        self.placing.pop(group, None)
        actor = self.actors.pop(group)
        try:
            self.ended += self.ray.get(actor.close.remote())
        except self.ray.exceptions.RayError:
            pass  # a dead actor's workers are gone with it
        self.ray.kill(actor)

    def close(self) -> list:
        """End every actor. One with a call in flight (Ctrl-C mid-round) is killed, its workers with it: Ray
        cannot force-cancel an actor's call (`ray.cancel(force=True)` raised ValueError, a 69-line
        traceback in place of the interrupt); the rows written stay, resume measures the rest."""
        busy = {group for _, group, _ in self.calls.values()}
        for ref in self.calls:  # not retried once its actor is killed (Ray would say it retries it)
            with contextlib.suppress(Exception):
                self.ray.cancel(ref)
        self.calls.clear()
        for group in busy:
            self.placing.pop(group, None)
            actor = self.actors.pop(group, None)
            if actor is not None:
                self.ray.kill(actor)
        for group in list(self.actors):
            self._end(group)
        return self.take_ended_rows()


def probe_ray_address(target: RayTarget, timeout_s: float = RAY_PROBE_TIMEOUT_S) -> None:
    """A TCP connect to HOST:PORT and an HTTP/2 preface, with a timeout: ray.init itself retries a wrong
    address for minutes, and one where something else listens (a web server, a database) without end
    (killed at 330 s). Ray's GCS and client server speak gRPC, which answers with a SETTINGS frame."""
    if target.address is None or target.address == "auto":
        return
    host, port = target.address.removeprefix("ray://").rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s) as connection:
            answer = _http2_answer(connection)
    except OSError as err:
        reason = "no answer" if isinstance(err, TimeoutError) else (err.strerror or type(err).__name__)
        raise ConfigError(f"--ray {target.address}: no Ray cluster there ({reason} within {timeout_s:g} s); "
                          "start one with `ray start --head`, or check the address") from None
    if len(answer) < 4 or answer[3] != HTTP2_SETTINGS:
        raise ConfigError(f"--ray {target.address}: something listens there, but not a Ray cluster (it does not "
                          f"answer as Ray's gRPC server does within {timeout_s:g} s); check the address and port "
                          "(`ray status` on the head prints it)")


def _http2_answer(connection: socket.socket) -> bytes:
    """The first bytes a server answers an HTTP/2 preface with (b"" when it closes or stays silent)."""
    connection.sendall(HTTP2_PREFACE)
    answer = b""
    with contextlib.suppress(TimeoutError, ConnectionError):
        while len(answer) < 9:
            chunk = connection.recv(9 - len(answer))
            if not chunk:
                break
            answer += chunk
    return answer


def _connect(ray, target: RayTarget) -> bool:
    """ray.init unless already connected; True when this call started the connection."""
    if ray.is_initialized():
        return False
    probe_ray_address(target)
    try:
        if target.address is None:
            _start_local(ray, target.num_cpus)
        else:
            ray.init(address=target.address, **QUIET)
    except ConnectionError as err:
        raise ConfigError(f"--ray {target.address}: no Ray cluster there ({err}); "
                          "start one with `ray start --head`") from None
    return True


def _start_local(ray, num_cpus: int) -> None:
    """A Ray instance of this run's own on this machine (address "local": without it ray.init joined a
    cluster another command had started here, and refused num_cpus in a traceback), tried once more when
    its node does not register within Ray's 30 s, saying so; a second failure is one line."""
    for attempt in range(1, LOCAL_START_TRIES + 1):
        try:
            ray.init(address="local", num_cpus=num_cpus, **QUIET)
            return
        except Exception as err:  # noqa: BLE001 -- Ray raises a bare Exception for a node that did not start
            if "timed out during startup" not in str(err):
                raise
            ray.shutdown()
            if attempt == LOCAL_START_TRIES:
                raise ConfigError(f"--ray local:{num_cpus}: Ray's local instance did not start, {attempt} times "
                                  "(its node did not register within Ray's 30 s: a loaded machine?); try again "
                                  "when the machine is quieter") from None
            warnings.warn("Ray's local instance did not start within Ray's 30 s (a loaded machine?): starting it "
                          "once more")


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


@contextlib.contextmanager
def ray_launchers(configs: list[BenchConfig], address: str, results_paths: list[Path], cpus_per_cell: int = 1,
                  max_retries: int = 2, env: dict | None = None, round_runner=None):
    """A Ray launcher per profile (`results_paths[i]` for `configs[i]`), connected to the cluster at
    `address` ("local:N" starts a local one) and checked to fit it before anything runs; the
    connection this call started ends on exit. The loop runs them (loop.run_sweeps)."""
    target = parse_ray_address(address)
    if type(cpus_per_cell) is not int or cpus_per_cell < 1:
        raise ConfigError(f"cpus_per_cell (--cpus-per-cell): {cpus_per_cell!r} is not allowed; "
                          "allowed: an integer >= 1")
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray: pip install 'compile-bench[cluster]'") from None
    started_here = _connect(ray, target)
    try:
        nodes = ray.nodes()
        has_gpus = ray.cluster_resources().get("GPU", 0) > 0
        options = [task_options(cfg, has_gpus, cpus_per_cell, cpus_per_gpu(nodes)) for cfg in configs]
        _check_feasible(ray, configs, options)
        yield [RayLauncher(ray, cfg, Path(path), opts, capacity(nodes, opts), env or {}, max_retries,
                           round_runner or run_round)
               for cfg, path, opts in zip(configs, results_paths, options, strict=True)]
    finally:
        if started_here:
            ray.shutdown()
