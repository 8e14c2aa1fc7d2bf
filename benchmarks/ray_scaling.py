"""Scaling of the Ray dispatch: the same tiny CPU sweep on a local Ray instance with 1, then 2 workers.

    python benchmarks/ray_scaling.py                         # 8 eager cells, workers 1 and 2
    python benchmarks/ray_scaling.py --workers 1 2 4 --repeats 3

Each setup writes a fresh results file; the script checks that every setup produced the same set of
cells, all ok. Ray gives each cell one CPU and OMP_NUM_THREADS=1 (cpus_per_cell=1), so N workers run
N cells at once without fighting over cores. `start_s` is ray.init (a fresh local instance per
setup); `sweep_s` is the run itself, submission to last row written. The local runner (no Ray, one
cell at a time, torch's default thread count) is the baseline. A tiny cell is mostly process start,
imports and model build, not timed calls, so this measures dispatch throughput, not GPU speed.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench_utils.config.parameters_file import config_from_dict
from bench_utils.results.rows import read_results

from bench_utils.sweep.loop import run_sweep, run_sweeps_on_ray

SWEEP = dict(label="scaling", models=["vit", "resnet"], size="tiny", batch_sizes=[1, 2, 4, 8], modes=["eager"],
             device="cpu", weights="random", warmup=2, iterations=20, timeout_s=600, min_time_s=1.0,
             max_warmup_s=10.0)  # 8 cells; the timings of the recorded runs


def run_local(cfg, path: Path) -> dict:
    start = time.perf_counter()
    run_sweep(cfg, path, progress=False)
    return {"start_s": 0.0, "sweep_s": time.perf_counter() - start}


def run_ray(cfg, path: Path, workers: int) -> dict:
    import ray

    start = time.perf_counter()
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    started = time.perf_counter()
    try:
        run_sweeps_on_ray([cfg], "auto", [path], progress=False, cpus_per_cell=1)  # "auto": this instance
    finally:
        ray.shutdown()
    return {"start_s": started - start, "sweep_s": time.perf_counter() - started}


def measure(setup: str, cfg, folder: Path) -> dict:
    path = folder / f"{setup.replace(' ', '-').replace(':', '')}.jsonl"
    timing = run_local(cfg, path) if setup == "local runner" else run_ray(cfg, path, int(setup.split(":")[1]))
    rows = read_results(path).rows
    return {**timing, "cells": {row.key for row in rows}, "ok": sum(row.status == "ok" for row in rows),
            "cell_s": statistics.mean(row.duration_s for row in rows)}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="Ray CPUs (cells at once)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of every setup, interleaved")
    parser.add_argument("--no-local", action="store_true", help="skip the local-runner baseline")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cfg = config_from_dict(SWEEP)
    setups = ([] if args.no_local else ["local runner"]) + [f"ray local:{n}" for n in args.workers]
    results = {setup: [] for setup in setups}
    with tempfile.TemporaryDirectory(prefix="ray-scaling-") as tmp:
        for repeat in range(args.repeats):
            for setup in setups:
                folder = Path(tmp) / str(repeat)
                folder.mkdir(exist_ok=True)
                results[setup].append(measure(setup, cfg, folder))
    cell_sets = {frozenset(r["cells"]) for runs in results.values() for r in runs}
    assert len(cell_sets) == 1 and all(r["ok"] == len(cfg.cells()) for runs in results.values() for r in runs), \
        "setups disagree on the cells measured"
    base = statistics.median(r["sweep_s"] for r in results[f"ray local:{args.workers[0]}"])
    print(f"{len(cfg.cells())} tiny eager cells ({', '.join(cfg.models)} x bs {cfg.batch_sizes}), "
          f"{args.repeats} run(s) per setup, medians; identical cell sets in every run: yes")
    print(f"{'setup':<16}{'start_s':>9}{'sweep_s':>9}{'cells/min':>11}{'cell_s':>9}"
          f"{f'speedup vs {args.workers[0]} worker':>24}")
    for setup, runs in results.items():
        sweep_s = statistics.median(r["sweep_s"] for r in runs)
        start_s = statistics.median(r["start_s"] for r in runs)
        cell_s = statistics.median(r["cell_s"] for r in runs)
        print(f"{setup:<16}{start_s:>9.1f}{sweep_s:>9.1f}{len(cfg.cells()) / sweep_s * 60:>11.1f}"
              f"{cell_s:>9.1f}{base / sweep_s:>23.2f}x")
    print("start_s: ray.init of a fresh local instance; sweep_s: the run, first task submitted to last row "
          "written; cell_s: mean duration_s of the rows (model build + timed calls inside the cell process, "
          "without interpreter start and imports)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
