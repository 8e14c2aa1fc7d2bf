"""A stand-in for sweep/rounds.run_round that measures nothing: every round's rows made up from its
cell, round and worker pair alone (samples from a string-seeded generator), so two sweeps given the
same rounds write the same rows whichever launcher ran them. Tests only."""

import random

from bench_utils.results.rows import BenchResult, cell_fields
from bench_utils.sweep.jobs import needs_fresh_workers

SPEEDUP = {"vit": 1.5, "resnet": 0.95}  # the made-up compiled speedups
ROUND_S = 2.0  # every made-up round's duration, seconds
_first_round: dict = {}  # (results file, cell group) -> the round its (imagined) workers started in


def synthetic_round(cfg, round_, results_path, sessions, keep) -> list:
    key = (str(results_path), round_.group)
    first = _first_round.get(key)
    if round_.new_workers or needs_fresh_workers(cfg, round_.repeat, first, round_.batch_size):
        first = round_.repeat
    _first_round[key] = first if keep else None
    rows = []
    for job in round_.jobs:
        draw = random.Random(f"{job.model}-{job.batch_size}-{job.repeat}-{first}")
        level = 10.0 * (1 + draw.gauss(0, 0.03))  # the round's stretch of the machine, ms
        ms = level if job.option == "eager" else level / SPEEDUP.get(job.model, 1.2) * (1 + draw.gauss(0, 0.06))
        samples = [ms / 1000 * (1 + 0.01 * (i % 3 - 1)) for i in range(cfg.blocks * 3)]
        rows.append(BenchResult(**cell_fields(cfg, job.model, job.batch_size, job.option, "cpu", job.repeat),
                                status="ok", samples_s=samples, block_lengths=[3] * cfg.blocks, process_round=first,
                                latency_ms_median=ms, latency_ms_mean=ms, duration_s=ROUND_S, env={"device_name": "CPU"}))
    return rows
