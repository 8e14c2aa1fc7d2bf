"""`python -m bench_utils selfcheck`: the first command to run on a new machine. Tiny models go through
every mode this device offers, in real cell processes, and the rows are checked against what a right
measurement must show; each check prints PASS, FAIL or SKIP with its reason. Exit 1 on any FAIL.

CPU: eager and default, float32 and bfloat16 autocast. CUDA: eager, default, reduce-overhead,
max-autotune-no-cudagraphs in float32, and eager/default in float16 and bfloat16; an oversized batch
that must become an `oom` row while the sweep goes on. Both: the clock against a known duration,
the environment record, warm-up and sample counts, accuracy against eager, peak memory.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .config.bench_config import BenchConfig

ENV_KEYS = ("device_name", "torch", "transformers", "python", "platform", "hostname", "torch_threads",
            "float32_matmul_precision")
CUDA_ENV_KEYS = ("driver", "cuda_build", "cudnn", "gpu_memory_gb")
FAST = dict(size="tiny", batch_sizes=(1,), weights="random", warmup=2, iterations=10, min_time_s=0.3, max_warmup_s=3.0,
            repeats=1, timeout_s=900.0, cold_compile=False)  # seconds: tiny models, a quick check


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # PASS, FAIL or SKIP
    reason: str

    def line(self) -> str:
        return f"{self.status:4}  {self.name}: {self.reason}"


def _check(name: str, ok: bool, reason: str) -> Check:
    return Check(name, "PASS" if ok else "FAIL", reason)


def profiles(device: str) -> list[BenchConfig]:
    if device == "cpu":
        return [BenchConfig(label="selfcheck cpu", models=("vit",), modes=("eager", "default"), device="cpu", **FAST),
                BenchConfig(label="selfcheck cpu bf16", models=("vit",), modes=("eager", "default"), device="cpu",
                            dtype="bfloat16", autocast=True, **FAST)]
    return [BenchConfig(label="selfcheck cuda", models=("vit",), device="cuda",
                        modes=("eager", "default", "reduce-overhead", "max-autotune-no-cudagraphs"), **FAST),
            *(BenchConfig(label=f"selfcheck cuda {dtype}", models=("vit",), modes=("eager", "default"),
                          device="cuda", dtype=dtype, **FAST) for dtype in ("float16", "bfloat16"))]


def clock_check(device: str) -> Check:
    """The engine's per-call samples against a call of known length (a sleep, or a GPU spin kernel)."""
    import torch

    from .measure.timing import time_calls, time_once

    if device == "cuda":
        cycles = 50_000_000  # torch.cuda._sleep spins the GPU this many clock cycles
        call = lambda: torch.cuda._sleep(cycles)  # noqa: E731
    else:
        call = lambda: time.sleep(0.005)  # noqa: E731
    expected_s = time_once(call, device)  # host clock around one synchronized call
    samples = time_calls(call, device, 5, 0.0)
    median = sorted(samples)[len(samples) // 2]
    how = "CUDA events, synchronized before reading" if device == "cuda" else "perf_counter"
    return _check("clock", abs(median / expected_s - 1) < 0.25,
                  f"{how}: median sample {median * 1000:.2f} ms vs {expected_s * 1000:.2f} ms for one synchronized call")


def row_checks(df, device: str) -> list[Check]:
    checks = []
    for row in df.to_dict("records"):
        name = f"{row['label']} · {row['mode']}"
        if row["status"] != "ok":
            checks.append(_check(name, False, f"{row['status']}: {row['error'][:200]}"))
            continue
        problems = []
        if row["warmup_calls"] is None or row["warmup_steady"] is None:
            problems.append("no warm-up record")
        if not row["peak_mem_mb"] or row["peak_mem_mb"] <= 0:
            problems.append("no peak memory")
        if row["mode"] != "eager":
            if row["accuracy_ok"] is not True:
                problems.append(f"output differs from eager by {row['max_abs_diff']:.3g} (beyond tolerance)")
            if not row["compile_s"] or not row["speedup"] > 0:
                problems.append("no compile time or speedup")
            if row["mode"] == "reduce-overhead" and device == "cuda" and row["cudagraph_note"]:
                problems.append(f"CUDA graphs: {row['cudagraph_note']}")
        checks.append(_check(name, not problems, "; ".join(problems) or
                             f"median {row['latency_ms_median']:.3f} ms, warm-up {row['warmup_calls']:.0f} calls, "
                             f"peak {row['peak_mem_mb']:.0f} MiB" + (f", x{row['speedup']:.2f}" if row["mode"] != "eager" else "")))
    return checks


def env_check(rows, device: str) -> Check:
    keys = ENV_KEYS + (CUDA_ENV_KEYS if device == "cuda" else ())
    missing = sorted({k for row in rows for k in keys if row.env.get(k) in (None, "")})
    return _check("environment record", bool(rows) and not missing,
                  f"missing {', '.join(missing)}" if missing else f"{len(keys)} facts on every row")


def oom_check(device: str, folder: Path) -> Check:
    """CUDA: a batch twice the GPU's memory must become an `oom` row, and the next cell still runs."""
    if device != "cuda":
        return Check("oversized batch", "SKIP", "CPU: an allocation past RAM is killed by the OS, not raised")
    import torch

    from .results.rows import read_results
    from .sweep.runner import run_sweep

    image_bytes = 3 * 32 * 32 * 4  # tiny ViT's float32 input image (32 x 32): the batch alone overflows
    huge = int(2 * torch.cuda.get_device_properties(0).total_memory // image_bytes)
    cfg = BenchConfig(label="selfcheck oom", models=("vit",), modes=("eager",), device="cuda",
                      **{**FAST, "batch_sizes": (huge, 1)})
    run_sweep(cfg, folder / "oom.jsonl", progress=False)
    statuses = {row.batch_size: row.status for row in read_results(folder / "oom.jsonl").rows}
    return _check("oversized batch", statuses == {huge: "oom", 1: "ok"}, f"batch {huge:,}: {statuses.get(huge)}, "
                  f"then batch 1: {statuses.get(1)}")


def run(device: str = "auto", folder: Path | None = None) -> list[Check]:
    from .measure.environment import resolve_device
    from .results.aggregate import load_dataframe
    from .results.rows import read_results
    from .sweep.runner import run_sweep

    device = resolve_device(device)
    with tempfile.TemporaryDirectory(prefix="selfcheck-") as tmp:
        folder = Path(folder or tmp)
        checks = [clock_check(device)]
        for number, cfg in enumerate(profiles(device)):
            path = folder / f"profile{number}.jsonl"
            run_sweep(cfg, path, progress=False)
            checks += row_checks(load_dataframe(path), device)
            checks.append(env_check(read_results(path).rows, device))
        checks.append(oom_check(device, folder))
    return checks


def main(device: str, folder: str | None) -> int:
    started = time.perf_counter()
    checks = []
    for check in run(device, Path(folder) if folder else None):
        print(check.line(), flush=True)
        checks.append(check)
    failed = [c for c in checks if c.status == "FAIL"]
    print(f"selfcheck: {len(checks) - len(failed)} of {len(checks)} checks passed or skipped, "
          f"{len(failed)} failed, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 1 if failed else 0
