"""Groundwork for serving forms beside torch.compile (AOTInductor packages, ONNX Runtime): does each
default model export, what does each form cost to build and to start, and how fast does it run against
eager float32 on this machine? A probe outside the engine, to size the design of the race's deploy
configurations (the issue "Compile once, serve many"); its figures are not the report's.

Each (model, form) is measured in a process of its own: the model and inputs exactly as a measuring
process builds them (bench_utils.measure.cell: the shipped config, random weights unless cached, the
shipped photograph through the model's processor, batch 1, float32), then the form built once
(torch.compile's first call; torch.export + aoti_compile_and_package; torch.onnx.export + an
InferenceSession on the CPU execution provider), then eager and the form timed in alternating blocks
(`--pairs` pairs of `--block-s` seconds) in that process: the speedup is the geometric mean of the
pairs' ratios of medians. A built package is then loaded in a fresh process and called once: its
start-up (load + first call, seconds; the import of torch before it is printed apart).

    python benchmarks/deploy_probe.py                        # the default report's four models
    python benchmarks/deploy_probe.py --models resnet --forms aot-inductor

ONNX Runtime needs `pip install onnx onnxruntime onnxscript`. Run it alone on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORMS = ("default", "aot-inductor", "onnxruntime")
MODELS = ("resnet", "vit", "segformer", "deeplabv3-mobilenet")


def first_tensor(output):
    """The model's first output tensor (logits), from a ModelOutput, a tuple or a list."""
    import torch

    if isinstance(output, torch.Tensor):
        return output
    if hasattr(output, "to_tuple"):
        output = output.to_tuple()
    return first_tensor(output[0]) if not isinstance(output[0], torch.Tensor) else output[0]


def build(form: str, model, inputs: dict, folder: Path):
    """(the form's callable returning its first output tensor, seconds to build it, its file or None)."""
    import torch

    started = time.perf_counter()
    if form == "default":
        compiled = torch.compile(model)
        call = lambda: first_tensor(compiled(**inputs))  # noqa: E731
        call()  # the compile: torch.compile's build is its first call
        return call, time.perf_counter() - started, None
    if form == "aot-inductor":
        exported = torch.export.export(model, args=(), kwargs=inputs)
        path = torch._inductor.aoti_compile_and_package(exported, package_path=str(folder / "model.pt2"))
        runner = torch._inductor.aoti_load_package(path)
        return (lambda: first_tensor(runner(**inputs))), time.perf_counter() - started, path
    if form == "onnxruntime":
        import onnxruntime

        path = folder / "model.onnx"
        torch.onnx.export(model, (), str(path), kwargs=inputs, dynamo=True, external_data=False)
        options = onnxruntime.SessionOptions()  # its idle threads must not spin through eager's blocks in
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # this same process
        session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        feeds = {name: inputs[name].numpy() for name in names}
        return (lambda: torch.from_numpy(session.run(None, feeds)[0])), time.perf_counter() - started, str(path)
    raise ValueError(f"form: {form!r} is not allowed; allowed: {', '.join(FORMS)}")


def block_median_s(call, block_s: float) -> float:
    samples, started = [], time.perf_counter()
    while time.perf_counter() - started < block_s or len(samples) < 3:
        t = time.perf_counter()
        call()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def measure_one(model_name: str, form: str, pairs: int, block_s: float) -> dict:
    """In this process: build the model and the form, check its output, time eager and the form in
    alternating blocks."""
    import torch

    from bench_utils.config.parameters_file import config_from_dict
    from bench_utils.measure.cell import load_for_process, process_inputs

    cfg = config_from_dict({"models": [model_name], "size": "full", "device": "cpu", "weights": "auto"})
    record: dict = {"model": model_name, "form": form}
    with torch.inference_mode():
        spec, loaded = load_for_process(cfg, model_name, "cpu", record)
        model, inputs = loaded.model, process_inputs(cfg, spec, 1, "cpu")
        eager = lambda: first_tensor(model(**inputs))  # noqa: E731
        reference = eager()
        folder = Path(tempfile.mkdtemp(prefix="deploy-probe-"))
        try:
            call, record["build_s"], record["file"] = build(form, model, inputs, folder)
        except Exception as err:  # noqa: BLE001 - the exporter's own message is the finding
            record["error"] = f"{type(err).__name__}: {str(err).strip().splitlines()[0][:300]}"
            return record
        record["max_abs_diff"] = float((call() - reference).abs().max())
        for _ in range(3):  # warm both
            eager(), call()
        ratios = []
        for _ in range(pairs):
            e, f = block_median_s(eager, block_s), block_median_s(call, block_s)
            ratios.append(math.log(e / f))
        record["speedup"] = math.exp(statistics.fmean(ratios))
        record["pair_speedups"] = [round(math.exp(r), 3) for r in ratios]
        record["file_mb"] = Path(record["file"]).stat().st_size / 2**20 if record["file"] else None
    return record


def startup(form: str, path: str, model_name: str) -> dict:
    """In a fresh process: torch's import, then the package's load and its first call, seconds."""
    started = time.perf_counter()
    import torch

    from bench_utils.config.parameters_file import config_from_dict
    from bench_utils.measure.cell import process_inputs
    imported = time.perf_counter() - started
    cfg = config_from_dict({"models": [model_name], "size": "full", "device": "cpu"})
    inputs = process_inputs(cfg, cfg.spec(model_name), 1, "cpu")
    with torch.inference_mode():
        began = time.perf_counter()
        if form == "aot-inductor":
            runner = torch._inductor.aoti_load_package(path)
            first_tensor(runner(**inputs))
        else:
            import onnxruntime

            session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
            session.run(None, {i.name: inputs[i.name].numpy() for i in session.get_inputs()})
        return {"import_s": imported, "startup_s": time.perf_counter() - began}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--forms", nargs="+", default=list(FORMS), choices=FORMS)
    parser.add_argument("--pairs", type=int, default=6, help="eager/form block pairs per process")
    parser.add_argument("--block-s", type=float, default=0.5, help="seconds per timed block")
    parser.add_argument("--one", nargs=2, metavar=("MODEL", "FORM"), help=argparse.SUPPRESS)
    parser.add_argument("--startup", nargs=3, metavar=("FORM", "PATH", "MODEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure_one(*args.one, args.pairs, args.block_s)))
        return 0
    if args.startup:
        print(json.dumps(startup(*args.startup)))
        return 0
    for model_name in args.models:
        for form in args.forms:
            done = subprocess.run([sys.executable, __file__, "--one", model_name, form, "--pairs", str(args.pairs),
                                   "--block-s", str(args.block_s)], capture_output=True, text=True)
            lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
            if not lines:
                print(f"{model_name} {form}: the process failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            record = json.loads(lines[-1])
            if "error" in record:
                print(f"{model_name} {form}: cannot run it: {record['error']}")
                continue
            line = (f"{model_name} {form}: built in {record['build_s']:.1f} s; {record['speedup']:.2f}x eager "
                    f"float32 (pairs {record['pair_speedups']}); max |diff| {record['max_abs_diff']:.2e}")
            if record["file"]:
                fresh = subprocess.run([sys.executable, __file__, "--startup", form, record["file"], model_name],
                                       capture_output=True, text=True)
                start = json.loads([x for x in fresh.stdout.splitlines() if x.startswith("{")][-1])
                line += (f"; {record['file_mb']:.0f} MB file, fresh process: load + first call "
                         f"{start['startup_s']:.2f} s (after {start['import_s']:.1f} s of imports)")
                Path(record["file"]).unlink(missing_ok=True)
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
