"""Which clock reads what a caller waits on a GPU? One process, the same model, inputs and compiled
callables timed by five clocks in turn (two passes, so a level shift hits each):

- events, pipelined: the engine's `timing.time_calls` (CUDA events around each call, up to
  IN_FLIGHT_CALLS calls queued ahead): the GPU execution time of a call in a busy pipeline;
- events, one call at a time: the same events, the device synchronized after each call;
- wall, one call at a time: `synchronize; perf_counter; call; synchronize; perf_counter`: from
  calling the model to having its output, host work included (the guide's latency);
- torch.utils.benchmark `Timer.blocked_autorange` (wall time over blocks of back-to-back calls);
- `triton.testing.do_bench` (CUDA events over back-to-back calls, L2 cache cleared between them).

Then eager and the fastest compiled callable again with this process pinned to one CPU, to see
whether the launching thread's CPU moves a launch-bound call.

    python benchmarks/cuda_clock.py --out OUT/clock.jsonl --deadline-s 200
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench_utils.config.registry import get_spec  # noqa: E402
from bench_utils.measure.inputs import build_inputs  # noqa: E402
from bench_utils.measure.models import load_model  # noqa: E402
from bench_utils.measure.timing import time_calls  # noqa: E402

RUN_S = 0.3  # seconds of calls per clock per pass


def _calls_for(fn, seconds: float) -> int:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return max(10, min(2000, int(seconds / max(time.perf_counter() - t0, 1e-5))))


def wall_sync_ms(fn, n: int) -> float:
    samples = []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def events_sync_ms(fn, n: int) -> float:
    samples = []
    for _ in range(n):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return statistics.median(samples)


def clocks(fn) -> dict:
    from torch.utils.benchmark import Timer
    from triton.testing import do_bench

    n = _calls_for(fn, RUN_S)
    return {
        "events_pipelined_ms": statistics.median(time_calls(fn, "cuda", n, 0.0)) * 1000,
        "events_sync_ms": events_sync_ms(fn, n),
        "wall_sync_ms": wall_sync_ms(fn, n),
        "blocked_autorange_ms": Timer("fn()", globals={"fn": fn}).blocked_autorange(min_run_time=RUN_S).median * 1000,
        "do_bench_ms": do_bench(fn, warmup=25, rep=int(RUN_S * 1000), return_mode="median"),
    }


def sm_clock_mhz() -> int | None:
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        return pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
    except Exception:  # noqa: BLE001 - a diagnostic: no NVML is a missing figure, not a failure
        return None


def cell(model_name: str, batch: int, size: str = "full") -> list[dict]:
    torch._dynamo.reset()
    spec = get_spec(model_name)
    model = load_model(spec, size, "random", "cuda", "float32").model
    inputs = build_inputs(spec, size, batch, "cuda", torch.float32)
    rows = []
    with torch.inference_mode():
        callables = {"eager": lambda: model(**inputs)}
        for mode in ("default", "reduce-overhead"):
            compiled = torch.compile(model, mode=mode, dynamic=False)
            callables[mode] = (lambda c: lambda: c(**inputs))(compiled)
        for name, fn in callables.items():
            t0 = time.perf_counter()
            for _ in range(20):
                fn()
            torch.cuda.synchronize()
            rows.append({"model": model_name, "batch": batch, "config": name, "pass": "warm-up",
                         "warmup_s": round(time.perf_counter() - t0, 2)})
        for pass_ in (0, 1):
            for name, fn in callables.items():
                rows.append({"model": model_name, "batch": batch, "config": name, "pass": pass_,
                             "sm_mhz": sm_clock_mhz(), **clocks(fn)})
        cpu = min(os.sched_getaffinity(0))
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {cpu})
        for name in ("eager", "reduce-overhead"):
            fn = callables[name]
            for _ in range(10):
                fn()
            rows.append({"model": model_name, "batch": batch, "config": name, "pass": f"pinned cpu {cpu}",
                         **clocks(fn)})
        os.sched_setaffinity(0, before)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--deadline-s", type=float, default=200.0, help="start no new cell after this")
    parser.add_argument("--cells", default="resnet:1,vit:1,resnet:16,vit:16")
    parser.add_argument("--size", default="full", help="full, or tiny for a dry run")
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, threads {torch.get_num_threads()}, "
          f"affinity {sorted(os.sched_getaffinity(0))}", flush=True)
    with args.out.open("a") as out:
        for item in args.cells.split(","):
            if time.perf_counter() - started > args.deadline_s:
                print(f"deadline: {item} and later not run", flush=True)
                break
            model_name, batch = item.split(":")
            for row in cell(model_name, int(batch), args.size):
                out.write(json.dumps(row) + "\n")
                out.flush()
                print(" ".join(f"{k}={round(v, 3) if isinstance(v, float) else v}" for k, v in row.items()), flush=True)
    print(f"cuda_clock: {time.perf_counter() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
