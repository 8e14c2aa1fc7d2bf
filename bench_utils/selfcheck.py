"""`python -m bench_utils selfcheck`: the first command to run on a new machine. Tiny models go through
every mode this device offers, in real cell processes, and the rows are checked against what a right
measurement must show; each check prints PASS, FAIL or SKIP with its reason. Exit 1 on any FAIL.
`--json FILE` also writes the checks, the environment and every cell's record: the one file a GPU
owner sends back. The profiles measured: `profiles`; what each check means and how it can fail: the
table in docs/gpu.md.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import median_high

from .config.bench_config import BenchConfig
from .config.configurations import configuration
from .config.modes import MODE_BY_NAME
from .sweep.jobs import eager_after_selection
from .report.notes import compile_note_words
from .files import check_ours, write_file
from .stops import no_second_stop

ENV_KEYS = ("device_name", "torch", "transformers", "python", "platform", "hostname", "torch_threads",
            "float32_matmul_precision")
# the driver version is not required: it needs pynvml or /proc/driver/nvidia/version (absent on WSL2)
CUDA_ENV_KEYS = ("cuda_build", "cudnn", "gpu_memory_gb", "compute_capability")
CLOCK_WARMUP_CALLS = 5  # spin calls before the clock check: lazy module loading, idle clocks ramping up
CLOCK_CALLS = 7  # synchronized host-timed calls whose median is the expected duration
FAST = dict(target_halfwidth=0.0, size="tiny", batch_sizes=(1,), weights="random", warmup=2, iterations=10, min_time_s=0.3, max_warmup_s=3.0,
            repeats=1, timeout_s=900.0)  # seconds: tiny models, a quick check
# rounds 0 and 1 from one set of workers (a reused worker), round 2 in fresh ones (rounds_per_process 2;
# on a GPU also the last round of the first pass, jobs.needs_fresh_workers) that compile warm from the
# cell's own compiler cache, which round 0's cold compile filled
REUSE = dict(repeats=3, rounds_per_process=2)
OOM_INPUT_SHARE = 0.6  # of the free GPU memory: the oversized batch's input fits, its first activations do not
FLOAT32_BYTES = 4
GRAPH_BREAKS_LABEL = "selfcheck cuda graph breaks"


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # PASS, FAIL or SKIP
    reason: str

    def line(self) -> str:
        return f"{self.status:4}  {self.name}: {self.reason}"


def _check(name: str, ok: bool, reason: str) -> Check:
    return Check(name, "PASS" if ok else "FAIL", reason)


# --quick on a GPU: the first profile's modes and the oversized batch's; the rest of `profiles` is left
# out (on a GPU a tiny model compiles about as long as a full one: 10-13 s cold in default and
# reduce-overhead, 26 s in max-autotune, which a whole selfcheck runs; benchmarks/README.md#gpu-h200-selfcheck)
QUICK_MODES = ("eager", "default", "reduce-overhead")
QUICK_OOM_MODES = ("eager", "reduce-overhead")


def profiles(device: str, quick: bool = False) -> list[BenchConfig]:
    """The profiles measured, in order: every configuration the device offers, on tiny models. The first
    runs three rounds (REUSE) with caches of its own; a precision the machine lacks natively becomes an
    "unsupported" row (a SKIP with its reason), as in a report. `quick` (a GPU's): the first profile
    alone, with QUICK_MODES, a few minutes where the whole selfcheck takes about seven on a GPU;
    the compile rules, CUDA graphs, a reused worker, the cache's merge and the profiler are the first
    profile's, batch 16 and reduce-overhead at full size the probe profile's (benchmarks/gpu_probe.sh);
    max-autotune, the lower precisions, channels_last and graph breaks wait for a whole selfcheck."""
    if quick and device != "cpu":
        return [BenchConfig(label="selfcheck cuda", models=("vit",), device="cuda", configurations=QUICK_MODES,
                            profiler=True, **(FAST | REUSE))]
    if device == "cpu":
        return [BenchConfig(label="selfcheck cpu", models=("vit",), configurations=("eager", "default"), device="cpu",
                            profiler=True, **(FAST | REUSE)),
                BenchConfig(label="selfcheck cpu configurations", models=("vit",), device="cpu",
                            configurations=("eager", "default+freezing", "max-autotune-no-cudagraphs+freezing",
                                            "default+channels-last", "eager+bf16-autocast", "default+bf16-autocast"),
                            **FAST),
                # the serving forms built ahead of time (config/modes.py); ONNX Runtime without the [deploy]
                # extra is an "unsupported" row saying so: a SKIP
                BenchConfig(label="selfcheck cpu serving forms", models=("vit",), device="cpu",
                            configurations=("eager", "aot-inductor", "onnxruntime"), **FAST)]
    from .config.modes import COMPILE_MODES

    return [BenchConfig(label="selfcheck cuda", models=("vit",), device="cuda", configurations=("eager", *COMPILE_MODES),
                        profiler=True,
                        **(FAST | REUSE)),
            BenchConfig(label="selfcheck cuda batch 4", models=("vit",), device="cuda",
                        configurations=("eager", "reduce-overhead"), profiler=True, **(FAST | {"batch_sizes": (4,)})),
            BenchConfig(label="selfcheck cuda low precision", models=("vit",), device="cuda",
                        configurations=("eager", "default+fp16-autocast", "default+bf16-autocast"), **FAST),
            BenchConfig(label="selfcheck cuda autocast channels_last", models=("resnet",), device="cuda",
                        configurations=("eager", "default+fp16-autocast+channels-last",
                                        "reduce-overhead+fp16-autocast+channels-last"), profiler=True, **FAST),
            # tiny SegFormer breaks its graph where transformers installs its output hooks, on a model's
            # first call (benchmarks/compile_counts.py: 2 graphs). A cell calls eager first, so it may
            # measure one graph: tree_check says whether a tree of several CUDA graphs was exercised
            BenchConfig(label=GRAPH_BREAKS_LABEL, models=("segformer",), device="cuda",
                        configurations=("eager", "reduce-overhead"), profiler=True, **FAST)]


def clock_check(device: str) -> Check:
    """The engine's per-call samples against a call of known length (a sleep, or a GPU spin kernel)."""
    import torch

    from .measure.timing import time_calls, time_once

    if device == "cuda":
        cycles = 50_000_000  # torch.cuda._sleep spins the GPU this many clock cycles
        call = lambda: torch.cuda._sleep(cycles)  # noqa: E731
    else:
        call = lambda: time.sleep(0.005)  # noqa: E731
    for _ in range(CLOCK_WARMUP_CALLS):  # the first calls load the kernel and wake idle GPU clocks
        time_once(call, device)
    expected_s = median_high([time_once(call, device) for _ in range(CLOCK_CALLS)])  # host clock, synchronized
    median = median_high(time_calls(call, device, CLOCK_CALLS, 0.0))  # on CUDA maybe more calls: an even count
    how = "perf_counter, the device synchronized around each call" if device == "cuda" else "perf_counter"
    return _check("clock", abs(median / expected_s - 1) < 0.25,
                  f"{how}: median sample {median * 1000:.2f} ms vs {expected_s * 1000:.2f} ms, the median of "
                  f"{CLOCK_CALLS} synchronized calls timed on the host after {CLOCK_WARMUP_CALLS} warm-up calls")


def _positive(value) -> bool:
    """A measured number above 0 (None and NaN, a value the DataFrame left missing, are not)."""
    return value is not None and value == value and value > 0


def _finite(value) -> bool:
    return value is not None and math.isfinite(value)


def row_checks(df, device: str, profiled: bool = False) -> list[Check]:
    """One check per cell of a selfcheck profile's DataFrame; `profiled`: the profile ran the profiler."""
    checks = []
    for row in df.to_dict("records"):
        name = f"{row['label']} · {row['configuration']}"
        if row["status"] == "unsupported":
            checks.append(Check(name, "SKIP", row["error"][:200]))
            continue
        if row["status"] != "ok":
            checks.append(_check(name, False, f"{row['status']}: {row['error'][:200]}"))
            continue
        problems = []
        if row["warmup_calls"] is None or row["warmup_steady"] is None:
            problems.append("no warm-up record")
        if not _positive(row["peak_mem_mb"]):
            problems.append("no peak memory")
        if row["configuration"] != "eager":
            if row["accuracy_ok"] is not True:
                diff = row["max_abs_diff"]
                problems.append(f"output differs from eager by {diff:.3g} (beyond tolerance)" if _finite(diff) else
                                # NaN outputs, or no check: the DataFrame holds both as NaN
                                "output not within tolerance of eager (no finite difference measured)")
            if configuration(row["configuration"]).compiled and not _positive(row["compile_s"]):
                problems.append("no compile time")
            if not row["speedup"] > 0:
                problems.append("no speedup")
        notes = [note for note in row["compile_notes"]
                 if not (note == "partial_cudagraphs" and (row["graph_breaks"] or 0) > 0)]
        if notes:  # ran eager, or CUDA graphs missing or partial (expected where the graph broke: eager code runs between graphs)
            problems.append(compile_note_words(row | {"compile_notes": notes}))
        problems += _memory_problems(row, device) + (_profile_problems(row, device) if profiled else [])
        checks.append(_check(name, not problems, "; ".join(problems) or
                             f"median {row['latency_ms_median']:.3f} ms, warm-up {row['warmup_calls']:.0f} calls, "
                             f"peak {row['peak_mem_mb']:.0f} MiB"
                             + (f", x{row['speedup']:.2f}" if row["configuration"] != "eager" else "")))
    return checks


def _memory_problems(row: dict, device: str) -> list[str]:
    """The peak holds the model's weights (a peak read on another device, or reset after the blocks,
    would not); CUDA: a reserved peak was read, and a CUDA-graph mode has memory in its pool."""
    from .config.modes import CUDAGRAPH_MODES

    problems = []
    # the weights stay float32 in every configuration (autocast casts per operator, not the model)
    weights_mb = (row.get("num_params") or 0) * FLOAT32_BYTES / 2**20
    if row["peak_mem_mb"] and row["peak_mem_mb"] < weights_mb:
        problems.append(f"peak memory {row['peak_mem_mb']:.3g} MiB below the weights' {weights_mb:.3g} MiB")
    if device != "cuda":
        return problems
    if not row["peak_reserved_mb"] or row["peak_reserved_mb"] != row["peak_reserved_mb"]:  # None, 0 or NaN
        problems.append("no reserved peak")
    if row["mode"] in CUDAGRAPH_MODES and not row["cudagraph_pool_mb"]:
        problems.append("no memory in a CUDA-graph pool after timing")
    return problems


def _profile_problems(row: dict, device: str) -> list[str]:
    """The profiler pass ran and saw the call (and on CUDA, kernels; in a CUDA-graph mode, replays)."""
    from .config.modes import CUDAGRAPH_MODES

    if row["profile_error"]:
        return [f"profiler failed: {row['profile_error'][:200]}"]
    if not row["profile_calls"] or not row["profile_call_ms"]:
        return ["no profile"]
    if device == "cuda" and not row["profile_kernels_per_call"]:
        return ["the profiler saw no CUDA kernel"]
    if device == "cuda" and row["mode"] in CUDAGRAPH_MODES and not row["profile_graph_replays_per_call"]:
        return ["the profiler saw no CUDA-graph replay"]
    if device == "cuda" and row["mode"] in CUDAGRAPH_MODES and (row["graph_count"] or 0) > 1:
        # a tree of several graphs: each graph recorded, and each replayed on every call
        graphs = int(row["graph_count"])
        recorded, replays = row["cudagraphs_recorded"], row["profile_graph_replays_per_call"]
        if not (_finite(recorded) and recorded >= graphs):  # an unknown count (NaN) proves nothing either
            return [f"{_count(recorded)} CUDA graphs recorded for {graphs} compiled graphs"]
        if not (_finite(replays) and replays >= graphs):
            return [f"{_count(replays)} CUDA-graph replays per call for {graphs} graphs"]
    return []


def _count(value) -> str:
    """A count a row holds, as a page says it ("no" when unknown)."""
    return f"{value:.3g}" if _finite(value) else "no"


def tree_check(df) -> Check:
    """The graph-break profile's CUDA-graph-mode rows: where one compiled several graphs, PASS when each
    was recorded as a CUDA graph and replayed on every call; SKIP, saying so, when every one compiled a
    single graph (the model did not break here) and a tree of several CUDA graphs went unexercised."""
    from .config.modes import CUDAGRAPH_MODES

    rows = [row for row in df.to_dict("records") if row["status"] == "ok" and row["mode"] in CUDAGRAPH_MODES]
    name = "CUDA-graph tree of several graphs"
    if not rows:
        return Check(name, "SKIP", "no CUDA-graph mode measured ok")
    row = max(rows, key=lambda r: r["graph_count"] if _finite(r["graph_count"]) else 0)
    graphs = int(row["graph_count"]) if _finite(row["graph_count"]) else 0
    if graphs <= 1:
        return Check(name, "SKIP", f"the model compiled as {graphs} graph here (transformers {row['transformers']}): "
                     "no tree of several CUDA graphs to check")
    problems = _profile_problems(row, "cuda")  # the row check's rule: each graph recorded and replayed
    return _check(name, not problems, "; ".join(problems) or f"{graphs} compiled graphs, "
                  f"{_count(row['cudagraphs_recorded'])} CUDA graphs recorded, "
                  f"{_count(row['profile_graph_replays_per_call'])} replays per call")


def env_check(rows, device: str) -> Check:
    keys = ENV_KEYS + (CUDA_ENV_KEYS if device == "cuda" else ())
    missing = sorted({k for row in rows for k in keys if row.env.get(k) in (None, "")})
    driver = "" if device != "cuda" or all(row.env.get("driver") for row in rows) else (
        "; driver version unknown (no pynvml, no /proc/driver/nvidia/version): informative only")
    return _check("environment record", bool(rows) and not missing,
                  (f"missing {', '.join(missing)}" if missing else f"{len(keys)} facts on every row") + driver)


def reuse_checks(rows: list) -> list[Check]:
    """A REUSE profile's rows: round 1 measured from round 0's prepared workers (a reused worker: on a GPU
    a new round in a process that timed blocks and handed its turns over; on a CPU a process forked
    from the prepared one, no compile); round 0's compile cold (an FX-graph cache miss: the cell's own
    cache was empty) and round 2's fresh workers warm (a hit: the cell's cache round 0 filled)."""
    by_round = {r: [row for row in rows if row.repeat == r] for r in (0, 1, 2)}
    second = by_round[1]
    reused = bool(second) and all(row.status == "ok" and row.prepared_round == 0 for row in second)
    compiled = lambda r: [row for row in by_round[r] if row.configuration != "eager"]  # noqa: E731
    cold = [row.fx_cache_misses for row in compiled(0)]
    warm = [row.fx_cache_hits for row in compiled(2)]
    merged = bool(cold) and bool(warm) and all(cold) and all(warm)
    return [_check("reused worker", reused, "round 1: " + ", ".join(
                f"{row.configuration} {row.status} from round {row.prepared_round}'s prepared process" for row in second)),
            _check("cold, then warm from the cell's own cache", merged, f"round 0 FX-graph cache misses {cold}, "
                   f"round 2 (fresh workers) hits {warm}")]


def _count_of(row: dict, name: str) -> int:
    value = row.get(name)
    return int(value) if _finite(value) else 0


# A setting a configuration names, which configurations name it, and what its row read back from torch
# (measure/evidence.py): (whether it took effect, the evidence in words)
SETTING_PROOFS = (
    ("freezing", lambda c: bool(c.inductor_settings.get("freezing")),
     lambda r: (_count_of(r, "params_folded") > 0 and _count_of(r, "params_unfolded") == 0,
                f"{_count_of(r, 'params_folded')} parameters and buffers folded into constants, "
                f"{_count_of(r, 'params_unfolded')} parameters left as graph inputs")),
    ("max-autotune", lambda c: c.mode.startswith("max-autotune"),
     lambda r: (_count_of(r, "autotune_choices") > 0,
                f"{_count_of(r, 'autotune_choices')} operators with several kernels to choose between")),
    ("autocast", lambda c: bool(c.autocast),
     lambda r: (_count_of(r, "matmuls_in_autocast_dtype") > 0,
                f"{_count_of(r, 'matmuls_in_autocast_dtype')} of {_count_of(r, 'matmuls_seen')} matrix multiplies "
                f"and convolutions of a call in {configuration(r['configuration']).autocast}")),
    ("channels_last", lambda c: c.channels_last,
     lambda r: (_count_of(r, "convs_channels_last") > 0,
                f"{_count_of(r, 'convs_channels_last')} of {_count_of(r, 'convs_seen')} convolutions of a call saw a "
                "channels_last input")),
    ("CUDA graphs", lambda c: MODE_BY_NAME[c.mode].cudagraphs,
     lambda r: (_count_of(r, "cudagraphs_recorded") > 0, f"{_count_of(r, 'cudagraphs_recorded')} CUDA graphs recorded")),
)


def setting_checks(df, device: str) -> list[Check]:
    """One line per setting the profile's configurations name: PASS with the evidence its rows read back
    from torch; FAIL where a row's setting did not take effect (the row failed, saying so); SKIP where it
    does not apply here. CUDA graphs only on CUDA (a CPU records none)."""
    checks = []
    for setting, names, proof in SETTING_PROOFS:
        rows = [r for r in df.to_dict("records") if names(configuration(r["configuration"]))]
        if not rows or (setting == "CUDA graphs" and device != "cuda"):
            continue
        ok = [r for r in rows if r["status"] == "ok"]
        failed = [r for r in rows if r["status"] not in ("ok", "unsupported")]
        if failed:
            checks.append(_check(f"setting {setting}", False, "; ".join(
                f"{r['configuration']}: {r['error'][:200]}" for r in failed)))
        elif not ok:
            checks.append(Check(f"setting {setting}", "SKIP", rows[0]["error"][:200]))
        else:
            proofs = [(r["configuration"], *proof(r)) for r in ok]
            checks.append(_check(f"setting {setting}", all(took for _, took, _ in proofs),
                                 "; ".join(f"{name}: {words}" for name, _, words in proofs)))
    return checks


def oom_check(device: str, folder: Path, quick: bool = False) -> Check:
    """CUDA: a batch whose input fits the free memory but whose first activations do not must become
    `oom` rows in every mode, fired in the model's forward (not where the batch is built), while the
    workers of another group (batch 1) stay alive beside it and measure their next round. `quick`:
    eager and reduce-overhead only (QUICK_OOM_MODES: a CUDA-graph mode's worker beside the failures)."""
    if device != "cuda":
        return Check("oversized batch beside live workers", "SKIP",
                     "CPU: an allocation past RAM is killed by the OS, not raised")
    import torch

    from .results.rows import read_results
    from .sweep.loop import run_sweep

    # tiny ResNet's float32 image (32 x 32); its first convolution's output is 2/3 of its input
    image_bytes = 3 * 32 * 32 * 4
    huge = int(OOM_INPUT_SHARE * torch.cuda.mem_get_info()[0] // image_bytes)
    modes = QUICK_OOM_MODES if quick else ("eager", "default", "reduce-overhead")
    cfg = BenchConfig(label="selfcheck oom", models=("resnet",), configurations=modes,
                      device="cuda", live_groups=2, **(FAST | REUSE | {"batch_sizes": (1, huge)}))
    run_sweep(cfg, folder / "oom.jsonl", progress=False)
    rows = read_results(folder / "oom.jsonl").rows
    problems = oom_problems(rows, huge, cfg.configurations, cfg.repeats, eager_after_selection(cfg))
    where = sorted({r.error.rsplit("[", 1)[-1].split("]")[0] for r in rows if r.batch_size == huge and "[" in r.error})
    return _check("oversized batch beside live workers", not problems, "; ".join(problems) or
                  f"batch {huge:,}: oom in every mode (at {', '.join(where)}), not measured again; batch 1's "
                  "workers measured round 1 beside it, in the same processes")


def oom_problems(rows: list, huge: int, configurations: tuple, repeats: int, eager_later: bool = True) -> list[str]:
    """What is wrong with the oversized-batch profile's rows, by the sweep's own rules: round 0 holds
    every configuration of both groups; the oversized group, with no configuration left in its race, is
    not measured again (sweep/adaptive.race_round); a later round of batch 1 holds its race's contenders
    and eager (`eager_later`; else eager's worker measured round 0 alone: jobs.eager_after_selection), in
    round 0's processes, which lived on beside the oversized group's failures."""
    from .config.configurations import BASELINE

    big, small = [r for r in rows if r.batch_size == huge], [r for r in rows if r.batch_size == 1]
    problems = [f"batch {huge:,} {r.configuration} round {r.repeat}: {r.status} {r.error[:120]}" for r in big
                if r.status != "oom" or "inputs.py" in r.error]
    problems += [f"batch {huge:,} {r.configuration} measured again in round {r.repeat}" for r in big if r.repeat > 0]
    problems += [f"batch 1 {r.configuration} round {r.repeat}: {r.status} {r.error[:120]}" for r in small if r.status != "ok"]
    problems += [f"batch 1 {r.configuration} round 1 ran in a fresh process" for r in small
                 if r.repeat == 1 and r.prepared_round != 0]
    for batch, group in ((f"{huge:,}", big), ("1", small)):
        missing = sorted(set(configurations) - {r.configuration for r in group if r.repeat == 0})
        if missing:
            problems.append(f"batch {batch} has no round-0 row of {', '.join(missing)}")
    eager_rounds = {r.repeat for r in small if r.configuration == BASELINE}
    if eager_rounds != (set(range(repeats)) if eager_later else {0}):
        problems.append(f"batch 1's eager ran in rounds {sorted(eager_rounds)}, not "
                        + (f"0 to {repeats - 1}" if eager_later else "0 alone (timed beside each configuration after)"))
    later = eager_rounds - {0} if eager_later else set(range(1, repeats))
    alone = sorted(r for r in later if not any(o.repeat == r and o.configuration != BASELINE for o in small))
    if alone:  # an ok group keeps a contender in its race: a later round without one lost it
        problems.append(f"batch 1's round(s) {', '.join(map(str, alone))} measured "
                        + ("eager without a contender" if eager_later else "no contender"))
    return problems


def run(device: str = "auto", folder: Path | None = None, cells: list | None = None, quick: bool = False):
    """Every check, in order, as it is made (a generator: main prints each at once). `cells`, if given,
    receives every measured cell's record (the DataFrame's rows) and each environment record; `quick`:
    a GPU's core checks alone (`profiles`, `oom_check`)."""
    from .measure.environment import resolve_device
    from .results.aggregate import load_dataframe
    from .results.rows import read_results
    from .sweep.loop import run_sweep

    device = resolve_device(device)
    cells = [] if cells is None else cells
    with tempfile.TemporaryDirectory(prefix="selfcheck-") as tmp:
        folder = Path(folder or tmp)
        yield clock_check(device)
        for number, cfg in enumerate(profiles(device, quick)):
            path = folder / f"profile{number}.jsonl"
            reuse = cfg.repeats == REUSE["repeats"]
            run_sweep(cfg, path, progress=False)
            frame = load_dataframe(path)
            cells += frame.to_dict("records")
            yield from row_checks(frame, device, profiled=cfg.profiler)
            yield from setting_checks(frame, device)
            if cfg.label == GRAPH_BREAKS_LABEL:
                yield tree_check(frame)
            rows = read_results(path).rows
            cells.append({"label": cfg.label, "environment": rows[0].env if rows else {}})
            if reuse:
                yield from reuse_checks(rows)
            yield env_check(rows, device)
        yield oom_check(device, folder, quick)


def main(device: str, folder: str | None, json_path: str | None = None, quick: bool = False) -> int:
    started = time.perf_counter()
    checks, cells = [], []
    if json_path:  # before any check: a link planted there, or someone's file, is refused now, not at the end
        check_ours(Path(json_path))
    try:
        for check in run(device, Path(folder) if folder else None, cells, quick):
            print(check.line(), flush=True)
            checks.append(check)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (__main__): gpu_probe.sh's cap; what was checked is kept
        if json_path:
            with no_second_stop():
                write_json(Path(json_path), checks, cells, time.perf_counter() - started, complete=False)
        print(f"selfcheck: cut short after {len(checks)} checks, {time.perf_counter() - started:.0f} s",
              file=sys.stderr)
        raise
    failed = [c for c in checks if c.status == "FAIL"]
    seconds = time.perf_counter() - started
    print(f"selfcheck: {len(checks) - len(failed)} of {len(checks)} checks passed or skipped, "
          f"{len(failed)} failed, {seconds:.0f} s", file=sys.stderr)
    if json_path:
        with no_second_stop():
            write_json(Path(json_path), checks, cells, seconds)
    return 1 if failed else 0



def write_json(path: Path, checks: list[Check], cells: list[dict], seconds: float, complete: bool = True) -> None:
    """What a GPU owner sends back: every check with its reason, and every cell's record (latencies,
    compile times, memory, CUDA-graph and profiler fields) with its profile's environment; `complete`
    False where the run was cut short (its checks so far: "passed" is then false)."""
    passed = complete and not any(c.status == "FAIL" for c in checks)
    report = {"selfcheck_version": 1, "passed": passed, "complete": complete, "seconds": seconds,
              "checks": [dataclasses.asdict(c) for c in checks],
              "cells": [{key: _plain(value) for key, value in cell.items()} for cell in cells]}
    write_file(path, json.dumps(report, indent=1, default=str, allow_nan=False), path.parent)  # no link followed


def _plain(value):
    """A DataFrame value as JSON: NaN (a cell without a speedup) -> null, numpy scalars -> numbers."""
    if hasattr(value, "item") and not isinstance(value, (list, dict)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
