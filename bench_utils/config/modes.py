"""The mode table: eager and each torch.compile mode, with everything the project needs to know about
it in one row (whether it records CUDA graphs, its extra warm-up, what a compile costs, its colour).
No torch.

Compile costs (`plan` uses them where the results file has not measured a cell yet), for a
full-size vision model, seconds. Cold (empty cache): ResNet-50's default-mode compile took 28 s in
pytorch/benchmark#1547 and convnets 35-80 s in pytorch#93517: 45 s. reduce-overhead adds CUDA-graph
recording. max-autotune benchmarks kernel choices: FastVideo#1445 reports +419 s cold. Warm (the
FX-graph cache hits; dynamo still traces): 2.0-2.5 s measured here for ViT-B/16 and ResNet-50 on CPU,
4 s for a warm max-autotune start in FastVideo#1445; larger graphs (DETR, Mask2Former) trace longer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    name: str  # "eager", or torch.compile(mode=name)
    cudagraphs: bool  # on CUDA it records CUDA graphs ("max-autotune-no-cudagraphs" separates autotuning from them)
    # untimed calls right after compiling, before the steady-state warm-up: CUDA-graph trees record on
    # the first calls, max-autotune benchmarks kernels on first use (calls, not seconds)
    extra_warmup_calls: int
    cold_compile_s: float  # first compile with an empty compiler cache (see the module docstring)
    warm_compile_s: float  # the same compile in a new process once the on-disk cache holds it
    colour: int  # index into the report's colour-blind palette: a mode keeps its colour on every chart


MODE_TABLE = (
    Mode("eager", cudagraphs=False, extra_warmup_calls=0, cold_compile_s=0.0, warm_compile_s=0.0, colour=0),
    Mode("default", cudagraphs=False, extra_warmup_calls=1, cold_compile_s=45.0, warm_compile_s=5.0, colour=1),
    Mode("reduce-overhead", cudagraphs=True, extra_warmup_calls=3, cold_compile_s=55.0, warm_compile_s=6.0,
         colour=2),  # on CPU: no CUDA graphs to use
    Mode("max-autotune", cudagraphs=True, extra_warmup_calls=3, cold_compile_s=420.0, warm_compile_s=8.0, colour=3),
    Mode("max-autotune-no-cudagraphs", cudagraphs=False, extra_warmup_calls=1, cold_compile_s=400.0,
         warm_compile_s=7.0, colour=4),
)
MODE_BY_NAME = {mode.name: mode for mode in MODE_TABLE}
MODES = tuple(mode.name for mode in MODE_TABLE)  # the allowed values of `modes`, in report order
COMPILE_MODES = MODES[1:]  # every mode but eager
CUDAGRAPH_MODES = tuple(mode.name for mode in MODE_TABLE if mode.cudagraphs)
EXTRA_WARMUP_CALLS = {mode.name: mode.extra_warmup_calls for mode in MODE_TABLE}
MODE_COLOUR = {mode.name: mode.colour for mode in MODE_TABLE}
