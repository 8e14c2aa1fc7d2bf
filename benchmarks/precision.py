"""How precise is a results file's answer, and what did it cost? Per compiled cell: the speedup, its
95% interval's relative half-width, the rounds behind it and the spread of their speedups; for the
file: the median and largest half-width, the sweep's wall time and the timed share of it.

    python benchmarks/precision.py reports/cpu-full-size/results.jsonl

With --projection it adds, per cell, the half-width 2x and 4x as many rounds would give if they kept
the spread and the design effect measured here (rounds in pairs of workers of the same size, the
interval's own rule): a projection from measured numbers, not a measurement.
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path

import numpy as np

from bench_utils.results.aggregate import cells
from bench_utils.results.rows import read_results
from bench_utils.sweep.adaptive import round_durations


def _projected(round_logs: list[float], processes: list, factor: int) -> float:
    """The half-width `factor` times as many rounds would give, in pairs of workers of the same size,
    if the rounds kept this spread and this design effect (stats.speedup_over_rounds' rule)."""
    from bench_utils.results.stats import design_effect, log_halfwidth

    deff = design_effect(np.array(round_logs), processes)
    half = log_halfwidth(statistics.stdev(round_logs), len(round_logs) * factor, deff, len(set(processes)) * factor)
    return math.exp(half) - 1.0


def report(path: Path, projection: bool) -> None:
    rows = read_results(path).rows
    records = [r for r in cells(rows) if r["mode"] != "eager" and r["status"] == "ok"]
    widths = []
    for record in records:
        logs, processes = record["round_logs"], record["round_workers"]
        width = record["speedup_halfwidth"]
        widths.append(width)
        line = (f"{record['model']:<22} bs={record['batch_size']:<3} {record['mode']:<16} x{record['speedup']:.3f} "
                f"[{record['speedup_ci95_low']:.3f}, {record['speedup_ci95_high']:.3f}]  +-{width:.1%}  "
                f"{len(logs)} rounds in {len(set(processes))} worker pairs, round speedups sd "
                f"{statistics.stdev(logs):.3f} (log)" if len(logs) > 1 else "")
        if projection and len(logs) > 1:
            line += (f"; projected 2x rounds +-{_projected(logs, processes, 2):.1%}, "
                     f"4x +-{_projected(logs, processes, 4):.1%}")
        print(line)
    rounds = round_durations(rows)
    sweep_s = sum(rounds.values())
    timed_s = sum(sum(row.samples_s) for row in rows)
    cold_s = sum(row.compile_s or 0.0 for row in rows if row.repeat == 0)
    print(f"\n{len(records)} compiled cells: half-width median +-{statistics.median(widths):.1%}, "
          f"largest +-{max(widths):.1%}")
    print(f"rounds {len(rounds)}, median round {statistics.median(rounds.values()):.1f} s; sweep (rounds' wall time) "
          f"{sweep_s:.0f} s, timed calls {timed_s:.0f} s = {timed_s / sweep_s:.0%}, "
          f"{timed_s / (sweep_s - cold_s):.0%} without round 0's compiles ({cold_s:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path)
    parser.add_argument("--projection", action="store_true", help="also project 2x and 4x the rounds")
    args = parser.parse_args()
    report(args.results, args.projection)


if __name__ == "__main__":
    main()
