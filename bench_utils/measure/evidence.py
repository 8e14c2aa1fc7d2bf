"""Read back from torch that a configuration's settings took effect, and refuse a row whose setting did
not: a setting torch never honoured would otherwise be measured under the configuration's name (one
set where torch reads it too late measured plain `default` as `default+freezing`).

What each setting leaves, read from torch itself:
- freezing: Inductor freezes the graphs it compiles (torch/_inductor/freezing.py, `freeze`, called
  on every compile since a frozen graph bypasses the FX and AOTAutograd caches), folding the tensors
  the graph holds as attributes into constants: `compile_probe` counts those, and the parameters the
  graph still takes as inputs (dynamo lifts them so where freezing was off while it traced);
- max-autotune: the operators Inductor lowered with more than one kernel to choose between
  (select_algorithm.AlgorithmSelectorCache, called while lowering, its benchmarks cached or not);
- an autocast dtype and channels_last: the matrix multiplies and convolutions one call ran, as the
  profiler saw them dispatched (their first input's dtype and strides), eager or compiled alike;
- regional compilation: the blocks compiled, and that they shared graphs (fewer graphs than blocks,
  no block left eager by dynamo's recompile limit): `check_regions`;
- a new process's start (measure/startup.py): a package's or a precompiled function's without a dynamo
  frame or an Inductor compile, cache artifacts' without a graph compiled from scratch (FX-graph cache
  hits, no miss): `check_start`;
- CUDA graphs (compile_stats.cudagraphs_recorded) are read where they happen (measure/cell.py).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from ..config.configurations import Configuration


# the row's evidence fields (results/rows.py, BenchResult): what describes the process's compiled code
ROW_FIELDS = ("params_folded", "params_unfolded", "autotune_choices", "matmuls_seen", "matmuls_in_autocast_dtype",
              "convs_seen", "convs_channels_last", "regions", "regions_at", "ships_bytes")


class SettingNotInEffect(Exception):
    """A configuration's setting that torch did not honour: the row fails with this line."""


@dataclass
class CompileCounts:
    """What one compile's probes counted (None: no probe saw that step run)."""

    frozen_graphs: int = 0  # graphs Inductor froze
    params_folded: int = 0  # parameters and buffers those graphs held as constants to fold
    params_unfolded: int = 0  # parameters they took as inputs instead
    kernel_choices: int = 0  # operators lowered with more than one kernel to choose between

    def fields(self, config: Configuration) -> dict:
        """The row's evidence fields for `config` (None where it asks for none)."""
        freezing = bool(config.inductor_settings.get("freezing"))
        return {"params_folded": self.params_folded if freezing else None,
                "params_unfolded": self.params_unfolded if freezing else None,
                "autotune_choices": self.kernel_choices if autotunes(config) else None}


def autotunes(config: Configuration) -> bool:
    """Does the configuration's mode choose kernels by benchmarking them (max-autotune's modes)?"""
    return config.mode.startswith("max-autotune")


@contextlib.contextmanager
def compile_probe():
    """Count, while the block compiles, what freezing and autotuning did (CompileCounts)."""
    import torch._inductor.freezing as freezing
    from torch._inductor.select_algorithm import AlgorithmSelectorCache

    counts = CompileCounts()
    freeze, select = freezing.freeze, AlgorithmSelectorCache.__call__

    def counting_freeze(dynamo_gm, aot_gm, example_inputs):
        counts.frozen_graphs += 1
        counts.params_folded += graph_constants(dynamo_gm)
        counts.params_unfolded += parameter_inputs(dynamo_gm)
        return freeze(dynamo_gm, aot_gm, example_inputs)

    def counting_select(self, name, choices, *args, **kwargs):
        if len(choices) > 1:
            counts.kernel_choices += 1
        return select(self, name, choices, *args, **kwargs)

    freezing.freeze, AlgorithmSelectorCache.__call__ = counting_freeze, counting_select
    try:
        yield counts
    finally:
        freezing.freeze, AlgorithmSelectorCache.__call__ = freeze, select


def graph_constants(graph_module) -> int:
    """Tensors a traced graph holds as attributes (get_attr): what Inductor's freezing folds into
    constants. Dynamo installs a module's parameters and buffers so only where freezing is on while it
    traces; an exported program holds them so always."""
    import torch

    def attribute(target: str):
        value = graph_module
        for part in target.split("."):
            value = getattr(value, part, None)
        return value

    return sum(isinstance(attribute(node.target), torch.Tensor) for node in graph_module.graph.nodes
               if node.op == "get_attr")


def parameter_inputs(graph_module) -> int:
    """Parameters a dynamo graph takes as inputs (its placeholders' example values, dynamo's GraphArg):
    weights freezing cannot fold, the graph reading them anew at every call."""
    import torch

    return sum(isinstance(getattr(node.meta.get("grapharg"), "example", None), torch.nn.Parameter)
               for node in graph_module.graph.nodes if node.op == "placeholder")


def check_compile(config: Configuration, counts: CompileCounts, lowered: bool, device: str) -> None:
    """Raise SettingNotInEffect where the compile just probed did not do what `config` names; `lowered`:
    Inductor generated code for at least one graph (not all loaded from its FX-graph cache, whose key
    holds the settings the cached graph was compiled with). A max-autotune with nothing to choose is
    Unsupported: the model has no operator Inductor can tune here."""
    from .settings import Unsupported

    if config.inductor_settings.get("freezing"):
        if counts.frozen_graphs == 0 and lowered:
            raise SettingNotInEffect("freezing did not take effect: Inductor froze no graph")
        if counts.params_unfolded:
            raise SettingNotInEffect(f"freezing did not take effect: {counts.params_unfolded} of "
                                     f"{counts.params_unfolded + counts.params_folded} parameters stayed inputs "
                                     "of the compiled graphs")
    if autotunes(config) and lowered and counts.kernel_choices == 0:
        hint = " (Inductor's CPU GEMM templates need frozen weights: +freezing)" if device == "cpu" and not \
            config.inductor_settings.get("freezing") else ""
        raise Unsupported(f"{config.mode} had no kernel to choose between for this model{hint}: it would "
                          "measure default mode under another name")


def check_regions(config: Configuration, regions: int, distinct: int, graphs: int, hit_limit: bool) -> None:
    """Raise SettingNotInEffect where regional compilation of `regions` blocks (`distinct` structures
    among them) did not do what it names: a block dynamo's recompile limit left eager, no graph, or a
    graph per block where structures repeat (nothing reused: with freezing, each block's weights are
    constants of its own graph)."""
    if not config.regions:
        return
    if hit_limit:
        raise SettingNotInEffect(f"regional compilation did not take effect: dynamo's recompile limit left some of "
                                 f"the {regions} blocks eager")
    if graphs == 0:
        raise SettingNotInEffect("regional compilation did not take effect: no block compiled a graph")
    if graphs >= regions > distinct:
        raise SettingNotInEffect(f"regional compilation did not take effect: each of the {regions} blocks compiled a "
                                 f"graph of its own ({graphs} graphs for {distinct} structures): nothing was reused")


def check_start(config: Configuration, fields: dict) -> None:
    """Raise SettingNotInEffect where a new process's start (measure/startup.py's fields) did not start
    the way the configuration ships: a file built ahead of time that traced or compiled there, cache
    artifacts that left a graph to compile from scratch."""
    frames, hits, misses = (fields.get(name) or 0 for name in ("start_frames", "start_fx_cache_hits",
                                                                "start_fx_cache_misses"))
    if config.packaged and (frames or hits or misses):
        raise SettingNotInEffect(f"{config.form} compiled in the serving process: {frames} frames traced by dynamo, "
                                 f"{hits + misses} graphs looked up in Inductor's cache")
    if config.artifacts and (misses or not hits):
        raise SettingNotInEffect(f"the cache artifacts did not serve the new process: {misses} graphs compiled from "
                                 f"scratch, {hits} loaded")


# The operators a matrix multiply or a convolution is dispatched as, eager or from compiled code (the
# outermost one of a nest: aten::conv2d calls aten::convolution ...). Names as torch.profiler gives them.
MATMUL_OPS = frozenset({"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear",
                        "aten::_addmm_activation", "mkldnn::_linear_pointwise", "mkl::_mkl_linear",
                        "aten::_scaled_dot_product_flash_attention_for_cpu", "aten::scaled_dot_product_attention"})
CONV_OPS = frozenset({"aten::conv2d", "aten::convolution", "aten::_convolution", "mkldnn::_convolution_pointwise",
                      "mkldnn::_convolution_pointwise_", "aten::cudnn_convolution", "aten::mkldnn_convolution"})
PROFILER_DTYPES = {"float": "float32", "c10::BFloat16": "bfloat16", "c10::Half": "float16", "double": "float64"}


def kernel_counts(events) -> dict:
    """From profiler events (FunctionEvents): the matrix multiplies and convolutions of the call, each
    counted once (an event inside a counted one is its implementation), by the dtype of its first
    input, and the convolutions whose input was in channels_last."""
    counted = MATMUL_OPS | CONV_OPS
    matmuls, by_dtype, convs, channels_last = 0, {}, 0, 0
    for event in events:
        if event.name not in counted or _inside_counted(event, counted):
            continue
        matmuls += 1
        dtypes = getattr(event, "input_dtypes", None) or [""]
        dtype = PROFILER_DTYPES.get(dtypes[0], dtypes[0])
        by_dtype[dtype] = by_dtype.get(dtype, 0) + 1
        if event.name in CONV_OPS:
            convs += 1
            shapes, strides = getattr(event, "input_shapes", None), getattr(event, "structured_input_strides", None)
            channels_last += bool(shapes and strides and is_channels_last(shapes[0], strides[0]))
    return {"matmuls": matmuls, "by_dtype": by_dtype, "convs": convs, "convs_channels_last": channels_last}


def _inside_counted(event, counted) -> bool:
    parent = getattr(event, "cpu_parent", None)
    while parent is not None:
        if parent.name in counted:
            return True
        parent = getattr(parent, "cpu_parent", None)
    return False


def is_channels_last(shape, strides) -> bool:
    """Are a 4-D tensor's `strides` those of channels_last (N, H, W, C in memory) for `shape` (N, C, H,
    W)? Dimensions of size 1 have no stride to check."""
    if not shape or not strides or len(shape) != 4 or len(strides) != 4:
        return False
    n, c, h, w = shape
    expected = (h * w * c, 1, w * c, c)
    return all(size == 1 or stride == want for size, stride, want in zip(shape, strides, expected)) and c > 1


def kernels_seen(call, device: str) -> dict:
    """One call of `call` under torch.profiler (shapes recorded): kernel_counts of what it dispatched.
    Costs a call and the profiler's start (a fraction of a second); run it after the timed blocks."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        call()
        if device == "cuda":
            import torch

            torch.cuda.synchronize()
    return kernel_counts(prof.events())


def needs_kernels(config: Configuration) -> bool:
    """Is the configuration's evidence in the kernels a call runs (an autocast dtype, channels_last)?"""
    return bool(config.autocast) or config.channels_last


def kernel_fields(config: Configuration, seen: dict) -> dict:
    """The row's evidence fields from kernels_seen (None where the configuration asks for none)."""
    return {"matmuls_seen": seen["matmuls"],
            "matmuls_in_autocast_dtype": seen["by_dtype"].get(config.autocast, 0) if config.autocast else None,
            "convs_seen": seen["convs"] if config.channels_last else None,
            "convs_channels_last": seen["convs_channels_last"] if config.channels_last else None}


def check_kernels(config: Configuration, fields: dict) -> None:
    """Raise SettingNotInEffect where the kernels a call ran show the configuration's autocast or layout
    did not reach them (none seen: nothing to tell, e.g. every GEMM inside Inductor's generated code)."""
    seen = fields.get("matmuls_seen") or 0
    if config.autocast and seen and not fields.get("matmuls_in_autocast_dtype"):
        raise SettingNotInEffect(f"{config.autocast} autocast did not take effect: none of the {seen} matrix "
                                 f"multiplies and convolutions of a call ran in {config.autocast}")
    convs = fields.get("convs_seen") or 0
    if config.channels_last and convs and not fields.get("convs_channels_last"):
        raise SettingNotInEffect(f"channels_last did not take effect: none of the {convs} convolutions of a call "
                                 "saw a channels_last input")
