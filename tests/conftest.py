"""Shared helpers: parameters files for tiny CPU sweeps, and the CLI run as a user runs it."""

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent

from bench_utils.paths import default_inductor_cache_dir  # noqa: E402

default_inductor_cache_dir()  # in-process compiles share the checkout's cache, as the CLI's do


# A killed worker's error: its signal, then "; log: " and the log's last lines only where the log holds the
# job's own lines (a worker killed before it printed any: nothing, not a "log: " that reads as cut off).
KILLED = r"worker process killed by {}(; log: \S.*)?"


def tiny_params(tmp_path: Path, name: str = "params.yaml", **values) -> Path:
    """A parameters file for a fast CPU sweep of tiny models; keyword arguments override keys."""
    params = {"label": "test", "models": ["vit"], "size": "tiny", "batch_sizes": [1], "configurations": ["eager"],
              "device": "cpu", "weights": "random", "warmup": 1, "iterations": 6, "timeout_s": 300,
              "min_time_s": 0.1, "max_warmup_s": 0.5, "repeats": 1,  # fast: these tests check behaviour
              "target_halfwidth": 0.0}  # exactly `repeats` rounds: no extra ones
    params.update(values)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(params))
    return path


def run_cli(*args, env: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    merged = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "bench_utils", *map(str, args)], capture_output=True,
                          text=True, env=merged, timeout=timeout, cwd=REPO)


def rows_by_batch(path: Path) -> dict:
    """The rows of a results file by batch size (a sweep over one model and mode)."""
    from bench_utils.results.rows import read_results

    return {row.batch_size: row for row in read_results(path).rows}


def summary_line(line: str, head: str, results, timed: bool = True, not_ok: int = 0) -> bool:
    """Is `line` a sweep's summary: `head` ("1 round measured, 1 already done"), the `not_ok` processes
    --retry-failed would measure again (when any), the share of the wall time spent in timed calls (when
    something was timed), then " -> results"?"""
    import re

    failed = f"; {not_ok} in the file failed: --retry-failed measures them again" if not_ok else ""
    share = r"; timed calls \d+% of [\d.]+ s \(\d+% without the first compiles\)" if timed else ""
    return re.fullmatch(f"{re.escape(head)}{re.escape(failed)}{share} -> {re.escape(str(results))}",
                        line.strip()) is not None


def one_error_line(proc) -> str:
    """The single stderr line of a refused command (exit 2, nothing on stdout, no traceback)."""
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def measure_cell(cfg, model: str, batch_size: int, configuration: str, repeat: int = 0,
                 results_path: Path | None = None):
    """One process's row of a cell measured in this process, as a worker would (tests only): prepared,
    `cfg.blocks` blocks in a row, its row, and the profiler's pass when `cfg` asks for it (its trace in
    traces/ next to `results_path`)."""
    import dataclasses
    import tempfile

    from bench_utils.measure.cell import CellProcess
    from bench_utils.measure.task import CELL, Job, Task
    from bench_utils.sweep.jobs import profiled

    results_path = Path(results_path or Path(tempfile.mkdtemp(prefix="cell-")) / "results.jsonl")
    process = CellProcess(Task(cfg, Job(CELL, model, batch_size, configuration, repeat), results_path))
    process.prepare()
    for _ in range(cfg.blocks):
        process.time_block()
    row = process.finish()
    if profiled(cfg, batch_size, repeat, configuration) and row.status == "ok":
        row = dataclasses.replace(row, **process.profile())
    process.close()
    return row


@pytest.fixture
def params_factory(tmp_path):
    return lambda **values: tiny_params(tmp_path, **values)


FIXTURE_ENV = {"device": "cpu", "device_name": "Fixture CPU (synthetic rows)", "torch": "2.fixture",
               "transformers": "5.fixture", "python": "3.11", "platform": "Linux", "hostname": "fixture",
               "torch_threads": 2, "cpu_count": 2}


def fixture_samples(ms: float, n: int = 10, spread: float = 0.01) -> list[float]:
    """`n` made-up samples (seconds) whose median and mean are exactly `ms` milliseconds: offsets
    -2..+2 times `spread`, each equally often when `n` is a multiple of 5."""
    return [ms / 1000 * (1 + spread * ((i % 5) - 2)) for i in range(n)]


def make_row(model: str = "vit", batch_size: int = 1, configuration: str = "eager", ms: float | None = 2.0,
             status: str = "ok", repeat: int = 0, label: str = "CPU", n: int = 10, spread: float = 0.01,
             env: dict | None = None, **extra):
    """The one builder of results rows for tests: one process of a cell with made-up samples around
    `ms` (report fixtures only, never a measurement); keyword arguments set any other field."""
    from bench_utils.config.registry import MODELS
    from bench_utils.results.rows import BenchResult

    spec = MODELS.get(model)
    values = dict(label=label, model=model, checkpoint=spec.checkpoint if spec else "hub/id",
                  task=spec.task if spec else "image-classification", size="tiny", batch_size=batch_size,
                  configuration=configuration, repeat=repeat, fullgraph=False, device="cpu", settings="abc",
                  status=status, warmup=2, iterations=n, env=env or FIXTURE_ENV,
                  started_at="2026-11-23T10:00:00+00:00", process_round=repeat)
    if status == "ok":
        samples = fixture_samples(ms, n, spread)
        blocks = [n // 2, n - n // 2] if n >= 2 else [n]  # two blocks: a round's pair of blocks gives an interval
        values.update(samples_s=samples, block_lengths=blocks, latency_ms_mean=ms, latency_ms_median=ms, weights="random",
                      weights_note="random weights (fixture)", num_params=1000, peak_mem_mb=500.0,
                      warmup_calls=20, warmup_s=0.5, warmup_steady=True, others_cpu_pct=0.0, steal_pct=0.0)
    else:
        values["error"] = f"{status}: fixture"
    values.update(extra)
    if status == "ok" and "samples_s" in extra and "block_lengths" not in extra:  # the given samples, two blocks
        n = len(values["samples_s"])
        values["block_lengths"] = [n // 2, n - n // 2] if n >= 2 else ([n] if n else [])
    return BenchResult(**values)


COMPILED_FIXTURE = dict(compile_s=3.0, graph_breaks=1, graph_count=2, recompiles=0,
                        break_reasons=["fixture break"], max_abs_diff=1e-6, accuracy_ok=True, task_agreement=1.0,
                        fx_cache_hits=0, fx_cache_misses=2)


def fixture_profile(mode: str, ms: float) -> dict:
    """Made-up profiler fields of a call of `ms` milliseconds: eager 150 operators, 80% of the call in
    them; compiled 12 operators, half the call in fused code."""
    if mode == "eager":
        return dict(profile_calls=5, profile_call_ms=ms, profile_ops_per_call=150.0, profile_op_ms=0.8 * ms,
                    profile_compiled_ms=0.0, profile_overhead_ms=0.2 * ms,
                    profile_top_ops=[["aten::mkldnn_convolution", 0.5 * ms], ["aten::addmm", 0.3 * ms]])
    return dict(profile_calls=5, profile_call_ms=ms, profile_ops_per_call=12.0, profile_op_ms=0.45 * ms,
                profile_compiled_ms=0.5 * ms, profile_overhead_ms=0.05 * ms,
                profile_top_ops=[["compiled code (Inductor)", 0.5 * ms], ["aten::addmm", 0.45 * ms]])


def synthetic_row(cfg, model: str, batch_size: int, configuration: str, median_ms: float = 0.0, status: str = "ok",
                  repeat: int = 0):
    """A row for one process of a cell of `cfg`: compiled cells are twice as fast as `median_ms`; the
    first process of an ok cell carries a profile (fixture_profile)."""
    from bench_utils.results.rows import cell_fields

    fields = cell_fields(cfg, model, batch_size, configuration, "cpu", repeat)
    extra = {} if configuration == "eager" or status != "ok" else COMPILED_FIXTURE
    ms = median_ms if configuration == "eager" else median_ms / 2
    if status == "ok" and repeat == 0:
        extra = extra | fixture_profile(configuration, ms)
    return make_row(ms=ms, status=status, n=cfg.iterations, **fields, **extra)


@pytest.fixture(scope="session")
def fixture_report(tmp_path_factory):
    """A report built by the CLI (--report-only) from synthetic rows: every cell of a tiny profile
    except vit bs=4 default (missing), with resnet bs=4 default out of memory."""
    from bench_utils.config.parameters_file import load_config
    from bench_utils.report.build import profile_results
    from bench_utils.results.writer import ResultsWriter

    tmp = tmp_path_factory.mktemp("report")
    params = tiny_params(tmp, models=["vit", "resnet"], batch_sizes=[1, 4], configurations=["eager", "default"],
                         label="Fixture CPU", repeats=2)
    cfg = load_config(params)
    out = tmp / "reports"
    with ResultsWriter(profile_results(cfg, out)) as writer:
        for model, batch_size, mode, repeat in cfg.runs():
            if (model, batch_size, mode) == ("vit", 4, "default"):
                continue
            status = "oom" if (model, batch_size, mode) == ("resnet", 4, "default") else "ok"
            writer.append(synthetic_row(cfg, model, batch_size, mode, 4.0 * batch_size * (1 + 0.02 * repeat),
                                        status, repeat))
    proc = run_cli("report", params, "--out", out, "--report-only", "--notebook-timeout", 300)
    return params, out, proc


DISAGREEING = (0.8, 1.0, 1.25)  # process medians as multiples of a cell's ms: their geometric mean is 1


def speedup_rows(model: str, batch_size: int, eager_ms: float, compiled_ms: float, configuration: str = "default",
                 significant: bool = True, compiled: dict | None = None, **common) -> list:
    """The rows of an eager cell and its compiled cell whose medians are `eager_ms` and `compiled_ms`
    (speedup eager_ms / compiled_ms). significant: one process per side with samples 1% apart, so the
    speedup's interval is narrow; else three processes per side whose medians disagree (x0.8, x1,
    x1.25; geometric mean exactly the ms), so the interval over processes includes no change.
    `compiled` sets fields of the compiled rows only; other keyword arguments those of both."""
    factors = (1.0,) if significant else DISAGREEING
    eager = [make_row(model, batch_size, "eager", eager_ms * k, repeat=r, spread=0.01, **common)
             for r, k in enumerate(factors)]
    faster = [make_row(model, batch_size, configuration, compiled_ms * k, repeat=r, spread=0.01, **common,
                       **(compiled or {})) for r, k in enumerate(reversed(factors))]
    return eager + faster


def figure_texts(fig) -> list[str]:
    """Every text drawn in the axes of a matplotlib Figure (status words, notes, "no data")."""
    return [text.get_text() for ax in fig.axes for text in ax.texts]


# --- a two-node local Ray cluster (test_cluster.py, test_cluster_faults.py) ---------------------------

@dataclass
class RayNodes:
    address: str
    a100: str  # Ray node ids
    t4: str
    cluster: object  # ray.cluster_utils.Cluster


CLUSTER_START_TRIES = 2  # a node gets Ray's fixed 30 s to register: on a loaded 2-core machine it may not


def _two_nodes():
    """The cluster's two nodes, started once more (with a warning saying so) when a node does not register
    within Ray's 30 s ("The current node timed out during startup": a fresh clone's `make test` beside a
    running benchmark failed so); the launcher's own local instance does the same (launchers/ray.py)."""
    import warnings

    from ray.cluster_utils import Cluster

    for attempt in range(1, CLUSTER_START_TRIES + 1):
        nodes = None
        try:
            nodes = Cluster(initialize_head=True, head_node_args={
                "num_cpus": 1, "resources": {"accelerator_type:A100": 1}, "include_dashboard": False})
            return nodes, nodes.add_node(num_cpus=1, resources={"accelerator_type:T4": 1})
        except Exception as err:  # noqa: BLE001 -- Ray raises a bare Exception for a node that did not start
            if "timed out during startup" not in str(err) or attempt == CLUSTER_START_TRIES:
                raise
            if nodes is not None:
                nodes.shutdown()
            warnings.warn("the test cluster's node did not start within Ray's 30 s (a loaded machine): starting "
                          "the cluster once more")


@pytest.fixture(scope="module")
def cluster():
    """One CPU per node; each node stands in for a GPU machine through an accelerator_type resource.
    Module scope: a module that removes nodes leaves the next module a fresh cluster."""
    import ray

    nodes, t4 = _two_nodes()
    ray.init(address=nodes.address)
    yield RayNodes(nodes.address, nodes.head_node.node_id, t4.node_id, nodes)
    ray.shutdown()
    nodes.shutdown()
