"""The machine's own floor: how far one model's eager call moves on this machine with no engine around
it, one process, nothing compiled. Each window of `--window-s` seconds of back-to-back calls gives a
median; their spread is what any round of the sweep inherits (a round times each configuration for
a few seconds), so a speedup's rounds cannot agree better than this.

    python benchmarks/machine_floor.py                                 # ViT-B/16, float32 and bfloat16, 20 s each
    python benchmarks/machine_floor.py --models resnet --seconds 30 --threads 1

Prints, per model and precision: calls, the windows' medians (ms) and their spread: the largest over
the smallest, and the standard deviation of their logarithms (what stats.rounds_for_halfwidth turns
into rounds). Run it alone: on a quiet machine the windows agree to a few percent.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench_utils.config.registry import get_spec  # noqa: E402
from bench_utils.measure.inputs import build_inputs  # noqa: E402
from bench_utils.measure.models import load_model  # noqa: E402


def windows_ms(call, seconds: float, window_s: float) -> tuple[int, list[float]]:
    """(calls, each window's median latency in ms) over `seconds` of back-to-back calls."""
    medians, window, window_start, calls = [], [], time.perf_counter(), 0
    end = window_start + seconds
    while time.perf_counter() < end:
        start = time.perf_counter()
        call()
        now = time.perf_counter()
        window.append((now - start) * 1000.0)
        calls += 1
        if now - window_start >= window_s:
            medians.append(statistics.median(window))
            window, window_start = [], now
    return calls, medians


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["vit"])
    parser.add_argument("--precisions", nargs="+", default=["float32", "bfloat16"], choices=("float32", "bfloat16"))
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of calls per model and precision")
    parser.add_argument("--window-s", type=float, default=1.0, help="seconds per window")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    for name in args.models:
        spec = get_spec(name)
        model = load_model(spec, "full", "random", "cpu", "float32").model
        inputs = build_inputs(spec, "full", 1, "cpu", torch.float32)
        for precision in args.precisions:
            autocast = (torch.autocast("cpu", dtype=torch.bfloat16) if precision == "bfloat16"
                        else contextlib.nullcontext())

            def call():
                with torch.inference_mode(), autocast:
                    model(**inputs)

            for _ in range(5):  # warm-up: the allocator, oneDNN's primitives
                call()
            calls, medians = windows_ms(call, args.seconds, args.window_s)
            logs = [math.log(m) for m in medians]
            sd = statistics.stdev(logs) if len(logs) >= 2 else math.nan
            print(f"{name} {precision}, {torch.get_num_threads()} thread(s): {calls} calls, "
                  f"{len(medians)} windows of {args.window_s:g} s: {' '.join(f'{m:.0f}' for m in medians)} ms; "
                  f"largest / smallest {max(medians) / min(medians):.2f}, log sd {sd:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
