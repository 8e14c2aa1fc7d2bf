"""Cross-check: this project's timing engine against torch.utils.benchmark.Timer on the same model.

    python benchmarks/timer_comparison.py                      # tiny ViT, batch 1, eager, CPU
    python benchmarks/timer_comparison.py --model resnet --batch-size 4 --iterations 100 --device cuda

Same process, same model, same inputs, same number of calls. The engine (timing.time_calls +
stats.summarize) and Timer.timeit(1) both give one sample per call; they alternate in `--rounds`
rounds so slow drift (clocks, other load) hits both. Timer.blocked_autorange, torch's recommended
method, runs in the same rounds (--min-run-time split between them); its median is over blocks of
many calls, so it hides per-call jitter and includes the Python loop between calls.
Timer is given this process's thread count (its default of 1 thread would slow it down on CPU).
Last, the engine's own cost per sample: time_calls around a callable that does nothing.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import torch
from torch.utils.benchmark import Timer

from bench_utils.config.bench_config import DEVICES
from bench_utils.config.registry import MODEL_NAMES, SIZES, get_spec
from bench_utils.measure.environment import resolve_device
from bench_utils.measure.inputs import build_inputs
from bench_utils.measure.models import TORCH_DTYPES, load_model
from bench_utils.measure.timing import time_calls
from bench_utils.results.stats import summarize


@dataclass(frozen=True)
class Comparison:
    engine_ms: float  # median of the engine's per-call samples
    timer_ms: float  # median of Timer.timeit(1) samples, one per call
    blocked_ms: float  # Timer.blocked_autorange median (per call, median over blocks)
    calls: int  # calls timed by each of the first two
    blocked_calls: int
    blocked_blocks: int
    overhead_us_median: float  # engine cost per sample around a no-op callable, microseconds
    overhead_us_mean: float

    @property
    def ratio(self) -> float:
        """Engine median / Timer per-call median; 1.0 means they agree."""
        return self.engine_ms / self.timer_ms


def engine_overhead_us(calls: int, device: str) -> tuple[float, float]:
    """Median and mean of time_calls samples around a no-op callable, microseconds."""
    summary = summarize(time_calls(lambda: None, device, calls, min_time_s=0.0))
    return summary.median_ms * 1000, summary.mean_ms * 1000


def compare(fn, iterations: int, rounds: int, warmup: int, device: str, min_run_time_s: float,
            noop_calls: int) -> Comparison:
    """Time `fn` with both engines, alternating, `iterations` calls each per round."""
    if iterations < 2 or rounds < 1:
        raise ValueError(f"iterations, rounds: {iterations}, {rounds} are not allowed; allowed: >= 2, >= 1")
    timer = Timer(stmt="fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
    for _ in range(warmup):  # a fixed count: this script compares clocks on the same calls, not warm-ups
        fn()
    engine_s: list[float] = []
    timer_s: list[float] = []
    blocks_s: list[float] = []  # per-call time of each blocked_autorange block
    blocked_calls = 0
    for _ in range(rounds):
        engine_s += time_calls(fn, device, iterations, min_time_s=0.0)  # exactly `iterations` calls
        timer_s += [timer.timeit(1).times[0] for _ in range(iterations)]  # seconds per call
        blocked = timer.blocked_autorange(min_run_time=min_run_time_s / rounds)
        blocks_s += blocked.times
        blocked_calls += blocked.number_per_run * len(blocked.times)
    overhead_median, overhead_mean = engine_overhead_us(noop_calls, device)
    return Comparison(
        engine_ms=summarize(engine_s).median_ms, timer_ms=summarize(timer_s).median_ms,
        blocked_ms=summarize(blocks_s).median_ms, calls=len(engine_s), blocked_calls=blocked_calls,
        blocked_blocks=len(blocks_s), overhead_us_median=overhead_median, overhead_us_mean=overhead_mean)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="vit", choices=MODEL_NAMES, help="registry short name")
    parser.add_argument("--size", default="tiny", choices=SIZES, help="tiny: shrunk config; full: checkpoint's")
    parser.add_argument("--weights", default="auto", choices=("auto", "pretrained", "random"))
    parser.add_argument("--batch-size", type=int, default=1, help="images per forward pass")
    parser.add_argument("--dtype", default="float32", choices=tuple(TORCH_DTYPES))
    parser.add_argument("--device", default="cpu", choices=DEVICES)
    parser.add_argument("--iterations", type=int, default=50, help="timed calls per engine per round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of both engines")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls first")
    parser.add_argument("--min-run-time", type=float, default=1.5, help="blocked_autorange, seconds in all")
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads; 0 keeps torch's default")
    parser.add_argument("--noop-calls", type=int, default=10000, help="calls for the engine-overhead figure")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    spec = get_spec(args.model)
    loaded = load_model(spec, args.size, args.weights, device, args.dtype)
    inputs = build_inputs(spec, args.size, args.batch_size, device, TORCH_DTYPES[args.dtype])
    with torch.inference_mode():
        result = compare(lambda: loaded.model(**inputs), args.iterations, args.rounds, args.warmup, device,
                         args.min_run_time, args.noop_calls)
    print(f"{args.model} ({args.size}, {loaded.weights} weights), batch size {args.batch_size}, {args.dtype} "
          f"on {device}, eager; torch {torch.__version__}, torch threads: {torch.get_num_threads()}")
    print(f"engine: time_calls + summarize           median {result.engine_ms:9.4f} ms  ({result.calls} calls)")
    print(f"torch.utils.benchmark Timer.timeit(1)    median {result.timer_ms:9.4f} ms  ({result.calls} calls)")
    print(f"torch.utils.benchmark blocked_autorange  median {result.blocked_ms:9.4f} ms  "
          f"({result.blocked_calls} calls in {result.blocked_blocks} blocks)")
    print(f"ratio engine / Timer.timeit: {result.ratio:.3f}")
    print(f"ratio engine / blocked_autorange: {result.engine_ms / result.blocked_ms:.3f}")
    print(f"engine overhead per call (no-op callable, {args.noop_calls} calls): "
          f"median {result.overhead_us_median:.3f} us, mean {result.overhead_us_mean:.3f} us")
    return 0 if math.isfinite(result.ratio) else 1


if __name__ == "__main__":
    raise SystemExit(main())
