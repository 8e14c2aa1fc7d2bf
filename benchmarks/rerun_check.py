"""Do the numbers survive a re-run? Run one profile twice, back to back, into two results files, and
count the figures of each run (eager medians, speedups) that fall inside the other run's 95%
intervals (compare.rerun_agreement).

    python benchmarks/rerun_check.py parameters/cpu.yaml              # measure twice, then compare
    python benchmarks/rerun_check.py --results A.jsonl B.jsonl         # compare two existing files
    python benchmarks/rerun_check.py --results A1 B1 A2 B2 A3 B3       # several pairs, pooled

With several pairs it also pools the shares, counts the recommended configurations' speedups on
their own (the figures a verdict rests on), and estimates the between-run component: the spread of
one run's log speedup around the truth that the intervals do not see, from the pairs' differences d
and their standard errors se (each from its cell's rounds: sd * sqrt(deff / n), as the interval
takes it): c^2 = max(0, mean(d^2) - mean(se1^2 + se2^2)) / 2. What honest intervals would give: a
t-interval with v degrees of freedom holds the other run's point P(|T_v| < t_v / sqrt 2) of the time
(83% for a normal interval, about 88% at v = 4); it prints that share for the figures' own v.

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


def pooled(pairs: list[tuple[Path, Path]]) -> None:
    """Every pair's agreement, then the shares over all pairs, the recommended speedups' alone and the
    between-run component of the recommended speedups (module docstring)."""
    import math

    import numpy as np
    import pandas as pd

    tables = []
    for number, (first, second) in enumerate(pairs, 1):
        print(f"\n== pair {number}: {first} / {second}")
        report(first, second)
        first_df = load_dataframe(first)
        table = rerun_agreement(first_df, load_dataframe(second))
        picked = first_df[first_df["race_outcome"] == "recommended"]  # run 1's choice per model
        chosen = set(zip(picked["model"], picked["configuration"]))
        tables.append(table.assign(pair=number, recommended=[(m, c) in chosen for m, c in
                                                             zip(table["model"], table["configuration"])]))
    every = pd.concat(tables, ignore_index=True)
    both = np.concatenate([every["run2_in_run1"], every["run1_in_run2"]])
    print(f"\nall {len(pairs)} pairs, {len(every)} figures each way: inside the other run's interval "
          f"{both.mean():.0%} ({both.sum()} of {both.size})")
    for figure in ("speedup", "eager median"):
        some = every[every["figure"] == figure]
        share = np.concatenate([some["run2_in_run1"], some["run1_in_run2"]])
        print(f"{figure}s: {share.mean():.0%} ({share.sum()} of {share.size})")
    chosen = every[every["recommended"] & (every["figure"] == "speedup")]
    hits = np.concatenate([chosen["run2_in_run1"], chosen["run1_in_run2"]])
    print(f"recommended speedups: {hits.mean():.0%} ({hits.sum()} of {hits.size})")
    d, se, expected = [], [], []
    for first, second in pairs:
        one, two = _recommended(first), _recommended(second)
        for key in one.keys() & two.keys():
            d.append(one[key][0] - two[key][0])
            se += [one[key][1], two[key][1]]
            expected += [_honest_share(one[key][2]), _honest_share(two[key][2])]
    d, se = np.asarray(d), np.asarray(se)
    between = math.sqrt(max(0.0, float(np.mean(d ** 2) - 2 * np.mean(se ** 2))) / 2)
    print(f"  honest intervals of these rounds would hold {np.mean(expected):.0%}; their differences: median |d| "
          f"{np.median(np.abs(d)):.1%}, largest {np.abs(d).max():.1%}; standard errors median {np.median(se):.1%}; "
          f"between-run component c = {between:.1%}")


def _recommended(path: Path) -> dict:
    """(model, batch size, configuration) -> (log speedup, its standard error, degrees of freedom) of each
    recommended configuration, from its cell's rounds as the interval takes them (results/stats.py)."""
    import math

    import numpy as np

    from bench_utils.results.aggregate import cells
    from bench_utils.results.rows import read_results
    from bench_utils.results.stats import design_effect, effective_dof, round_clusters

    out = {}
    for record in cells(read_results(path).rows):
        if record.get("race_outcome") != "recommended":
            continue
        kept = [i for i, r in enumerate(record["round_ids"]) if r in record["race_round_ids"]]
        logs, labels = round_clusters([record["round_pairs"][i] for i in kept], [record["round_workers"][i] for i in kept])
        deff = design_effect(logs, labels)
        dof = effective_dof(logs.size, deff, len(set(labels)))
        out[(record["model"], record["batch_size"], record["configuration"])] = (
            float(np.log(record["race_speedup"])), float(logs.std(ddof=1) * math.sqrt(deff / logs.size)), dof)
    return out


def _honest_share(dof: float) -> float:
    """How often an honest 95% t-interval with `dof` degrees of freedom holds another run's point."""
    import math

    from scipy.stats import t

    return float(2 * t.cdf(t.ppf(0.975, dof) / math.sqrt(2), dof) - 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("params", nargs="?", help="parameters YAML to measure twice")
    parser.add_argument("--results", nargs="+", metavar="JSONL",
                        help="two existing results files instead, or several pairs (A1 B1 A2 B2 ...)")
    parser.add_argument("--keep", help="folder for the two results files (default: a temporary folder)")
    args = parser.parse_args()
    if bool(args.params) == bool(args.results):
        parser.error("give a parameters file or --results A B")
    if args.results:
        paths = list(map(Path, args.results))
        if len(paths) % 2:
            parser.error("--results: give the files in pairs (A B, or A1 B1 A2 B2 ...)")
        if len(paths) == 2:
            report(*paths)
        else:
            pooled(list(zip(paths[::2], paths[1::2])))
        return
    with tempfile.TemporaryDirectory(prefix="rerun-") as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        report(*measure_twice(Path(args.params), folder))


if __name__ == "__main__":
    main()
