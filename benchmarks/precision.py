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

from bench_utils.results.aggregate import cells, worker_pairs
from bench_utils.results.rows import read_results
from bench_utils.results.stats import relative_halfwidth, SpeedupEstimate
from bench_utils.sweep.adaptive import round_durations


def _projected(round_logs: list[float], processes: list, factor: int) -> float:
    """The half-width `factor` times as many rounds would give, in pairs of workers of the same size,
    if the rounds kept this spread and this design effect (stats.speedup_over_rounds' rule)."""
    from scipy.stats import t

    from bench_utils.results.stats import design_effect

    deff = design_effect(np.array(round_logs), processes)
    n, pairs = len(round_logs) * factor, len(set(processes)) * factor
    dof = min(n - 1.0, max(n / deff - 1.0, pairs - 1.0, 1.0))
    half = float(t.ppf(0.975, dof)) * statistics.stdev(round_logs) * math.sqrt(deff / n)
    mean = statistics.fmean(round_logs)
    return relative_halfwidth(SpeedupEstimate(math.exp(mean), math.exp(mean - half), math.exp(mean + half)))


def report(path: Path, projection: bool) -> None:
    from bench_utils.results.stats import paired_log_ratios

    rows = read_results(path).rows
    records = [r for r in cells(rows) if r["mode"] != "eager" and r["status"] == "ok"]
    eager = {(r["label"], r["model"], r["batch_size"]): r for r in cells(rows) if r["mode"] == "eager"}
    widths = []
    for record in records:
        base = eager[(record["label"], record["model"], record["batch_size"])]
        common = sorted(set(base["round_blocks_ms"]) & set(record["round_blocks_ms"]))
        logs = [float(np.mean(paired_log_ratios(base["round_blocks_ms"][r], record["round_blocks_ms"][r])))
                for r in common]
        width = record["speedup_halfwidth"]
        widths.append(width)
        line = (f"{record['model']:<22} bs={record['batch_size']:<3} {record['mode']:<16} x{record['speedup']:.3f} "
                f"[{record['speedup_ci95_low']:.3f}, {record['speedup_ci95_high']:.3f}]  +-{width:.1%}  "
                f"{len(common)} rounds, round speedups sd {statistics.stdev(logs):.3f} (log)" if len(logs) > 1 else "")
        if projection and len(logs) > 1:
            processes = [p if p is not None else f"round {r}" for p, r in zip(worker_pairs(base, record, common), common)]
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
