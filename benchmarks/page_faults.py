"""Does a model page-fault its tensors in on every call? One process, one full-size model at batch 1
on the CPU, back-to-back calls for `--seconds`, printed per window of `--window` seconds: the median
latency and the minor page faults per call (getrusage). With --keep-freed-memory the process first
asks glibc to keep freed memory (bench_utils/measure/host_memory.py), as the sweep's workers do.

    python benchmarks/page_faults.py deeplabv3-mobilenet                       # glibc's defaults
    python benchmarks/page_faults.py deeplabv3-mobilenet --keep-freed-memory
    python benchmarks/page_faults.py deeplabv3-mobilenet --compiled --keep-freed-memory

Run it on an otherwise idle machine; a compiled run compiles first (tens of seconds, not counted).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="a registry name, e.g. deeplabv3-mobilenet")
    parser.add_argument("--seconds", type=float, default=30.0, help="of timed calls")
    parser.add_argument("--window", type=float, default=3.0, help="seconds per printed line")
    parser.add_argument("--compiled", action="store_true", help="torch.compile(model) (mode default)")
    parser.add_argument("--keep-freed-memory", action="store_true")
    args = parser.parse_args()
    if args.keep_freed_memory:
        from bench_utils.measure.host_memory import keep_freed_memory

        print(keep_freed_memory())
    import torch

    from bench_utils.config.registry import get_spec
    from bench_utils.measure.inputs import build_inputs
    from bench_utils.measure.models import load_model

    spec = get_spec(args.model)
    model = load_model(spec, "full", "random", "cpu", "float32").model
    inputs = build_inputs(spec, "full", 1, "cpu", torch.float32, None)
    run = torch.compile(model) if args.compiled else model
    with torch.inference_mode():
        for _ in range(3):  # compile (if asked) and warm up
            run(**inputs)
        start = time.perf_counter()
        while time.perf_counter() - start < args.seconds:
            window, faults, opened = [], minor_faults(), time.perf_counter()
            while time.perf_counter() - opened < args.window:
                before = time.perf_counter()
                run(**inputs)
                window.append(time.perf_counter() - before)
            print(f"{time.perf_counter() - start:5.1f} s: median {1000 * statistics.median(window):6.1f} ms, "
                  f"{(minor_faults() - faults) / len(window):8.0f} minor page faults per call ({len(window)} calls)",
                  flush=True)


if __name__ == "__main__":
    main()
