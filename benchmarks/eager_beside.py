"""The two places eager can be timed for a speedup, over the same rounds: a run with eager timed beside
each configuration in its own processes (eager_in_process) keeps eager's own worker too, so each of its
compiled cells has a speedup both ways. Per cell: the speedup and its 95% interval with eager beside
and with eager's worker, the standard deviation of a round's speedup (log scale, %) each way, and
eager beside over eager's worker (their medians).

    python benchmarks/eager_beside.py reports/cpu-full-size/results.jsonl [more.jsonl ...]

No torch; what the rows hold, read as results/aggregate.py reads them (docs/method.md, "Eager beside
the configuration on a CPU").
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics

from bench_utils.results.aggregate import cells
from bench_utils.results.rows import read_results


def _spread_pct(logs: list) -> float:
    return statistics.stdev(logs) * 100 if len(logs) >= 2 else float("nan")


def report(path: str) -> str:
    rows = read_results(path).rows
    apart = {(record["model"], record["configuration"]): record
             for record in cells([dataclasses.replace(row, eager_samples_s=[], eager_block_lengths=[]) for row in rows])}
    lines = [path]
    for record in cells(rows):
        if not record["eager_beside"] or record["status"] != "ok" or not record["round_logs"]:
            continue
        other = apart[(record["model"], record["configuration"])]
        lines.append(
            f"  {record['model']} {record['configuration']} ({len(record['round_logs'])} rounds): "
            f"beside {record['speedup']:.3f}x [{record['speedup_ci95_low']:.3f}, {record['speedup_ci95_high']:.3f}] "
            f"spread {_spread_pct(record['round_logs']):.1f}%; apart {other['speedup']:.3f}x "
            f"[{other['speedup_ci95_low']:.3f}, {other['speedup_ci95_high']:.3f}] spread "
            f"{_spread_pct(other['round_logs']):.1f}%; eager beside / eager's worker "
            f"{record['eager_ms_median'] / other['eager_ms_median']:.3f}")
    if len(lines) == 1:
        lines.append("  no cell timed eager beside it (eager_in_process was off)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", help="results.jsonl files")
    for path in parser.parse_args().results:
        print(report(path))


if __name__ == "__main__":
    main()
