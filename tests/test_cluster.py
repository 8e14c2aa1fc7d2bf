"""The Ray launcher (bench_utils/sweep/launchers/ray.py) under the one sweep loop: with a stand-in ray,
and on a two-node local Ray cluster, CPU only.

Each node stands in for a GPU machine through the resource Ray gives detected GPUs
("accelerator_type:A100" on the head node, "accelerator_type:T4" on the other), one CPU each.
Hostnames cannot tell two nodes on one machine apart, so rows are placed by env["ray_node_id"].
The cluster fixture lives in conftest.py; workers killed mid-cell: test_cluster_faults.py.
"""

import time
import types

import pytest
from ray.util import accelerators

from bench_utils.config.bench_config import ConfigError
from bench_utils.config.parameters_file import load_config
from bench_utils.measure.environment import host_id
from bench_utils.results.aggregate import to_dataframe
from bench_utils.results.rows import read_results
from bench_utils.sweep.launchers.ray import accelerator_type, cpus_per_gpu, parse_ray_address, task_options
from bench_utils.sweep.loop import run_sweep, run_sweeps_on_ray
from conftest import one_error_line, run_cli, tiny_params

FAULTS = "resnet/2/eager=oom;resnet/3/eager=sigkill"  # two failing cells in the T4 profile


# --- without a cluster -----------------------------------------------------------------------------

def test_ray_address_spellings():
    assert parse_ray_address("auto").address == "auto"
    assert parse_ray_address("ray://head.example:10001").address == "ray://head.example:10001"
    assert parse_ray_address("10.0.0.5:6379").address == "10.0.0.5:6379"
    local = parse_ray_address("local:3")
    assert local.address is None and local.num_cpus == 3
    for bad in ("local:0", "local", "ray://head", "head", "", "local:" + "9" * 30, "local:5000"):  # a huge N: one line
        with pytest.raises(ConfigError, match="--ray: .* is not allowed; allowed: auto, ray://HOST:PORT"):
            parse_ray_address(bad)


def test_labels_name_ray_accelerator_types():
    assert accelerator_type("A100") == accelerators.NVIDIA_A100 == "A100"
    assert accelerator_type("V100 (nightly)") == accelerators.NVIDIA_TESLA_V100
    assert accelerator_type("t4") == accelerators.NVIDIA_TESLA_T4
    assert accelerator_type("H100-80GB") == accelerators.NVIDIA_H100
    assert accelerator_type("L40S") == "L40S" and accelerator_type("L4") == "L4"
    assert accelerator_type("A10G") == "A10G"
    for label in ("CPU", "GPU nightly", "CPU bf16 channels_last", "A1000"):
        assert accelerator_type(label) is None


def test_task_options_ask_for_one_gpu_or_cpus_and_the_labelled_gpu_type(tmp_path):
    cpu = load_config(tiny_params(tmp_path, label="CPU"))
    assert task_options(cpu, cluster_has_gpus=True) == {"num_gpus": 0, "num_cpus": 1}
    cuda = load_config(tiny_params(tmp_path, label="A100 (nightly)", device="cuda"))
    assert task_options(cuda, cluster_has_gpus=False, cpus_per_cell=4) == {
        "num_gpus": 1, "num_cpus": 4, "accelerator_type": "A100"}
    auto = load_config(tiny_params(tmp_path, label="T4", device="auto"))
    assert task_options(auto, cluster_has_gpus=True)["num_gpus"] == 1
    assert task_options(auto, cluster_has_gpus=False) == {"num_gpus": 0, "num_cpus": 1, "accelerator_type": "T4"}
    # a GPU cell gets its node's CPU share per GPU (compile workers, host-bound launches); a CPU cell not
    assert task_options(cuda, cluster_has_gpus=True, gpu_cpus=12)["num_cpus"] == 12
    assert task_options(cuda, cluster_has_gpus=True, cpus_per_cell=16, gpu_cpus=12)["num_cpus"] == 16
    assert task_options(cpu, cluster_has_gpus=True, gpu_cpus=12)["num_cpus"] == 1


def test_cpu_share_per_gpu_is_the_leanest_gpu_nodes():
    nodes = [{"Alive": True, "Resources": {"CPU": 96.0, "GPU": 8.0}},  # 12 per GPU
             {"Alive": True, "Resources": {"CPU": 32.0, "GPU": 4.0}},  # 8 per GPU: the leanest
             {"Alive": True, "Resources": {"CPU": 64.0}},  # a CPU node: not counted
             {"Alive": False, "Resources": {"CPU": 2.0, "GPU": 2.0}}]  # dead: not counted
    assert cpus_per_gpu(nodes) == 8
    assert cpus_per_gpu([{"Alive": True, "Resources": {"CPU": 1.0, "GPU": 2.0}}]) == 1  # at least one
    assert cpus_per_gpu([]) == 1


def test_cli_refuses_bad_ray_options_before_connecting(tmp_path):
    params = tiny_params(tmp_path)
    proc = run_cli("run", params, "--ray", "local:0", "--results", tmp_path / "r.jsonl")
    assert proc.returncode == 2 and "--ray: 'local:0' is not allowed" in proc.stderr
    proc = run_cli("run", params, "--ray", "local:1", "--cpus-per-cell", "0")
    assert proc.returncode == 2 and "--cpus-per-cell): 0 is not allowed" in proc.stderr
    proc = run_cli("run", params, tiny_params(tmp_path, "b.yaml"), "--results", tmp_path / "r.jsonl")
    assert proc.returncode == 2 and "--results names one file" in proc.stderr
    assert not (tmp_path / "r.jsonl").exists()


def test_a_ray_address_where_nothing_listens_is_one_line_in_seconds(tmp_path):
    """ray.init retries a wrong address for minutes; the CLI probes HOST:PORT first (5 s at most)."""
    proc = run_cli("run", tiny_params(tmp_path), "--ray", "127.0.0.1:1", "--results", tmp_path / "r.jsonl",
                   timeout=120)
    line = one_error_line(proc)
    assert line == ("error: --ray 127.0.0.1:1: no Ray cluster there (Connection refused within 5 s); start one "
                    "with `ray start --head`, or check the address")
    assert not (tmp_path / "r.jsonl").exists()


class FakeRay:
    """Stands in for the ray module under the Ray launcher: actors run their calls when asked for the
    result, in submission order (ray.wait returns the oldest call), and every call is recorded."""

    class exceptions:
        RayError = RuntimeError

    def __init__(self):
        self.events, self.created, self.killed = [], 0, []

    def remote(self, actor_class):
        ray = self

        class Handle:
            def __init__(self, *args):
                ray.created += 1
                self.number, self.actor = ray.created, actor_class(*args)
                self.measure = types.SimpleNamespace(remote=lambda unit, keep: ray._call(self, "measure", unit, keep))
                self.close = types.SimpleNamespace(remote=lambda: ray._call(self, "close"))
                self.__ray_ready__ = types.SimpleNamespace(remote=lambda: ("ready", self.number))

        return types.SimpleNamespace(options=lambda **_: types.SimpleNamespace(remote=Handle))

    def _call(self, handle, method, *args):
        self.events.append(("start", handle.number, getattr(args[0], "name", method) if args else method))
        return (handle, method, args)

    def wait(self, refs, num_returns, timeout=None):
        return refs[:1], refs[1:]

    def get(self, ref):
        handle, method, args = ref
        result = getattr(handle.actor, method)(*args)
        self.events.append(("end", handle.number, getattr(args[0], "name", method) if args else method))
        return result

    def kill(self, handle):
        self.killed.append(handle.number)

    def nodes(self):
        return []

    def cancel(self, ref, force=False):
        pass


def fake_ray_sweep(tmp_path, monkeypatch, capacity: int) -> tuple:
    """The loop with the Ray launcher on a stand-in ray and made-up rounds: (the summary, the stand-in)."""
    from bench_utils.sweep.launchers import ray as ray_launcher
    from bench_utils.sweep.loop import run_sweep
    from synthetic import synthetic_round

    monkeypatch.setattr(ray_launcher.GroupActor, "_where", staticmethod(lambda rows: rows))
    cfg = load_config(tiny_params(tmp_path, models=["vit", "resnet"], batch_sizes=[1, 2], configurations=["eager", "default"],
                                  repeats=3, live_groups=4))
    fake = FakeRay()
    launcher = ray_launcher.RayLauncher(fake, cfg, tmp_path / f"r{capacity}.jsonl", {"num_cpus": 1, "num_gpus": 0},
                                        capacity, {}, round_runner=synthetic_round)
    return run_sweep(cfg, tmp_path / f"r{capacity}.jsonl", progress=False, launcher=launcher), fake


def test_the_ray_launcher_measures_a_groups_rounds_in_turn_in_its_actor(tmp_path, monkeypatch):
    """Each cell group's rounds go to its actor one at a time and in order (a later round compiles warm,
    in the same workers, from the cache the first filled); with room for every group, one actor each."""
    summary, fake = fake_ray_sweep(tmp_path, monkeypatch, capacity=4)
    assert summary.statuses == {"ok": 24}
    rounds = [(kind, number, name) for kind, number, name in fake.events if name.startswith(("vit", "resnet"))]
    actor_of = {}
    for kind, number, name in rounds:
        assert actor_of.setdefault(name.rsplit("-r", 1)[0], number) == number
    for group in actor_of:
        mine = [(kind, name) for kind, _, name in rounds if name.startswith(group + "-r")]
        assert mine == [(kind, f"{group}-r{r}") for r in range(3) for kind in ("start", "end")]
    assert max(_running(rounds)) == 4 and fake.created == 4 and sorted(fake.killed) == [1, 2, 3, 4]


def test_the_ray_launcher_keeps_within_its_capacity_ending_the_least_recently_used_actor(tmp_path, monkeypatch):
    summary, fake = fake_ray_sweep(tmp_path, monkeypatch, capacity=2)
    assert summary.statuses == {"ok": 24}
    rounds = [(kind, number, name) for kind, number, name in fake.events if name.startswith(("vit", "resnet"))]
    assert max(_running(rounds)) == 2  # the cluster's room: never more rounds at once
    for group in ("vit-bs1", "vit-bs2", "resnet-bs1", "resnet-bs2"):  # still in turn
        mine = [(kind, name) for kind, _, name in rounds if name.startswith(group + "-r")]
        assert mine == [(kind, f"{group}-r{r}") for r in range(3) for kind in ("start", "end")]
    closes = [number for kind, number, name in fake.events if name == "close" and kind == "end"]
    assert closes[:2] == [1, 2] and len(fake.killed) == fake.created  # the oldest idle ones first; all ended


def test_when_a_node_leaves_an_idle_actor_makes_room_for_a_waiting_one(tmp_path, monkeypatch):
    """A call that waits (its actor restarting after its node left) while an idle actor holds the only
    room left: the launcher counts the cluster again and ends the idle actor."""
    from bench_utils.sweep.launchers import ray as ray_launcher
    from synthetic import synthetic_round

    monkeypatch.setattr(ray_launcher.GroupActor, "_where", staticmethod(lambda rows: rows))  # no real Ray

    class Stalled(FakeRay):
        waits = 0

        def wait(self, refs, num_returns, timeout=None):
            self.waits += 1
            return ([], refs) if self.waits == 1 else (refs[:1], refs[1:])

    cfg = load_config(tiny_params(tmp_path, models=["vit"], batch_sizes=[1, 2], configurations=["eager"]))
    fake = Stalled()
    node = {"Alive": True, "Resources": {"CPU": 1.0}}
    launcher = ray_launcher.RayLauncher(fake, cfg, tmp_path / "r.jsonl", {"num_cpus": 1, "num_gpus": 0}, 2, {},
                                        round_runner=synthetic_round, nodes=lambda: [node])
    from bench_utils.sweep.jobs import first_rounds

    one, two = first_rounds(cfg)
    launcher.start(one, keep=True)
    launcher.finished()  # group bs1's actor is idle now
    launcher.start(two, keep=True)
    launcher.finished()  # the first wait finds nothing: room for one actor, and bs1's idle one ends
    assert fake.killed == [1] and launcher.capacity == 1 and list(launcher.actors) == [("cell", "vit", 2)]


def test_an_interrupt_mid_round_kills_the_busy_actor_and_stays_an_interrupt(tmp_path, monkeypatch):
    """Ctrl-C during `run --ray local:2` ended in a 69-line traceback, "ValueError: force=True is not
    supported for actor tasks", exit 1: Ray cannot force-cancel an actor's call. The busy actor is
    killed instead, and the interrupt reaches the command (one line, exit 130)."""
    from bench_utils.sweep.launchers import ray as ray_launcher
    from synthetic import synthetic_round

    monkeypatch.setattr(ray_launcher.GroupActor, "_where", staticmethod(lambda rows: rows))

    class Interrupted(FakeRay):
        waits = 0

        def wait(self, refs, num_returns, timeout=None):
            self.waits += 1
            if self.waits == 3:  # mid-round: the second round's call is in flight
                raise KeyboardInterrupt
            return refs[:1], refs[1:]

        def cancel(self, ref, force=False):
            if force:
                raise ValueError("force=True is not supported for actor tasks.")

    cfg = load_config(tiny_params(tmp_path, models=["vit"], batch_sizes=[1], configurations=["eager"], repeats=3))
    fake = Interrupted()
    launcher = ray_launcher.RayLauncher(fake, cfg, tmp_path / "r.jsonl", {"num_cpus": 1, "num_gpus": 0}, 1, {},
                                        round_runner=synthetic_round)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(cfg, tmp_path / "r.jsonl", progress=False, launcher=launcher)
    assert fake.killed == [1] and not launcher.actors and not launcher.calls
    assert [row.repeat for row in read_results(tmp_path / "r.jsonl").rows] == [0, 1]  # the rows written stay


def test_an_actor_ray_does_not_place_is_said_then_stops_the_run_in_one_line(tmp_path, monkeypatch):
    """A cluster whose only CPU another job holds: the run waited silently for 240 s, then ended in a
    traceback. It is said once past PLACE_WARN_S, with what is free, and stops past PLACE_LIMIT_S."""
    from bench_utils.sweep.jobs import first_rounds
    from bench_utils.sweep.launchers import ray as ray_launcher
    from synthetic import synthetic_round

    class Held(FakeRay):
        def wait(self, refs, num_returns, timeout=None):
            return [], refs  # nothing placed, nothing ends

        def available_resources(self):
            return {"CPU": 0.0}

        def cluster_resources(self):
            return {"CPU": 1.0, "memory": 1e9}

    monkeypatch.setattr(ray_launcher, "RECOUNT_S", 0.0)
    monkeypatch.setattr(ray_launcher, "PLACE_WARN_S", 0.0)
    monkeypatch.setattr(ray_launcher, "PLACE_LIMIT_S", 0.5)
    cfg = load_config(tiny_params(tmp_path, label="Busy", models=["vit"], batch_sizes=[1], configurations=["eager"]))
    launcher = ray_launcher.RayLauncher(Held(), cfg, tmp_path / "r.jsonl", {"num_cpus": 1, "num_gpus": 0}, 1, {},
                                        round_runner=synthetic_round, nodes=lambda: [])
    launcher.start(first_rounds(cfg)[0], keep=False)
    with pytest.warns(UserWarning, match="Ray has not placed profile 'Busy': vit-bs1-r0 .*CPU 0 of 1 free.*waiting up to"):
        with pytest.raises(ConfigError) as stopped:
            launcher.finished()
    assert "\n" not in str(stopped.value) and str(stopped.value).startswith("--ray: Ray has not placed profile 'Busy': ")
    assert "(it needs CPU 1)" in str(stopped.value) and "resume keeps what was measured" in str(stopped.value)


def test_a_local_ray_instance_is_its_own_and_its_start_is_tried_once_more(monkeypatch):
    """`--ray local:N` joined a cluster another command had started on this machine (ray.init found it)
    and refused num_cpus in a traceback; its node may not register within Ray's 30 s on a loaded machine
    ("The current node timed out during startup": a suite's Ray test failed so): tried once more, saying
    so, then one line."""
    from bench_utils.sweep.launchers import ray as ray_launcher

    class Starting:
        def __init__(self, failures):
            self.failures, self.calls, self.shutdowns = failures, [], 0

        def is_initialized(self):
            return False

        def init(self, **kwargs):
            self.calls.append(kwargs)
            if len(self.calls) <= self.failures:
                raise Exception("The current node timed out during startup. This could happen because ...")

        def shutdown(self):
            self.shutdowns += 1

    once = Starting(failures=1)
    with pytest.warns(UserWarning, match="did not start within Ray's 30 s .*starting it once more"):
        assert ray_launcher._connect(once, parse_ray_address("local:2"))
    assert [(call["address"], call["num_cpus"]) for call in once.calls] == [("local", 2)] * 2
    never = Starting(failures=2)
    with pytest.warns(UserWarning), pytest.raises(ConfigError, match=r"^--ray local:2: Ray's local instance did not "
                                                                       r"start, 2 times"):
        ray_launcher._connect(never, parse_ray_address("local:2"))
    assert never.shutdowns == 2


def test_a_ray_address_where_something_else_listens_is_one_line_in_seconds(tmp_path):
    """A TCP listener that is not Ray (a web server) passed the probe, and ray.init retried without end
    (killed at 330 s). The probe speaks HTTP/2 as Ray's gRPC server does; a gRPC server passes it."""
    import socket
    import threading

    from concurrent import futures

    import grpc

    from bench_utils.sweep.launchers.ray import probe_ray_address

    web = socket.create_server(("127.0.0.1", 0))
    port = web.getsockname()[1]

    def answer() -> None:
        while True:
            try:
                client, _ = web.accept()
            except OSError:
                return
            client.recv(100)
            client.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            client.close()

    threading.Thread(target=answer, daemon=True).start()
    try:
        started = time.perf_counter()
        proc = run_cli("run", tiny_params(tmp_path), "--ray", f"127.0.0.1:{port}", "--results", tmp_path / "r.jsonl",
                       timeout=120)
        assert one_error_line(proc) == (f"error: --ray 127.0.0.1:{port}: something listens there, but not a Ray "
                                        "cluster (it does not answer as Ray's gRPC server does within 5 s); check "
                                        "the address and port (`ray status` on the head prints it)")
        assert time.perf_counter() - started < 60 and not (tmp_path / "r.jsonl").exists()
    finally:
        web.close()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    grpc_port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        probe_ray_address(parse_ray_address(f"127.0.0.1:{grpc_port}"))  # answers as Ray's GCS does: no error
    finally:
        server.stop(0)


def _running(events) -> list[int]:
    running, counts = 0, []
    for kind, _, _ in events:
        running += 1 if kind == "start" else -1
        counts.append(running)
    return counts


@pytest.mark.cluster
@pytest.mark.slow
def test_on_ray_extra_rounds_for_precision_are_the_local_runs(tmp_path):
    """`--ray local:2` with a precision target: the same loop adds the same rounds, in the same worker
    pairs, as the local launcher (rounds made up from their cell, round and pair alone: synthetic.py)."""
    from ray import cloudpickle

    import synthetic
    from bench_utils.sweep.launchers.local import LocalLauncher

    cloudpickle.register_pickle_by_value(synthetic)  # the Ray workers get the module with the function
    cfg = load_config(tiny_params(tmp_path, models=["vit", "resnet"], configurations=["eager", "default"], repeats=3,
                                  target_halfwidth=0.03, budget_min=60, max_repeats=9, rounds_per_process=3))
    local, remote = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    run_sweep(cfg, local, progress=False, launcher=LocalLauncher(cfg, local, synthetic.synthetic_round))
    run_sweeps_on_ray([cfg], "local:2", [remote], progress=False, round_runner=synthetic.synthetic_round)
    made = {path: sorted((r.model, r.configuration, r.repeat, r.process_round) for r in read_results(path).rows)
            for path in (local, remote)}
    assert made[local] == made[remote]
    extra = [key for key in made[local] if key[2] >= 3]
    assert extra and {key[0] for key in extra} == {"vit", "resnet"}  # both groups got rounds for precision


@pytest.mark.cluster
@pytest.mark.slow
def test_on_ray_a_later_round_starts_after_round_zero_and_compiles_nothing(tmp_path):
    """Two CPUs: submitted together, both rounds of the cell would run (and compile cold) at once; after
    round 0, a later round is a fork of its prepared process and compiles nothing."""
    import datetime as dt

    cfg = load_config(tiny_params(tmp_path, models=["vit"], configurations=["eager", "default"], repeats=2, iterations=3))
    path = tmp_path / "r.jsonl"
    run_sweeps_on_ray([cfg], "local:2", [path], progress=False,
                      env={"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")})
    first, later = sorted((row for row in read_results(path).rows if row.configuration == "default"),
                          key=lambda row: row.repeat)
    assert first.status == later.status == "ok", (first.error, later.error)
    ended = dt.datetime.fromisoformat(first.started_at) + dt.timedelta(seconds=first.duration_s)
    assert dt.datetime.fromisoformat(later.started_at) >= ended - dt.timedelta(seconds=1)  # started_at: whole seconds
    assert first.fx_cache_misses >= 1 and later.compile_warm_s is not None  # round 0 compiled cold; warm in a fork before round 1
    assert later.prepared_round == 0 and later.compile_s is None  # round 1: forked from round 0's prepared process


@pytest.mark.cluster
@pytest.mark.slow
def test_on_ray_a_profiles_studies_run_after_its_rounds_and_resume(tmp_path, monkeypatch):
    """`run --ray`: the serving study runs like the local one (a worker per setting) and is not run twice."""
    from bench_utils.results.rows import read_rows
    from bench_utils.studies.serving import STUDY as SERVING, ServingResult
    from bench_utils.studies import serving

    monkeypatch.setattr(serving, "SETTINGS", ("eager", "dynamic"))  # two of the four: each compiles cold
    cfg = load_config(tiny_params(tmp_path, models=["resnet"], serving_batch_sizes=[2, 3], iterations=3))
    path = tmp_path / "r.jsonl"
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")}
    (summary,) = run_sweeps_on_ray([cfg], "local:2", [path], progress=False, env=env)
    assert summary.statuses == {"ok": 3} and summary.total == 3  # the round's row, then the study's two
    rows = {row.setting: row for row in read_rows(SERVING.path(path), ServingResult).rows}
    assert sorted(rows) == ["dynamic", "eager"] and rows["dynamic"].step_compiled == [True, False]
    (again,) = run_sweeps_on_ray([cfg], "local:2", [path], progress=False, env=env)
    assert again.skipped == 3 and not again.statuses


# --- on a two-node cluster ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("profiles")
    a100 = load_config(tiny_params(tmp, "a100.yaml", label="A100", models=["vit"], batch_sizes=[1, 2]))
    t4 = load_config(tiny_params(tmp, "t4.yaml", label="T4", models=["resnet"], batch_sizes=[1, 2, 3]))
    return a100, t4


@pytest.fixture(scope="module")
def local_run(profiles, tmp_path_factory):
    """The same two profiles measured by the local runner, with the same faults."""
    tmp = tmp_path_factory.mktemp("local")
    paths = [tmp / "a100.jsonl", tmp / "t4.jsonl"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BENCH_UTILS_FAULT", FAULTS)
        for cfg, path in zip(profiles, paths):
            run_sweep(cfg, path, progress=False)
    return paths


@pytest.fixture(scope="module")
def ray_run(cluster, profiles, local_run, tmp_path_factory):
    """Both profiles at once on the cluster; the A100 file already holds vit bs=1 from the local run."""
    tmp = tmp_path_factory.mktemp("ray")
    paths = [tmp / "a100.jsonl", tmp / "t4.jsonl"]
    paths[0].write_text(local_run[0].read_text().splitlines()[0] + "\n")
    seeded = paths[0].read_text()
    start = time.perf_counter()
    summaries = run_sweeps_on_ray(list(profiles), cluster.address, paths, progress=False,
                                  env={"BENCH_UTILS_FAULT": FAULTS})
    return paths, summaries, seeded, time.perf_counter() - start


@pytest.mark.cluster
def test_each_profile_runs_only_on_the_node_with_its_gpu_type(cluster, ray_run):
    (a100_path, t4_path), _, _, _ = ray_run
    a100_rows = [r for r in read_results(a100_path).rows if "ray_node_id" in r.env]  # not the seeded row
    t4_rows = read_results(t4_path).rows
    assert [r.batch_size for r in a100_rows] == [2] and len(t4_rows) == 3
    assert {r.env["ray_node_id"] for r in a100_rows} == {cluster.a100}
    assert {r.env["ray_node_id"] for r in t4_rows} == {cluster.t4}  # failed cells included
    assert cluster.a100 != cluster.t4


@pytest.mark.cluster
def test_ray_rows_match_a_local_run_cell_for_cell(profiles, local_run, ray_run):
    paths, _, _, _ = ray_run
    for cfg, local_path, ray_path in zip(profiles, local_run, paths):
        local = {r.key: r for r in read_results(local_path).rows}
        remote = {r.key: r for r in read_results(ray_path).rows}
        assert set(remote) == set(local) and len(remote) == len(cfg.runs())
        for key, row in remote.items():
            same = ("label", "checkpoint", "status", "weights", "num_params", "device", "settings", "iterations")
            assert {f: getattr(row, f) for f in same} == {f: getattr(local[key], f) for f in same}
            # timed by count and duration: at least `iterations` calls on either side
            assert (len(row.samples_s) >= row.iterations) == (len(local[key].samples_s) >= row.iterations)
    statuses = {r.batch_size: r.status for r in read_results(paths[1]).rows}
    assert statuses == {1: "ok", 2: "oom", 3: "crashed"}
    crashed = next(r for r in read_results(paths[1]).rows if r.status == "crashed")
    assert "killed by SIGKILL" in crashed.error  # the runner's own crashed row, made on the worker


@pytest.mark.cluster
def test_resume_skips_cells_in_the_file_and_writes_each_cell_once(profiles, ray_run):
    paths, summaries, seeded, _ = ray_run
    assert [(s.total, s.skipped) for s in summaries] == [(2, 1), (3, 0)]
    assert summaries[0].statuses == {"ok": 1} and summaries[1].statuses == {"ok": 1, "oom": 1, "crashed": 1}
    assert paths[0].read_text().startswith(seeded)  # the earlier row untouched
    assert [len(p.read_text().splitlines()) for p in paths] == [2, 3]
    again = run_sweeps_on_ray(list(profiles), "auto", paths, progress=False)  # already connected
    assert [(s.skipped, s.statuses) for s in again] == [(2, {}), (3, {})]
    assert [len(p.read_text().splitlines()) for p in paths] == [2, 3]


@pytest.mark.cluster
def test_rows_record_the_worker_host_and_one_thread_per_cell(ray_run):
    paths, _, _, _ = ray_run
    rows = [r for r in read_results(paths[1]).rows] + read_results(paths[0]).rows[1:]
    assert {r.env["hostname"] for r in rows} == {host_id()}  # a pseudonym: no machine named
    assert all(r.env["ray_worker_pid"] > 0 and r.env["ray_gpu_ids"] == [] for r in rows)
    assert [r.env["torch_threads"] for r in rows if r.status == "ok"] == [1, 1]  # OMP_NUM_THREADS=1
    frame = to_dataframe(rows)
    assert list(frame["hostname"]) == [host_id()] * 4
    assert (frame.loc[frame["status"] == "ok", "hardware"] != "").all()


@pytest.mark.cluster
def test_a_profile_no_node_can_take_fails_before_anything_runs(cluster, tmp_path):
    results = tmp_path / "r.jsonl"
    h100 = load_config(tiny_params(tmp_path, label="H100"))
    with pytest.raises(ConfigError, match="'H100': no Ray node offers accelerator_type:H100 .*CPU=2"):
        run_sweeps_on_ray([h100], cluster.address, [results], progress=False)
    cuda = load_config(tiny_params(tmp_path, label="A100", device="cuda"))
    with pytest.raises(ConfigError, match="'A100': no Ray node offers GPU"):
        run_sweeps_on_ray([cuda], cluster.address, [results], progress=False)
    assert not results.exists()
