"""What compiling each registry model takes, in counts a CPU can measure: dynamo's graphs and graph
breaks, the operators Inductor lowers (post-grad FX nodes), the distinct kernels it generates (one
compile each: identical kernels are generated once), and the distinct GEMM/convolution shapes (what
max-autotune benchmarks Triton templates for). `plan` scales them to GPU compile seconds (sweep/compile_estimate.py);
no time is measured here.

    python benchmarks/compile_counts.py                 # every registry model, full size, default mode
    python benchmarks/compile_counts.py resnet vit --size tiny --out /tmp/counts.json

Each model compiles once in a process of its own with an empty Inductor cache (random weights,
batch 1, float32), on the CPU: Inductor's C++ kernels there stand in for its Triton kernels on a GPU
(the scheduler deciding the fusions is the same; each backend adds fusions of its own). Minutes per
model on a 2-core machine; it writes bench_utils/data/compile_counts.json unless --out says otherwise.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench_utils" / "data" / "compile_counts.json"
# how the generated wrapper module launches a kernel it compiled (C++ on a CPU, Triton on a GPU)
KERNEL_CALL = re.compile(r"async_compile\.(cpp_pybinding|cpp|triton)\(")
GEMM_CONV = ("mm", "addmm", "bmm", "baddbmm", "convolution", "_convolution")


def count_model(name: str, size: str) -> dict:
    """In a fresh process: compile `name` and count its graphs, kernels and GEMM/conv shapes."""
    import torch
    from torch._dynamo.utils import counters
    from torch._inductor import codecache, config

    from bench_utils.config.registry import get_spec
    from bench_utils.measure.inputs import build_inputs
    from bench_utils.measure.models import load_model

    shapes: set = set()
    nodes = []

    def gemm_conv_shapes(graph) -> None:  # a post-grad pass: sees the graph Inductor lowers
        nodes.append(sum(node.op == "call_function" for node in graph.nodes))
        for node in graph.nodes:
            if node.op == "call_function" and getattr(node.target, "__name__", "").split(".")[0] in GEMM_CONV:
                args = tuple(tuple(a.meta["val"].shape) for a in node.args
                             if hasattr(a, "meta") and hasattr(a.meta.get("val"), "shape"))
                shapes.add((str(node.target), args))

    kernels = []
    load = codecache.PyCodeCache.load_by_key_path.__func__

    def counting_load(cls, key, path, *args, **kwargs):
        text = Path(path).read_text(errors="replace")
        kernels.append(len(KERNEL_CALL.findall(text)))
        return load(cls, key, path, *args, **kwargs)

    codecache.PyCodeCache.load_by_key_path = classmethod(counting_load)
    config.post_grad_custom_post_pass = gemm_conv_shapes
    spec = get_spec(name)
    loaded = load_model(spec, size, "random", "cpu", "float32")
    inputs = build_inputs(spec, size, 1, "cpu", torch.float32)
    with torch.inference_mode():
        compiled = torch.compile(loaded.model)
        compiled(**inputs)
    return {"graphs": int(counters["stats"]["unique_graphs"]), "graph_breaks": int(sum(counters["graph_break"].values())),
            "nodes": sum(nodes), "kernels": sum(kernels), "gemm_conv_shapes": len(shapes),
            "num_params": loaded.num_params}


def _child(name: str, size: str, cache: str, queue) -> None:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    os.environ.pop("TRITON_CACHE_DIR", None)
    try:
        queue.put(count_model(name, size))
    except Exception as err:  # noqa: BLE001 - a model that fails is reported, the others go on
        queue.put({"error": f"{type(err).__name__}: {str(err).splitlines()[0][:300] if str(err) else ''}"})


def main() -> None:
    from bench_utils.config.registry import MODELS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", default=list(MODELS), help="registry names (default: all)")
    parser.add_argument("--size", default="full", choices=("full", "tiny"))
    parser.add_argument("--out", default=str(OUT), help="JSON file to write")
    args = parser.parse_args()
    import torch

    context = multiprocessing.get_context("spawn")
    counts = {}
    for name in args.models:
        with tempfile.TemporaryDirectory(prefix="compile-counts-") as cache:
            queue = context.Queue()
            process = context.Process(target=_child, args=(name, args.size, cache, queue))
            process.start()
            counts[name] = queue.get()
            process.join()
        print(name, counts[name], flush=True, file=sys.stderr)
    record = {"torch": torch.__version__, "date": dt.date.today().isoformat(), "size": args.size,
              "device": "cpu", "mode": "default", "batch_size": 1, "models": counts}
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
