"""A configuration's settings applied in a measuring process, the way torch reads each of them: where a
configuration applies (the device, a precision the hardware computes natively, a model with
convolutions), its Inductor settings, its autocast, its memory format and its compile. Every measuring
path (a cell, a study, the method check) compiles through `compile_model`, so what a configuration
names is set the same way everywhere; measure/evidence.py reads back from torch that it took effect.

Inductor settings are set globally (torch._inductor.config.patch) before the compile and kept for the
process's calls: dynamo reads some of them while it traces, before torch.compile(options=...) applies
its options (freezing: whether a module's parameters become constants, torch/_dynamo/utils.py,
is_parameter_freezing), and a recompile at a later call traces again. A measuring process runs one
configuration, so a global setting cannot reach another's compile.
"""

from __future__ import annotations

import contextlib

import torch

from ..config.configurations import Configuration
from ..config.cpu_precisions import cpu_lacks
from .models import TORCH_DTYPES


PRECISION_FLAG = {"bfloat16": "bf16", "float16": "fp16"}  # config/cpu_precisions.py's names


class Unsupported(Exception):
    """The configuration does not apply on this machine or to this model: a row saying why."""


def cpu_native(dtype: str) -> bool:
    """Does this CPU compute in `dtype` natively (config/cpu_precisions.py: the instructions, and oneDNN's
    cap)? oneDNN's own check (torch.ops.mkldnn._is_mkldnn_bf16_supported) answers yes on any AVX-512 core,
    where it converts bfloat16 in software, slower than float32: it must agree as well."""
    onednn = {"bfloat16": torch.ops.mkldnn._is_mkldnn_bf16_supported,
              "float16": torch.ops.mkldnn._is_mkldnn_fp16_supported}[dtype]
    return bool(onednn()) and PRECISION_FLAG[dtype] not in cpu_lacks()


def native_precision(dtype: str, device: str) -> str:
    """"" when `device` computes in `dtype` natively, else why not (on a CPU without it, a lower
    precision is converted in software: slower, not faster). CUDA: bfloat16 from compute capability 8.0
    (torch.cuda.is_bf16_supported with including_emulation=False), float16 everywhere."""
    if device == "cuda":
        if dtype == "bfloat16" and not torch.cuda.is_bf16_supported(including_emulation=False):
            major, minor = torch.cuda.get_device_capability()
            return f"this GPU has no native bfloat16 (compute capability {major}.{minor})"
        return ""
    if not cpu_native(dtype):
        return f"this CPU has no native {dtype} ({torch.backends.cpu.get_cpu_capability()})"
    return ""


def check_supported(config: Configuration, device: str, model=None) -> None:
    """Unsupported with the reason when `config` does not apply: its device, a precision the device
    lacks, channels_last on a model without convolutions, regional compilation on one without a stack
    of identical layers (`model`: checked once it is built)."""
    if device not in config.devices:
        raise Unsupported(f"{config.name} runs on {' and '.join(config.devices)} only")
    if config.autocast:
        reason = native_precision(config.autocast, device)
        if reason:
            raise Unsupported(reason)
    if model is not None and config.channels_last and not any(
            isinstance(m, torch.nn.Conv2d) for m in model.modules()):
        raise Unsupported("no 2-D convolution in this model: channels_last does not apply")
    if model is not None and config.regions:
        from .regions import NO_BLOCKS, find_repeated_blocks

        if not find_repeated_blocks(model):
            raise Unsupported(f"{NO_BLOCKS}: regional compilation does not apply")


def precision_context(config: Configuration, device: str):
    """torch.autocast around every call when the configuration asks for it, else nothing."""
    if not config.autocast:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device, dtype=TORCH_DTYPES[config.autocast])


def inductor_context(config: Configuration):
    """The configuration's Inductor settings (Configuration.inductor_settings) set globally for the
    block; nothing to set: nothing done."""
    settings = config.inductor_settings
    if not settings:
        return contextlib.nullcontext()
    import torch._inductor.config as inductor_config

    return inductor_config.patch(settings)


def with_layout(config: Configuration, model: torch.nn.Module, inputs: dict) -> dict:
    """The inputs for `config`: channels_last for the model's 4-D weights and every 4-D floating input
    (NCHW images) when it asks for it, else as they are."""
    if not config.channels_last:
        return inputs
    model.to(memory_format=torch.channels_last)
    return {k: v.contiguous(memory_format=torch.channels_last) if v.dim() == 4 and v.is_floating_point()
            else v for k, v in inputs.items()}


def compile_model(model: torch.nn.Module, config: Configuration, fullgraph: bool, dynamic: bool | None):
    """torch.compile of `model` in the configuration's mode, or of each of its repeated blocks in place
    (regional: measure/regions.py; the model itself is then the callable); its Inductor settings must be
    in effect (inductor_context) when the compiled model first runs, which is when it traces."""
    if config.regions:
        from .regions import compile_regions, find_repeated_blocks

        return compile_regions(model, find_repeated_blocks(model), config.compile_options(), fullgraph, dynamic)
    return torch.compile(model, fullgraph=fullgraph, dynamic=dynamic, **config.compile_options())
