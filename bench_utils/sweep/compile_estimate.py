"""How long a model's compile takes on a GPU, for `plan`: a range per model and mode, never a point
passed off as a measurement; and how a CPU's compile grows with the model (cpu_compile_scale). No torch.

Nobody here has compiled these models on a GPU. What a CPU can count, it counted
(benchmarks/compile_counts.py -> data/compile_counts.json: per model, full size, default mode):
dynamo's graphs, the operators Inductor lowers (post-grad FX nodes), the distinct kernels it
generates and the distinct GEMM/convolution shapes. The mode table's GPU constants (config/modes.py,
from public figures) are taken as a ResNet-50 sized model's, and scaled per model:
- a compile (default mode, and the same for reduce-overhead: the graphs compiled are the same):
  NODE_SHARE of it scales with the operators lowered (dynamo's tracing, AOT, Inductor's lowering and
  scheduling: Python work per operator), the rest with the distinct kernels (each compiled by Triton
  once, and timed by pointwise autotuning); plus GRAPH_S for each graph beyond the first (dynamo, AOT
  and Inductor start again per graph: a graph-breaking model compiles several);
- max-autotune's extra (its cold constant beyond default's) scales with the distinct GEMM/convolution
  shapes: Inductor benchmarks its template choices once per shape (select_algorithm.py).
The range is the point divided and multiplied by SPREAD: the public figures behind the constants
already spread that much (ResNet-50 in 28 s, convnets in 35-80 s: config/modes.py), and a CPU's
kernel counts stand in for a GPU's. A model the counts lack (your own checkpoint) gets the constant.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..config.modes import MODE_BY_NAME

REFERENCE_MODEL = "resnet"  # the size the mode table's constants are for (ResNet-50: 28 s in pytorch/benchmark#1547)
SPREAD = 2.0  # the range: point / SPREAD .. point * SPREAD
GRAPH_S = 5.0  # seconds per graph beyond the first (a planning figure: dynamo, AOT and Inductor set up again)
NODE_SHARE = 0.5  # of a compile, the part that grows with the operators lowered; the rest with the kernels (a planning split)


@dataclass(frozen=True)
class CompileRange:
    low: float
    point: float
    high: float


@lru_cache(maxsize=1)
def compile_counts() -> dict:
    """data/compile_counts.json's per-model counts (model -> graphs, nodes, kernels, gemm_conv_shapes)."""
    text = (resources.files("bench_utils") / "data" / "compile_counts.json").read_text(encoding="utf-8")
    return {name: counts for name, counts in json.loads(text)["models"].items() if "error" not in counts}


def gpu_compile_s(model: str, mode: str, cold: bool) -> CompileRange:
    """A full-size `model`'s compile in `mode` on a GPU, seconds: cold (an empty cache) or warm (the
    FX-graph cache holds it), as a range (see the module docstring)."""
    table, default = MODE_BY_NAME[mode], MODE_BY_NAME["default"]
    if mode == "eager":
        return CompileRange(0.0, 0.0, 0.0)
    counts, reference = compile_counts().get(model), compile_counts()[REFERENCE_MODEL]
    base = default.cold_compile_s if cold else table.warm_compile_s
    autotune = table.cold_compile_s - default.cold_compile_s if cold else 0.0
    if counts is None:
        point = base + autotune
    else:
        point = (base * size_factor(model) + GRAPH_S * (counts["graphs"] - 1)
                 + autotune * counts["gemm_conv_shapes"] / reference["gemm_conv_shapes"])
    return CompileRange(point / SPREAD, point, point * SPREAD)


def size_factor(model: str) -> float | None:
    """A full-size model's compile work against ResNet-50's (1.0): NODE_SHARE of it by the operators
    lowered, the rest by the distinct kernels; None for a model the counts lack."""
    counts, reference = compile_counts().get(model), compile_counts()[REFERENCE_MODEL]
    if counts is None:
        return None
    return (NODE_SHARE * counts["nodes"] / reference["nodes"]
            + (1 - NODE_SHARE) * counts["kernels"] / reference["kernels"])


# the models of the default CPU report, whose compiles plan.CPU_COMPILE_S's figures are (a mean over them)
CPU_CONSTANT_MODELS = ("resnet", "vit", "segformer", "deeplabv3-mobilenet")


def cpu_compile_scale(model: str) -> float:
    """A full-size model's CPU compile against plan.CPU_COMPILE_S's: its size_factor over the default
    report's models' mean (1.0 for a model the counts lack). Why per model: one constant for every model
    priced Mask2Former's compile at a fifth of what it takes; by size factor, five models' cold compiles
    came within 25-37 s per unit (benchmarks/README.md#cpu-compiles-by-model-size)."""
    factor = size_factor(model)
    if factor is None:
        return 1.0
    return factor / (sum(size_factor(name) for name in CPU_CONSTANT_MODELS) / len(CPU_CONSTANT_MODELS))
