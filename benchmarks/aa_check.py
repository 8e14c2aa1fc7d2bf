"""A/A check: eager against eager, each in processes of its own, measured by the real sweep with a
profile's settings (its rounds, blocks, forks, extra rounds for precision). An honest design reads
1.00x inside every interval; an interval that excludes 1x means rounds of one process (or of one
prepared template) resemble each other more than the interval assumes.

    python benchmarks/aa_check.py                          # resnet and vit, cpu-report.yaml's settings
    python benchmarks/aa_check.py --models resnet vit segformer deeplabv3-mobilenet --budget-min 4

The twin is the configuration "eager+twin" (config/configurations.py): eager float32 again, raced
against eager as any configuration is. Where the profile times eager beside each configuration in its
own processes (eager_in_process: a GPU's default), the twin's speedup is over eager in the twin's own
processes: that checks the order of the blocks, not two processes; `--eager-apart` checks two workers
against each other whatever the profile says. Exit status 1 when an interval excludes 1x.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_utils.config.parameters_file import load_config  # noqa: E402
from bench_utils.results.aggregate import load_dataframe  # noqa: E402
from bench_utils.stops import no_second_stop, unwind  # noqa: E402
from bench_utils.sweep.loop import run_sweep  # noqa: E402
from bench_utils.sweep.workers import uses_cuda  # noqa: E402

TWIN = "eager+twin"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["resnet", "vit"])
    parser.add_argument("--params", type=Path, default=Path(__file__).resolve().parents[1] / "parameters" /
                        "cpu-report.yaml", help="the sweep's settings (default: the default CPU report's)")
    parser.add_argument("--batch-sizes", nargs="+", type=int, help="default: the profile's")
    parser.add_argument("--budget-min", type=float, help="the sweep's budget (default: the profile's)")
    parser.add_argument("--results", type=Path, help="keep the rows here (default: a temporary folder)")
    parser.add_argument("--eager-apart", action="store_true", help="time eager for the twin's speedup in eager's "
                        "own worker (eager_in_process: false), whatever the profile says: two workers against "
                        "each other")
    args = parser.parse_args()
    cfg = load_config(args.params)
    cfg = dataclasses.replace(cfg, label="A/A check", models=tuple(args.models), weights="random", profiler=False,
                              batch_sizes=tuple(args.batch_sizes or cfg.batch_sizes),
                              configurations=("eager", TWIN), budget_min=args.budget_min or cfg.budget_min,
                              eager_in_process=False if args.eager_apart else cfg.eager_in_process)
    started = time.perf_counter()
    signal.signal(signal.SIGTERM, unwind)  # gpu_probe.sh's cap: the verdict on the rounds measured so far
    with tempfile.TemporaryDirectory(prefix="aa-check-") as tmp:
        path = args.results or Path(tmp) / "results.jsonl"
        try:
            sweep = f"sweep {run_sweep(cfg, path, progress=False).seconds:.0f} s"
        except KeyboardInterrupt:
            sweep = "cut short: the rounds measured so far"
        with no_second_stop():  # the verdict now: a second stop would lose it
            df = load_dataframe(path) if path.exists() else None
            design = "eager beside the twin in its processes" if cfg.times_eager_beside(
                "cuda" if uses_cuda(cfg.device) else "cpu") else "eager in a worker of its own"
            print(f"A/A check with {args.params.name}'s settings ({design}): {sweep}, "
                  f"whole run {time.perf_counter() - started:.0f} s")
            return verdict(df)


def verdict(df) -> int:
    """Each twin's speedup over eager, its interval and whether 1x is inside: the exit status (1: a twin
    measured none, or its interval excludes 1x)."""
    twins = df[(df["configuration"] == TWIN) & (df["status"] == "ok")] if df is not None else []
    if not len(twins):
        print("  no twin measured: no verdict")
        return 1
    failed = 0
    for _, twin in twins.iterrows():
        low, high = twin["speedup_ci95_low"], twin["speedup_ci95_high"]
        if math.isnan(low) or math.isnan(high):  # too few samples (a run cut short): no interval to hold 1x
            print(f"  {twin['model']} at batch {twin['batch_size']}: eager / its twin {twin['speedup']:.3f}x over "
                  f"{_rounds(int(twin['paired_rounds']))}: no interval")
            failed += 1
            continue
        inside = low <= 1.0 <= high
        failed += not inside
        print(f"  {twin['model']} at batch {twin['batch_size']}: eager / its twin {twin['speedup']:.3f}x [{low:.3f}, "
              f"{high:.3f}] over {_rounds(int(twin['paired_rounds']))} (half-width ±{twin['speedup_halfwidth']:.1%}); "
              f"1.00x inside: {'yes' if inside else 'NO'}")
    return 1 if failed else 0


def _rounds(count: int) -> str:
    return f"{count} round" + ("s" if count != 1 else "")


if __name__ == "__main__":
    raise SystemExit(main())
