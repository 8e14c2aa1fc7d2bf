"""Regional compilation (the `regional` modifier): torch.compile of each block of a stack of identical
layers instead of the whole model, PyTorch's recipe for a shorter cold start.

Why `block.compile()` and not `torch.compiler.nested_compile_region`: the region marker acts only
inside a whole-model torch.compile (the rest of the model is still traced and compiled, so the cut is
smaller) and it marks a function: here the forward of transformers' block classes, patched for every
instance in the process. Per-block compile needs no patching and shows the trade-off plainly: dynamo's
cache lives on the code object (nn.Module._call_impl) and parameters are graph inputs
(inline_inbuilt_nn_modules, always on in 2.14), so structurally identical blocks share one compiled
graph; the model's other modules run eagerly, which is the price in speed the row measures. All block
graphs share that one code object's cache, so recompile_limit is raised to the number of blocks (each
needs at most one graph with static shapes); a block that hit it anyway (dynamo then runs it eagerly,
silently) fails the row (measure/evidence.py).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from itertools import chain

NO_BLOCKS = ("no repeated blocks: no ModuleList or Sequential holds two children of one class with the "
             "same parameter shapes")


@dataclass(frozen=True)
class BlockGroup:
    """Repeated blocks of one container: every child of the repeated class, in order."""

    path: str  # the container's dotted name, e.g. "vit.encoder.layer"
    blocks: tuple  # the nn.Modules to compile


def _signature(module) -> tuple:
    """Class and every parameter's and buffer's name, shape and dtype: equal signatures can share a graph."""
    tensors = chain(module.named_parameters(), module.named_buffers())
    return (type(module), tuple((name, tuple(t.shape), t.dtype) for name, t in tensors))


def _is_block(module) -> bool:
    """A composite module with weights (not a lone Linear or activation: too small a region)."""
    return any(True for _ in module.children()) and any(True for _ in module.parameters())


def find_repeated_blocks(model, prefix: str = "") -> list[BlockGroup]:
    """Containers holding >= 2 structurally identical blocks, outermost first. Every child of the
    repeated class counts (ResNet's first layer of a stage, with its downsampling shortcut, then
    compiles one more graph); blocks are not searched inside, other children are."""
    import torch

    groups = []
    for name, child in model.named_children():
        path = f"{prefix}.{name}" if prefix else name
        repeated = set()
        if isinstance(child, (torch.nn.ModuleList, torch.nn.Sequential)):  # where repeated blocks are stacked
            counts = Counter(_signature(c) for c in child.children() if _is_block(c))
            repeated = {signature[0] for signature, count in counts.items() if count >= 2}
        if repeated:
            groups.append(BlockGroup(path, tuple(c for c in child.children() if type(c) in repeated)))
        else:
            groups += find_repeated_blocks(child, path)
    return groups


def describe_blocks(groups: list[BlockGroup]) -> str:
    """E.g. "12 x ViTLayer at vit.encoder.layer", "16 x ResNetBottleNeckLayer at resnet.encoder.stages.*.layers"."""
    counts = Counter(type(block).__name__ for group in groups for block in group.blocks)
    by_class: dict[str, list[str]] = {}
    for group in groups:
        paths = by_class.setdefault(type(group.blocks[0]).__name__, [])
        paths.append(re.sub(r"\.\d+(?=\.|$)", ".*", group.path))  # stages.0.layers -> stages.*.layers
    return "; ".join(f"{counts[name]} x {name} at {', '.join(dict.fromkeys(paths))}"
                     for name, paths in by_class.items())


def block_count(groups: list[BlockGroup]) -> int:
    return sum(len(group.blocks) for group in groups)


def distinct_blocks(groups: list[BlockGroup]) -> int:
    """Structures among the blocks: the graphs their compile needs at least (one per structure)."""
    return len({_signature(block) for group in groups for block in group.blocks})


def compile_regions(model, groups: list[BlockGroup], compile_options: dict, fullgraph: bool, dynamic):
    """Compile every block of `groups` in place (nn.Module.compile), recompile_limit raised to their
    number; the model itself, whose other modules run eagerly, is the callable."""
    import inspect

    import torch

    blocks = [block for group in groups for block in group.blocks]
    limit = max(torch._dynamo.config.recompile_limit, len(blocks))
    per_region = "recompile_limit" in inspect.signature(torch.compile).parameters
    for block in blocks:
        block.compile(fullgraph=fullgraph, dynamic=dynamic, **({"recompile_limit": limit} if per_region else {}),
                      **compile_options)
    if not per_region:  # an older torch: dynamo's own limit, for the whole process (it runs one configuration)
        torch._dynamo.config.recompile_limit = limit
    return model
