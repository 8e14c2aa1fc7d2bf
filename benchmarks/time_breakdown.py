"""Where a sweep's wall time went, read from its results file alone: per phase (the selection rounds,
the later rounds), the seconds of cold compiles, warm compiles, warm-ups, timed calls and profiled
calls inside the rows' spans, the rest of those spans (model builds, handoffs, settling), and the time
between spans (the profiler's pass and the runner's own work); then the timed share of the sweep
without the first compiles, as the closing line of a run counts it.

    python benchmarks/time_breakdown.py reports/cpu-full-size/results.jsonl [more.jsonl ...]

No torch; the seconds are the rows' own (their clocks), so a file copied from another machine reads the
same.
"""

from __future__ import annotations

import argparse

from bench_utils.results.race import SELECTION_ROUNDS
from bench_utils.results.rows import read_results, timed_s
from bench_utils.results.sweep_time import epoch, seconds_spent

PARTS = ("cold compile", "warm compile", "warm-up", "timed", "profiled")


def parts(rows: list) -> dict[str, float]:
    """Seconds of each part of PARTS the rows recorded (a selection round's compile is the cold one)."""
    out = dict.fromkeys(PARTS, 0.0)
    for row in rows:
        out["cold compile" if row.repeat < SELECTION_ROUNDS else "warm compile"] += row.compile_s or 0.0
        out["warm compile"] += row.compile_warm_s or 0.0
        out["warm-up"] += row.warmup_s or 0.0
        out["timed"] += timed_s(row)
        out["profiled"] += (row.profile_calls or 0) * (row.profile_call_ms or 0.0) / 1000.0
    return out


def between_spans(rows: list) -> float:
    """Seconds from the first row's start to the last row's end that no row's span covers."""
    spans = sorted((epoch(row.started_at), epoch(row.started_at) + (row.duration_s or 0.0)) for row in rows
                   if epoch(row.started_at) is not None)
    if not spans:
        return 0.0
    gaps, end = 0.0, spans[0][0]
    for start, stop in spans:
        gaps += max(0.0, start - end)
        end = max(end, stop)
    return gaps


def report(path: str) -> str:
    rows = [row for row in read_results(path).rows if row.status != "skipped"]
    lines = [path]
    for name, phase in (("selection rounds", [r for r in rows if r.repeat < SELECTION_ROUNDS]),
                        ("later rounds", [r for r in rows if r.repeat >= SELECTION_ROUNDS])):
        wall, spent = seconds_spent(phase), parts(phase)
        shown = ", ".join(f"{part} {seconds:.0f}" for part, seconds in spent.items())
        lines.append(f"  {name}: {wall:.0f} s in rows ({len({(r.model, r.repeat) for r in phase})} group-rounds): "
                     f"{shown}, the rest {wall - sum(spent.values()):.0f}")
    total, spent = seconds_spent(rows), parts(rows)
    gaps = between_spans(rows)
    lines.append(f"  between the rows' spans (the profiler's pass, the runner): {gaps:.0f} s")
    lines.append(f"  timed {spent['timed']:.0f} s of {total + gaps:.0f} s: {spent['timed'] / (total + gaps):.0%}, "
                 f"{spent['timed'] / (total + gaps - spent['cold compile']):.0%} without the first compiles")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", help="results.jsonl files")
    for path in parser.parse_args().results:
        print(report(path))


if __name__ == "__main__":
    main()
