"""How precise is a results file's answer, and what did it cost? Per compiled cell: the speedup, its
95% interval's relative half-width, the rounds behind it and the spread of their speedups; for the
file: the median and largest half-width, the sweep's wall time and the timed share of it.

    python benchmarks/precision.py reports/cpu-full-size/results.jsonl

With --split it adds, per cell, where the rounds' spread comes from: the variance of the rounds' log
speedups beside the part their own block pairs explain (within a round: seconds apart), the rest
being between rounds (minutes apart, or another pair of workers).

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


def _split(eager: dict, record: dict) -> str:
    """The variance of the rounds' log speedups, and the part of it within rounds: the mean variance
    of a round's block-pair log ratios over its pairs count (log squared). A round here is the mean
    of its pairs, the estimate that arithmetic holds for (the interval's rounds take their median)."""
    from bench_utils.results.stats import paired_log_ratios

    common = sorted(set(eager["round_blocks_ms"]) & set(record["round_blocks_ms"]))
    pairs = [paired_log_ratios(eager["round_blocks_ms"][r], record["round_blocks_ms"][r]) for r in common]
    within = statistics.fmean(float(np.var(p, ddof=1)) / p.size for p in pairs if p.size > 1)
    total = statistics.variance([float(p.mean()) for p in pairs])
    return f"; variance of rounds {total:.4f}, within rounds {within:.4f}, between {max(total - within, 0.0):.4f}"


def report(path: Path, projection: bool, split: bool = False) -> None:
    rows = read_results(path).rows
    records = [r for r in cells(rows) if r["mode"] != "eager" and r["status"] == "ok"]
    eager = {(r["label"], r["model"], r["batch_size"]): r for r in cells(rows) if r["mode"] == "eager"}
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
        if split and len(logs) > 1:
            line += _split(eager[(record["label"], record["model"], record["batch_size"])], record)
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
    parser.add_argument("--split", action="store_true", help="also split the rounds' spread: within and between")
    args = parser.parse_args()
    report(args.results, args.projection, args.split)


if __name__ == "__main__":
    main()
