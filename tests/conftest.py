"""Shared helpers: parameters files for tiny CPU sweeps, and the CLI run as a user runs it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent


def tiny_params(tmp_path: Path, name: str = "params.yaml", **values) -> Path:
    """A parameters file for a fast CPU sweep of tiny models; keyword arguments override keys."""
    params = {"label": "test", "models": ["vit"], "size": "tiny", "batch_sizes": [1], "modes": ["eager"],
              "device": "cpu", "weights": "random", "warmup": 1, "iterations": 6, "timeout_s": 300}
    params.update(values)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(params))
    return path


def run_cli(*args, env: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    merged = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "bench_utils", *map(str, args)], capture_output=True,
                          text=True, env=merged, timeout=timeout, cwd=REPO)


@pytest.fixture
def params_factory(tmp_path):
    return lambda **values: tiny_params(tmp_path, **values)


FIXTURE_ENV = {"device": "cpu", "device_name": "Fixture CPU (synthetic rows)", "torch": "2.fixture",
               "transformers": "5.fixture", "python": "3.11", "platform": "Linux", "hostname": "fixture"}


def synthetic_row(cfg, model: str, batch_size: int, mode: str, median_ms: float = 0.0, status: str = "ok"):
    """A results row for one cell of `cfg` with made-up samples around `median_ms`: report fixtures only,
    never a measurement. Compiled cells get eager samples twice as slow."""
    from bench_utils.results import BenchResult, cell_fields
    from bench_utils.stats import summarize

    fields = cell_fields(cfg, model, batch_size, mode, "cpu")
    if status != "ok":
        return BenchResult(**fields, status=status, error=f"{status}: fixture", env=FIXTURE_ENV)
    samples = [median_ms / 1000 * (1 + 0.01 * ((i % 7) - 3)) for i in range(cfg.iterations)]
    eager = samples if mode == "eager" else [2 * s for s in samples]
    own, base = summarize(samples), summarize(eager)
    compiled = {} if mode == "eager" else dict(
        compile_s=3.0, compile_warm_s=1.0, graph_breaks=1, graph_count=2, recompiles=0,
        break_reasons=["fixture break"], max_abs_diff=1e-6, accuracy_ok=True, task_agreement=1.0,
        speedup=base.median_ms / own.median_ms, speedup_ci95_low=1.9, speedup_ci95_high=2.1)
    return BenchResult(**fields, status="ok", weights="random", weights_note="random weights (fixture)",
                       num_params=1000, latency_ms_mean=own.mean_ms, latency_ms_median=own.median_ms,
                       latency_ms_p10=own.p10_ms, latency_ms_p90=own.p90_ms, latency_ms_std=own.std_ms,
                       latency_ms_ci95_low=own.ci95_low_ms, latency_ms_ci95_high=own.ci95_high_ms,
                       eager_ms_mean=base.mean_ms, eager_ms_median=base.median_ms, samples_s=samples,
                       eager_samples_s=eager, peak_mem_mb=500.0, env=FIXTURE_ENV,
                       **({"speedup": 1.0} if mode == "eager" else compiled))


@pytest.fixture(scope="session")
def fixture_report(tmp_path_factory):
    """A report built by the CLI (--report-only) from synthetic rows: every cell of a tiny profile
    except vit bs=4 default (missing), with resnet bs=4 default out of memory."""
    from bench_utils.config import load_config
    from bench_utils.report import profile_results
    from bench_utils.results import ResultsWriter

    tmp = tmp_path_factory.mktemp("report")
    params = tiny_params(tmp, models=["vit", "resnet"], batch_sizes=[1, 4], modes=["eager", "default"],
                         label="Fixture CPU")
    cfg = load_config(params)
    out = tmp / "reports"
    with ResultsWriter(profile_results(cfg, out)) as writer:
        for model, batch_size, mode in cfg.cells():
            if (model, batch_size, mode) == ("vit", 4, "default"):
                continue
            status = "oom" if (model, batch_size, mode) == ("resnet", 4, "default") else "ok"
            writer.append(synthetic_row(cfg, model, batch_size, mode, 4.0 * batch_size, status))
    proc = run_cli("report", params, "--out", out, "--report-only", "--cell-timeout", 300)
    return params, out, proc
