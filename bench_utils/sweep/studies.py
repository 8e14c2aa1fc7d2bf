"""Run the studies a config asks for, after its sweep: serving with changing batch sizes
(`serving_batch_sizes`) and ways to cut compile time (`compile_strategies`).

Each study process runs in a fresh subprocess with an empty compiler cache of its own (what it
compiles is what a first start costs), and its row is appended next to the sweep's results.jsonl
the moment it ends; re-running skips rows already there. No torch import here.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..paths import inside
from ..results.study_results import (SERVING_SETTINGS, CompileCostResult, ServingResult, compile_cost_fields,
                                     compile_cost_path, read_rows, serving_fields, serving_path)
from ..results.writer import ResultsWriter
from .runner import failure_text, progress_bar, run_logged

KINDS = {  # kind -> (row type, its file next to results.jsonl, its identity fields)
    "serving": (ServingResult, serving_path, serving_fields),
    "compile-cost": (CompileCostResult, compile_cost_path, compile_cost_fields),
}


def study_runs(cfg: BenchConfig) -> list[tuple[str, str, str]]:
    """Every study process of `cfg`, (kind, model, setting or strategy), in run order. The whole-model
    compile runs before "cache-artifacts": it leaves the artifacts that one loads."""
    runs = []
    if cfg.serving_batch_sizes:
        runs += [("serving", model, setting) for model in cfg.models for setting in SERVING_SETTINGS]
    if cfg.compile_strategies:
        runs += [("compile-cost", model, strategy) for model in cfg.models
                 for strategy in ("whole", *cfg.compile_strategies)]
    return runs


def study_name(run: tuple) -> str:
    kind, model, variant = run
    return f"{kind}-{model}-{variant}"


def _row_key(cfg: BenchConfig, run: tuple) -> tuple:
    kind, model, variant = run
    row_type, _, fields = KINDS[kind]
    return row_type(**fields(cfg, model, variant, cfg.device), status="crashed").key  # the key of the row it writes


def pending_study_runs(cfg: BenchConfig, results_path: Path) -> list[tuple]:
    done = set()
    for row_type, path_of, _ in KINDS.values():
        done |= {(row_type, row.key) for row in read_rows(path_of(results_path), row_type)
                 if row.settings == cfg.settings_fingerprint()}
    return [run for run in study_runs(cfg) if (KINDS[run[0]][0], _row_key(cfg, run)) not in done]


def run_study_subprocess(cfg: BenchConfig, run: tuple, results_path: Path):
    """One study process in a fresh Python process with its own empty compiler cache; always a row."""
    kind, model, variant = run
    row_type, _, fields = KINDS[kind]
    log_dir = results_path.parent / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = inside(log_dir / f"{study_name(run)}.log", log_dir)
    with tempfile.TemporaryDirectory(prefix="bench-study-") as tmp:
        config_path, out_path = Path(tmp) / "config.json", Path(tmp) / "row.json"
        config_path.write_text(json.dumps(cfg.to_dict()))
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(Path(tmp) / "inductor-cache"))
        env.pop("TRITON_CACHE_DIR", None)  # Triton's cache then lives under the empty one too (torch's fresh_cache)
        command = [sys.executable, "-m", "bench_utils", "study", "--kind", kind, "--config", str(config_path),
                   "--model", model, "--variant", variant, "--results", str(results_path), "--out", str(out_path)]
        returncode, duration_s = run_logged(command, cfg.timeout_s, log_path, env=env)
        if returncode == 0 and out_path.exists():
            return row_type.from_dict(json.loads(out_path.read_text()))
    status, error = failure_text(returncode, cfg.timeout_s, log_path, what="study process")
    return row_type(**fields(cfg, model, variant, cfg.device), status=status, error=error, duration_s=duration_s,
                    started_at=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - duration_s)))


def measure_study(cfg: BenchConfig, run: tuple, results_path: Path):
    """In the study process: measure one run and return its row (never raises for the study's own
    failure: it becomes the row's status)."""
    kind, model, variant = run
    if kind == "serving":
        from ..measure.serving import measure_serving

        return measure_serving(cfg, model, variant)
    from ..measure.compile_cost import measure_compile_cost

    return measure_compile_cost(cfg, model, variant, results_path)


def run_studies(cfg: BenchConfig, results_path: str | Path, progress: bool = True) -> str:
    """Run every pending study process of `cfg`; a line saying what ran. Nothing to do without
    `serving_batch_sizes` or `compile_strategies`."""
    results_path = Path(results_path)
    todo = pending_study_runs(cfg, results_path)
    statuses: dict[str, int] = {}
    bar = progress_bar(todo, progress)
    for run in bar:
        if progress:
            bar.set_description(study_name(run))
        row = run_study_subprocess(cfg, run, results_path)
        with ResultsWriter(KINDS[run[0]][1](results_path)) as writer:
            writer.append(row)
        statuses[row.status] = statuses.get(row.status, 0) + 1
        if progress:
            bar.write(f"{study_name(run)}: {row.status} {row.error[:160]}".rstrip())
    done = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())) or "nothing new"
    return f"{len(study_runs(cfg))} study processes: {len(study_runs(cfg)) - len(todo)} already done, {done}"
