"""The mode table: eager and each torch.compile mode, with everything the project needs to know about
it in one row (whether it records CUDA graphs, its extra warm-up, its colour). No torch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    name: str  # "eager", or torch.compile(mode=name)
    cudagraphs: bool  # on CUDA it records CUDA graphs ("max-autotune-no-cudagraphs" separates autotuning from them)
    # untimed calls right after compiling, before the steady-state warm-up: CUDA-graph trees record on
    # the first calls, max-autotune benchmarks kernels on first use (calls, not seconds)
    extra_warmup_calls: int
    colour: int  # index into the report's colour-blind palette: a mode keeps its colour on every chart


MODE_TABLE = (
    Mode("eager", cudagraphs=False, extra_warmup_calls=0, colour=0),
    Mode("default", cudagraphs=False, extra_warmup_calls=1, colour=1),
    Mode("reduce-overhead", cudagraphs=True, extra_warmup_calls=3, colour=2),  # on CPU: no CUDA graphs to use
    Mode("max-autotune", cudagraphs=True, extra_warmup_calls=3, colour=3),
    Mode("max-autotune-no-cudagraphs", cudagraphs=False, extra_warmup_calls=1, colour=4),
)
MODES = tuple(mode.name for mode in MODE_TABLE)  # the allowed values of `modes`, in report order
COMPILE_MODES = MODES[1:]  # every mode but eager
CUDAGRAPH_MODES = tuple(mode.name for mode in MODE_TABLE if mode.cudagraphs)
EXTRA_WARMUP_CALLS = {mode.name: mode.extra_warmup_calls for mode in MODE_TABLE}
MODE_COLOUR = {mode.name: mode.colour for mode in MODE_TABLE}
