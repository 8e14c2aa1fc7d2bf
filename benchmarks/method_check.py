"""Is the engine's speedup right? The engine (the real sweep, with the default CPU report's settings:
rounds of eager and compiled workers taking turns, extra rounds for precision within its
budget) beside an independent measurement with torch.utils.benchmark, in one run, for full-size
ResNet-50 and ViT-B/16 at batch 1 on the CPU, for one configuration against eager.

    python benchmarks/method_check.py                      # resnet and vit, cpu-report.yaml's settings
    python benchmarks/method_check.py --params parameters/cpu-report.yaml --reference-processes 4
    python benchmarks/method_check.py --models resnet --configuration default+freezing

Engine and reference take turns, so both sample the same stretches of a drifting machine: one sweep
with the profile's settings (its workers kept across rounds, as in a report), and after round r of
every cell of its first pass (`repeats` rounds) one reference process per model (run_sweep's
after_round; their time is not charged to the engine's budget); then the engine's extra rounds (its
target and budget), then the remaining reference processes.

The reference: `--reference-processes` fresh processes per model (default 4, models alternating),
each building the same model and inputs (bench_utils.measure.models and inputs) and timing, with
Timer.blocked_autorange(min_run_time) after 10 warm-up calls each: eager, then the configuration
(`--configuration`, default "default": its mode, autocast and layout, and freezing set as PyTorch's
own harness sets it, torch._inductor.config.freezing = True before compiling), then eager again (A-B-A), with the C allocator set up as the profile's workers
(keep_freed_memory). A process's speedup is the geometric mean of its two eager medians over its
compiled median, so a drift of the machine during the process cancels to
first order; the reference speedup is the geometric mean over processes, shown with its 95%
t-interval over them and their range. It prints each figure, the ratios, whether the reference lies
inside the engine's interval, and whether the two agree within both intervals (the reference is a
measurement too). Run it on an otherwise idle machine.

On a GPU (`--device cuda`): the engine is a sweep of `--params` (default benchmarks/gpu-probe.yaml, its
models, batch sizes and configurations), or the rows of one already run (`--engine-results`, as
benchmarks/gpu_probe.sh does: the probe profile's own rows); then one reference process times every cell
(model and batch size) and configuration by two independent clocks, each a call at a time, the device
synchronized after it (what a caller waits, the engine's definition): `Timer.blocked_autorange` of
"fn(); synchronize()" and `triton.testing.do_bench` of the same after a synchronize (do_bench clears the
L2 before each call: a cold L2, which calls one after another do not have); and, for information, the device's
time per call with calls queued (`do_bench` of fn alone). Eager is timed first and last.
Each latency (eager's own worker's, each configuration's, the eager timed beside it) and each speedup
is said within 10% of Timer's or not, and the last line counts them.

    python benchmarks/method_check.py --device cuda --engine-results reports/gpu-probe/results.jsonl
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import math
import tempfile
from pathlib import Path

import dataclasses
import time

from bench_utils.config.parameters_file import load_config
from bench_utils.results.aggregate import load_dataframe
from bench_utils.sweep.loop import run_sweep

WARMUP_CALLS = 10  # before each Timer measurement, as the re-run issue's reference did


def reference(model_name: str, min_run_time: float, keep_freed_memory: bool, name: str = "default") -> dict:
    """In this process: Timer medians (ms) of eager, configuration `name`, and eager again after it;
    with `keep_freed_memory`, the C allocator set up as the engine's workers are (measure/host_memory.py)."""
    import contextlib

    import torch
    from torch.utils.benchmark import Timer

    from bench_utils.config.configurations import configuration
    from bench_utils.config.registry import get_spec
    from bench_utils.measure.inputs import build_inputs
    from bench_utils.measure.models import load_model

    if keep_freed_memory:
        from bench_utils.measure.host_memory import keep_freed_memory as keep

        keep()
    spec = get_spec(model_name)
    model = load_model(spec, "full", "random", "cpu", "float32").model
    inputs = build_inputs(spec, "full", 1, "cpu", torch.float32, None)

    def timer_ms(fn) -> float:
        for _ in range(WARMUP_CALLS):
            fn()
        timer = Timer("fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
        return timer.blocked_autorange(min_run_time=min_run_time).median * 1000

    config = configuration(name)
    with torch.inference_mode():
        eager = lambda: model(**inputs)  # noqa: E731
        eager_ms = timer_ms(eager)
        layout = torch.channels_last if config.channels_last else torch.contiguous_format
        candidate = model.to(memory_format=layout) if config.channels_last else model
        candidate_inputs = {k: v.contiguous(memory_format=layout) if v.dim() == 4 and v.is_floating_point() else v
                            for k, v in inputs.items()}
        if config.compiled:
            reference_compile_settings(config)
            candidate = torch.compile(candidate, mode=config.mode, dynamic=False)
        autocast = (torch.autocast("cpu", dtype=getattr(torch, config.autocast)) if config.autocast
                    else contextlib.nullcontext())

        def compiled():
            with autocast:
                return candidate(**candidate_inputs)

        compiled_ms = timer_ms(compiled)
        if config.channels_last:
            model.to(memory_format=torch.contiguous_format)
        eager_after_ms = timer_ms(eager)
    return {"eager_ms": eager_ms, "compiled_ms": compiled_ms, "eager_after_compile_ms": eager_after_ms}


def reference_compile_settings(config) -> None:
    """Set the configuration's Inductor settings as PyTorch's own benchmark harness does, written out
    here, not through the engine's code (benchmarks/dynamo/common.py: `--freezing` sets
    torch._inductor.config.freezing = True before compiling); anything else the reference does not know
    is refused, not guessed."""
    import torch

    unknown = set(config.inductor_settings) - {"freezing"}
    if unknown:
        raise SystemExit(f"the reference harness sets freezing only, not {', '.join(sorted(unknown))}")
    torch._inductor.config.freezing = bool(config.inductor_settings.get("freezing"))


def engine_config(params: Path, models: list[str], name: str):
    """The profile's settings for `models`, racing only configuration `name` against eager (random
    weights: the reference builds the same model)."""
    return dataclasses.replace(load_config(params), label="method check", models=tuple(models), weights="random",
                               configurations=("eager", name))


def aba_speedup(ref: dict) -> float:
    """Eager before and after the compiled timing, geometric mean, over the compiled median."""
    return math.sqrt(ref["eager_ms"] * ref["eager_after_compile_ms"]) / ref["compiled_ms"]


def reference_interval(speedups: list[float]) -> tuple[float, float]:
    """The reference speedup's 95% t-interval over its processes (each one independent sample, log
    scale): the reference is a measurement too, and 4 processes spread 1-4% (benchmarks/README.md).
    (nan, nan) with fewer than two processes: no spread to go by."""
    from bench_utils.results.stats import log_halfwidth

    if len(speedups) < 2:
        return math.nan, math.nan
    logs = [math.log(v) for v in speedups]
    mean = sum(logs) / len(logs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    half = log_halfwidth(sd, len(logs))
    return math.exp(mean - half), math.exp(mean + half)


def agree_within_both(engine: float, low: float, high: float, ref: float, ref_low: float, ref_high: float) -> bool | None:
    """Do two independent estimates agree: their log difference within the root sum of squares of their
    95% half-widths (log scale; each interval's wider side), the difference's own 95% interval. "The
    reference inside the engine's interval" alone treats the reference as exact, and reads a tight
    engine interval beside a spread reference as a disagreement (a ratio of 0.982, the reference 0.3%
    past the engine's bound, is inside this test: benchmarks/README.md#xeon167-method-check). None when an interval is missing (one reference process)."""
    bounds = (low, high, ref_low, ref_high)
    if not all(math.isfinite(v) and v > 0 for v in bounds):
        return None
    half_engine = max(math.log(high / engine), math.log(engine / low))
    half_ref = max(math.log(ref_high / ref), math.log(ref / ref_low))
    return abs(math.log(engine / ref)) <= math.hypot(half_engine, half_ref)


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def run_reference(model: str, min_run_time: float, keep_freed_memory: bool, name: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--reference", model, "--min-run-time", str(min_run_time),
                           "--configuration", name] + ["--keep-freed-memory"] * keep_freed_memory,
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cuda_reference(cells: list[tuple[str, int, list[str]]], min_run_time: float):
    """In this process, on CUDA, cell after cell (model, batch size, its configurations): per configuration
    ms per call by Timer.blocked_autorange and do_bench of a call followed by a synchronize (latency), and
    do_bench of calls queued back to back (GPU execution time); eager first and again last ("eager again"). One
    process for every cell (a spawned interpreter's imports took 14-30 s on the H200's host); each cell's
    JSON line printed as it ends, a failed cell's with its error, so a cut or a failure loses one cell."""
    import contextlib

    import torch
    from torch.utils.benchmark import Timer
    from triton.testing import do_bench

    from bench_utils.config.configurations import configuration
    from bench_utils.config.registry import get_spec
    from bench_utils.measure.inputs import build_inputs
    from bench_utils.measure.models import load_model

    def clocks(fn) -> dict:
        for _ in range(WARMUP_CALLS):
            fn()
        torch.cuda.synchronize()

        def waited():
            fn()
            torch.cuda.synchronize()

        def waited_after_l2_clear():
            # do_bench zeroes a 256 MB buffer (its L2 clear), then records its start event, then calls: the
            # first synchronize keeps the call's host work from overlapping that memset, which would put
            # the start event after part of it (the latency read low by up to the memset's time)
            torch.cuda.synchronize()
            waited()

        rep_ms = int(min_run_time * 1000)
        timer = Timer("f()", globals={"f": waited}, num_threads=torch.get_num_threads())
        return {"timer_ms": timer.blocked_autorange(min_run_time=min_run_time).median * 1000,
                "do_bench_ms": do_bench(waited_after_l2_clear, warmup=25, rep=rep_ms, return_mode="median"),
                "queued_device_ms": do_bench(fn, warmup=25, rep=rep_ms, return_mode="median")}

    for model_name, batch_size, names in cells:
        measured: dict = {"cell": f"{model_name}/{batch_size}"}
        try:
            spec = get_spec(model_name)
            model = load_model(spec, "full", "random", "cuda", "float32").model
            inputs = build_inputs(spec, "full", batch_size, "cuda", torch.float32, None)
            with torch.inference_mode():
                for name in ["eager", *names, "eager"]:
                    config = configuration(name)
                    key = name if name not in measured else "eager again"
                    candidate = model
                    if config.compiled:
                        torch._dynamo.reset()
                        reference_compile_settings(config)
                        candidate = torch.compile(model, mode=config.mode, dynamic=False)
                    autocast = (torch.autocast("cuda", dtype=getattr(torch, config.autocast)) if config.autocast
                                else contextlib.nullcontext())

                    def call(candidate=candidate, autocast=autocast):
                        with autocast:
                            return candidate(**inputs)

                    measured[key] = clocks(call)
        except Exception as err:  # noqa: BLE001 - one cell's failure (an OOM at batch 16) is its line's
            measured["error"] = f"{type(err).__name__}: {str(err).splitlines()[0][:300] if str(err) else ''}"
        print(json.dumps(measured), flush=True)
        model = inputs = None
        torch._dynamo.reset()
        torch.cuda.empty_cache()


def reference_lines(cells: list[tuple[str, int, list[str]]], min_run_time: float):
    """The reference process's cells as they end: (its "model/batch", its clocks or its error)."""
    spec = [f"{model}/{batch}:{','.join(names)}" for model, batch, names in cells]
    with subprocess.Popen([sys.executable, __file__, "--cuda-reference", *spec, "--min-run-time", str(min_run_time)],
                          stdout=subprocess.PIPE, text=True) as proc:
        for line in proc.stdout:
            if line.startswith("{"):
                measured = json.loads(line)
                yield measured.pop("cell"), measured


WITHIN = 0.10  # the engine's latency or speedup agrees with Timer's when their ratio is within 1 -+ this


def _agrees(ratio: float) -> str:
    return "yes" if abs(ratio - 1.0) <= WITHIN else "NO"


def cuda_main(args) -> None:
    """--device cuda: the engine's rows (a sweep of --params, or --engine-results) against one reference
    process, every configuration's latency and speedup, each said within WITHIN of Timer's or not, cell
    by cell as the reference ends it."""
    params = args.params if args.params_given else Path(__file__).resolve().parents[1] / "benchmarks" / "gpu-probe.yaml"
    cfg = load_config(params)
    with tempfile.TemporaryDirectory(prefix="method-check-") as tmp:
        path = args.engine_results
        if path is None:
            path = Path(tmp) / "engine.jsonl"
            run_sweep(cfg, path, progress=False)
        df = load_dataframe(path)
    df = df[df["status"] == "ok"]
    names = [name for name in cfg.configurations if name != "eager"]
    cells, frames = [], {}
    for model in sorted(set(df["model"])):
        for batch in sorted(set(df[df["model"] == model]["batch_size"])):
            cell = frames[f"{model}/{batch}"] = df[(df["model"] == model) & (df["batch_size"] == batch)].set_index(
                "configuration")
            if "eager" in cell.index:  # each cell its own configurations (the race or the fit may leave some out)
                cells.append((model, int(batch), [name for name in names if name in cell.index]))
    if not cells:  # no reference to start: an empty --cuda-reference would otherwise read as the CPU check
        print(f"no cell of {path} has an ok eager row: nothing to check the engine against")
        return
    latencies, speedups, worst = [], [], 0.0
    for key, ref in reference_lines(cells, args.min_run_time):
        model, batch = key.split("/")
        if "error" in ref:
            print(f"\n{model}, batch {batch} (CUDA): the reference failed: {ref['error']}")
            continue
        cell, ran = frames[key], [name for name in ref if name not in ("eager", "eager again")]
        eager_ref = {clock: math.sqrt(ref["eager"][clock] * ref["eager again"][clock]) for clock in ref["eager"]}
        eager_own = cell.loc["eager", "latency_ms_median"]
        print(f"\n{model}, batch {batch} (CUDA); ms per call: engine (the sweep's rows) | Timer.blocked_autorange | "
              "do_bench, each a call then synchronize (L2 cleared before it) | do_bench, calls queued")
        print(f"  eager, its own worker: {eager_own:.3f} | {eager_ref['timer_ms']:.3f} | {eager_ref['do_bench_ms']:.3f}"
              f" | {eager_ref['queued_device_ms']:.3f} (reference: before and after, geometric mean); engine / Timer "
              f"{eager_own / eager_ref['timer_ms']:.3f}: within 10% {_agrees(eager_own / eager_ref['timer_ms'])}")
        latencies.append(eager_own / eager_ref["timer_ms"])
        for name in ran:
            row, r = cell.loc[name], ref[name]
            ref_speedups = {clock: eager_ref[clock] / r[clock] for clock in ("timer_ms", "do_bench_ms")}
            latency, speedup = row["latency_ms_median"] / r["timer_ms"], row["speedup"] / ref_speedups["timer_ms"]
            beside = row["eager_ms_median"] / eager_ref["timer_ms"]  # eager timed in this configuration's processes
            latencies += [latency, beside]
            speedups.append(speedup)
            worst = max(worst, abs(math.log(speedup)))
            print(f"  {name}: {row['latency_ms_median']:.3f} | {r['timer_ms']:.3f} | {r['do_bench_ms']:.3f} | "
                  f"{r['queued_device_ms']:.3f}; engine / Timer {latency:.3f}: within 10% {_agrees(latency)}; "
                  f"eager beside it {row['eager_ms_median']:.3f} (engine / Timer {beside:.3f}: {_agrees(beside)})")
            print(f"    speedup: engine {row['speedup']:.3f} [{row['speedup_ci95_low']:.3f}, "
                  f"{row['speedup_ci95_high']:.3f}] ({int(row['paired_rounds'])} rounds), Timer "
                  f"{ref_speedups['timer_ms']:.3f}, do_bench {ref_speedups['do_bench_ms']:.3f}; engine / Timer "
                  f"{speedup:.3f}: within 10% {_agrees(speedup)}")
    agree = lambda ratios: sum(abs(ratio - 1.0) <= WITHIN for ratio in ratios)  # noqa: E731
    print(f"\nwithin 10% of Timer's: latencies {agree(latencies)} of {len(latencies)}, speedups {agree(speedups)} of "
          f"{len(speedups)}; largest disagreement of a speedup {math.exp(worst) - 1:.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["resnet", "vit"])
    parser.add_argument("--params", type=Path, default=Path(__file__).resolve().parents[1] / "parameters" /
                        "cpu-report.yaml", help="the engine's settings (default: the default CPU report's)")
    parser.add_argument("--configuration", default="default", help="the configuration checked against eager")
    parser.add_argument("--reference-processes", type=int, default=4, help="A-B-A reference processes per model")
    parser.add_argument("--min-run-time", type=float, default=4.0, help="Timer.blocked_autorange, seconds")
    parser.add_argument("--reference", help=argparse.SUPPRESS)  # internal: one model's reference, as JSON
    parser.add_argument("--keep-freed-memory", action="store_true", help=argparse.SUPPRESS)  # internal: the profile's
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--engine-results", type=Path, help="cuda: the engine's rows of an earlier sweep of --params")
    parser.add_argument("--cuda-reference", nargs="*", help=argparse.SUPPRESS)  # internal: cells on CUDA, JSON lines
    args = parser.parse_args()
    args.params_given = any(arg == "--params" or arg.startswith("--params=") for arg in sys.argv[1:])
    if args.cuda_reference is not None:  # MODEL/BATCH:CONFIGURATION,CONFIGURATION ... (an empty list: none)
        cells = []
        for text in args.cuda_reference:
            cell, _, names = text.partition(":")
            cells.append((cell.split("/")[0], int(cell.split("/")[1]), [n for n in names.split(",") if n]))
        cuda_reference(cells, args.min_run_time)
        return
    if args.device == "cuda":
        cuda_main(args)
        return
    if args.reference:
        print(json.dumps(reference(args.reference, args.min_run_time, args.keep_freed_memory, args.configuration)))
        return
    refs: dict[str, list[dict]] = {model: [] for model in args.models}
    cfg = engine_config(args.params, args.models, args.configuration)
    started = time.perf_counter()

    def reference_pass() -> None:
        for model in args.models:
            refs[model].append(run_reference(model, args.min_run_time, cfg.keep_freed_memory, args.configuration))

    def after_round(round_) -> None:
        """After round r of every cell of the first pass: one reference process per model."""
        last_group = (cfg.models[-1], cfg.batch_sizes[-1])
        if round_.group == last_group and round_.repeat < cfg.repeats and len(refs[args.models[0]]) < args.reference_processes:
            reference_pass()

    with tempfile.TemporaryDirectory(prefix="method-check-") as tmp:
        path = Path(tmp) / "engine.jsonl"
        engine_s = run_sweep(cfg, path, progress=False, after_round=after_round).seconds
        while len(refs[args.models[0]]) < args.reference_processes:  # the rest, after the extra rounds
            reference_pass()
        df = load_dataframe(path).set_index(["model", "configuration"])
    print(f"method check of {args.configuration} with {args.params.name}'s settings: engine {engine_s:.0f} s, "
          f"whole run {time.perf_counter() - started:.0f} s")
    for model in args.models:
        eager, compiled = df.loc[(model, "eager")], df.loc[(model, args.configuration)]
        speedups = [aba_speedup(ref) for ref in refs[model]]
        ref_speedup = geometric_mean(speedups)
        low, high = compiled["speedup_ci95_low"], compiled["speedup_ci95_high"]
        print(f"\n{model} (full size, batch 1, CPU)")
        print(f"  engine:    eager {eager['latency_ms_median']:.2f} ms [{eager['latency_ms_ci95_low']:.2f}, "
              f"{eager['latency_ms_ci95_high']:.2f}], compiled {compiled['latency_ms_median']:.2f} ms, "
              f"speedup {compiled['speedup']:.3f} [{low:.3f}, {high:.3f}] "
              f"({int(compiled['paired_rounds'])} rounds)")
        for i, (ref, speedup) in enumerate(zip(refs[model], speedups), 1):
            print(f"  reference {i}: eager {ref['eager_ms']:.2f} ms, compiled {ref['compiled_ms']:.2f} ms, "
                  f"eager again {ref['eager_after_compile_ms']:.2f} ms, A-B-A speedup {speedup:.3f}")
        ref_low, ref_high = reference_interval(speedups)
        agree = agree_within_both(compiled["speedup"], low, high, ref_speedup, ref_low, ref_high)
        print(f"  reference: speedup {ref_speedup:.3f} [{ref_low:.3f}, {ref_high:.3f}] (processes "
              f"{min(speedups):.3f}-{max(speedups):.3f}); inside the engine's interval: "
              f"{'yes' if low <= ref_speedup <= high else 'no'}; the two agree within both intervals (their "
              f"difference within its combined 95% interval): "
              f"{ {True: 'yes', False: 'no', None: 'cannot tell (one reference process)'}[agree]}")
        ref_eager = geometric_mean([ms for ref in refs[model] for ms in (ref["eager_ms"], ref["eager_after_compile_ms"])])
        print(f"  ratios:    engine speedup / reference speedup {compiled['speedup'] / ref_speedup:.3f}; "
              f"engine eager (the eager-only cell) / reference eager (all its readings) "
              f"{eager['latency_ms_median'] / ref_eager:.3f}")


if __name__ == "__main__":
    main()
