"""What compiling one configuration alone costs, timed by plain torch outside the engine: in a fresh
process with an empty Inductor cache of its own, the model built as the engine builds it (random
weights, batch 1, float32), the configuration's Inductor settings set the way PyTorch's own harness
sets them (torch._inductor.config.freezing = True before compiling), torch.compile in its mode, and
the first call timed (trace, compile, run). Then the same compile again in a second fresh process with
the cache the first filled (warm). Compare with a report's compile_s of the same cell: each cell
compiles in an emptied cache of its own (paths.cell_cache_dir), so the figures should agree whatever
the report compiled before it.

    python benchmarks/cold_compile.py resnet default+freezing      # cold, then warm, one JSON line each
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile


def first_call_s(model_name: str, name: str) -> dict:
    """In this process: build, set, compile, time the first call; seconds and the FX-cache counts."""
    import time

    import torch
    from torch._dynamo.utils import counters

    from bench_utils.config.configurations import configuration
    from bench_utils.config.registry import get_spec
    from bench_utils.measure.inputs import build_inputs
    from bench_utils.measure.models import load_model

    config = configuration(name)
    unknown = set(config.inductor_settings) - {"freezing"}
    if unknown or config.packaged or config.autocast or config.channels_last:
        raise SystemExit(f"{name}: this harness sets freezing and a torch.compile mode only")
    spec = get_spec(model_name)
    model = load_model(spec, "full", "random", "cpu", "float32").model
    inputs = build_inputs(spec, "full", 1, "cpu", torch.float32, None)
    torch._inductor.config.freezing = bool(config.inductor_settings.get("freezing"))
    with torch.inference_mode():
        model(**inputs)  # eager's first call, as the engine's process makes one before compiling
        compiled = torch.compile(model, mode=config.mode)
        started = time.perf_counter()
        compiled(**inputs)
        seconds = time.perf_counter() - started
    return {"model": model_name, "configuration": name, "first_call_s": round(seconds, 2),
            "fx_cache_hits": int(counters["inductor"]["fxgraph_cache_hit"]),
            "fx_cache_misses": int(counters["inductor"]["fxgraph_cache_miss"]),
            "fx_cache_bypasses": int(counters["inductor"]["fxgraph_cache_bypass"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("configuration")
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.in_process:
        print(json.dumps(first_call_s(args.model, args.configuration)), flush=True)
        return
    with tempfile.TemporaryDirectory(prefix="cold-compile-") as cache:
        for state in ("cold", "warm"):
            proc = subprocess.run([sys.executable, __file__, args.model, args.configuration, "--in-process"],
                                  capture_output=True, text=True, check=True,
                                  env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache})
            print(json.dumps({"cache": state, **json.loads(proc.stdout.strip().splitlines()[-1])}), flush=True)


if __name__ == "__main__":
    main()
