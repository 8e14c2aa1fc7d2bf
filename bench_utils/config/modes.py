"""The mode table: eager and each torch.compile mode, with everything the project needs to know about
it in one row (whether it records CUDA graphs, its extra warm-up, what compiling costs). A
configuration (configurations.py) is a mode and its modifiers.
No torch.

Compile costs are planning constants (`plan` reads them), seconds for a full-size vision model on a
GPU, from public figures, not measured here; a tiny model takes a tenth:
- cold (empty compiler cache): ResNet-50 compiles in 28 s (pytorch/benchmark#1547), convnets in
  35-80 s (pytorch/pytorch#93517): 60 s for default; max-autotune adds its kernel benchmarking,
  +419 s in FastVideo#1445 (hao-ai-lab/FastVideo).
- warm (the FX-graph cache hits: a later process of the cell): dynamo still traces and Inductor loads
  the cached code and kernels, with autotuning's choices baked in: the same FastVideo report starts a
  max-autotune model in 4 s warm against +419 s cold; a few seconds more for tracing a full model.
- CUDA graphs cost a mode nothing here: the graphs and kernels compiled are the same (the torch
  2.14 sources: triton.cudagraphs only changes the wrapper put around the compiled graph after it is
  compiled or loaded, output_code.cudagraph_post_compile), and CUDA-graph trees record on a later call
  than the first (the first runs in warm-up mode), which is warm-up, not compile_s. So
  reduce-overhead costs what default does, max-autotune what max-autotune-no-cudagraphs does.
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
    cold_compile_s: float  # planning: a compile with an empty compiler cache (see the module docstring)
    warm_compile_s: float  # planning: a compile whose FX graphs the on-disk cache holds


MODE_TABLE = (
    Mode("eager", cudagraphs=False, extra_warmup_calls=0, cold_compile_s=0.0, warm_compile_s=0.0),
    Mode("default", cudagraphs=False, extra_warmup_calls=1, cold_compile_s=60.0, warm_compile_s=8.0),
    Mode("reduce-overhead", cudagraphs=True, extra_warmup_calls=3,  # on CPU: no CUDA graphs to use
         cold_compile_s=60.0, warm_compile_s=8.0),
    Mode("max-autotune", cudagraphs=True, extra_warmup_calls=3, cold_compile_s=480.0,  # default's 60 s + FastVideo's
         warm_compile_s=8.0),  # 419 s of autotuning
    Mode("max-autotune-no-cudagraphs", cudagraphs=False, extra_warmup_calls=1, cold_compile_s=480.0,
         warm_compile_s=8.0),
)
MODE_BY_NAME = {mode.name: mode for mode in MODE_TABLE}
MODES = tuple(mode.name for mode in MODE_TABLE)  # a configuration's first part, in report order
CUDAGRAPH_MODES = tuple(mode.name for mode in MODE_TABLE if mode.cudagraphs)
EXTRA_WARMUP_CALLS = {mode.name: mode.extra_warmup_calls for mode in MODE_TABLE}
