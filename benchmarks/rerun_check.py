"""Do the numbers survive a re-run? Run one profile twice, back to back, into two results files, and
count the figures of each run (eager medians, speedups) that fall inside the other run's 95%
intervals (compare.rerun_agreement).

    python benchmarks/rerun_check.py parameters/cpu.yaml              # measure twice, then compare
    python benchmarks/rerun_check.py --results A.jsonl B.jsonl         # compare two existing files

Run it on an otherwise idle machine: it measures nothing else while it runs.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench_utils.config.parameters_file import load_config
from bench_utils.results.compare import rerun_agreement
from bench_utils.results.aggregate import load_dataframe
from bench_utils.sweep.loop import run_sweep


def measure_twice(params: Path, folder: Path) -> list[Path]:
    cfg = load_config(params)
    paths = []
    for run in (1, 2):
        started = time.perf_counter()
        path = folder / f"run{run}.jsonl"
        run_sweep(cfg, path, progress=False)
        print(f"run {run}: {time.perf_counter() - started:.0f} s -> {path}")
        paths.append(path)
    return paths


def report(first: Path, second: Path) -> float:
    table = rerun_agreement(load_dataframe(first), load_dataframe(second))
    print(table.round(3).to_string(index=False))
    share_2in1, share_1in2 = table["run2_in_run1"].mean(), table["run1_in_run2"].mean()
    print(f"\n{len(table)} figures: run 2 inside run 1's intervals {share_2in1:.0%}, "
          f"run 1 inside run 2's {share_1in2:.0%}")
    return min(share_2in1, share_1in2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("params", nargs="?", help="parameters YAML to measure twice")
    parser.add_argument("--results", nargs=2, metavar="JSONL", help="two existing results files instead")
    parser.add_argument("--keep", help="folder for the two results files (default: a temporary folder)")
    args = parser.parse_args()
    if bool(args.params) == bool(args.results):
        parser.error("give a parameters file or --results A B")
    if args.results:
        report(*map(Path, args.results))
        return
    with tempfile.TemporaryDirectory(prefix="rerun-") as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        report(*measure_twice(Path(args.params), folder))


if __name__ == "__main__":
    main()
