"""The compile-time study's measurement in its worker process: find the repeated blocks, compile one
way from an empty cache, time the first call, the steady state and the agreement with eager (the
package's docstring says how and why)."""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

from ...results.stats import summarize
from .rows import artifacts_path

NO_BLOCKS = ("no repeated blocks: no ModuleList or Sequential holds two children of one class with the "
             "same parameter shapes")


class MissingArtifactsError(FileNotFoundError):
    """cache-artifacts ran before whole left its artifacts."""


@dataclass(frozen=True)
class BlockGroup:
    """Repeated blocks of one container: every child of the repeated class, in order."""

    path: str  # the container's dotted name, e.g. "vit.layers"
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
    """E.g. "12 x ViTLayer at vit.layers", "16 x ResNetBottleNeckLayer at resnet.encoder.stages.*.layers"."""
    counts = Counter(type(block).__name__ for group in groups for block in group.blocks)
    by_class: dict[str, list[str]] = {}
    for group in groups:
        paths = by_class.setdefault(type(group.blocks[0]).__name__, [])
        paths.append(re.sub(r"\.\d+(?=\.|$)", ".*", group.path))  # stages.0.layers -> stages.*.layers
    return "; ".join(f"{counts[name]} x {name} at {', '.join(dict.fromkeys(paths))}"
                     for name, paths in by_class.items())


def _fresh_compiler_state() -> None:
    """Forget what this process compiled (compile_stats.forget_compiled) and the cache artifacts
    recorded so far: a new process has none of them."""
    from torch.compiler._cache import CacheArtifactManager

    from ...measure.compile_stats import forget_compiled

    forget_compiled()
    CacheArtifactManager.clear()


def _warm_cache_note() -> str:
    """Why compile_s may not be a cold start: the compiler cache held files before anything compiled."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    folder = Path(cache_dir())
    triton = os.environ.get("TRITON_CACHE_DIR")
    if any(folder.iterdir()):
        return f"compiler cache {folder} was not empty at start: compile_s may be warm"
    if triton and not Path(triton).resolve().is_relative_to(folder.resolve()):
        return f"TRITON_CACHE_DIR={triton} is outside the empty compiler cache: Triton kernels may be warm"
    return ""


def _artifact_counts(info) -> str:
    """torch.compiler.CacheInfo -> "2 inductor, 1 aot_autograd" (artifacts per kind)."""
    return ", ".join(f"{len(keys)} {kind}" for kind, keys in sorted(info.artifacts.items()) if keys) or "none"


def _save_artifacts(path: Path) -> tuple[int, str]:
    """The artifacts of this process's compiles to `path`, atomically (tmp file + rename): (bytes, kinds)."""
    import torch

    saved = torch.compiler.save_cache_artifacts()
    if saved is None:
        raise RuntimeError("torch.compiler.save_cache_artifacts() recorded nothing (compiler caches disabled?)")
    data, info = saved
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_bytes(data)
    os.replace(partial, path)  # readers see the old file or the whole new one, never a half
    return len(data), _artifact_counts(info)


def _load_artifacts(path: Path, fields: dict) -> str:
    """Load the artifacts "whole" saved into this process's (empty) cache; time it. The note's words."""
    import torch

    data = path.read_bytes()
    started = time.perf_counter()
    info = torch.compiler.load_cache_artifacts(data)
    fields.update(artifact_load_s=time.perf_counter() - started, artifact_bytes=len(data))
    if info is None:
        raise RuntimeError(f"{path}: torch.compiler.load_cache_artifacts found no artifacts in it")
    return f"loaded {_artifact_counts(info)} artifacts"


def _first_call(call, device: str, fields: dict) -> None:
    """Time the first call (it compiles), with its cache counts and graphs."""
    from ...measure.compile_stats import fx_cache_counts, graphs_compiled
    from ...measure.timing import time_once

    fields["compile_s"] = time_once(call, device)
    fields.update(fx_cache_counts(), graph_count=graphs_compiled())


def _compile_whole(model, inputs: dict, cfg, device: str, fields: dict):
    from ...measure.settings import compile_model

    compiled_model = compile_model(model, cfg.compiled_configuration(), cfg.fullgraph, cfg.compile_dynamic())
    call = lambda: compiled_model(**inputs)  # noqa: E731
    _first_call(call, device, fields)
    return call


def _compile_regions(model, inputs: dict, cfg, device: str, groups: list[BlockGroup],
                     fields: dict):
    import inspect

    import torch

    blocks = [block for group in groups for block in group.blocks]
    default_limit = torch._dynamo.config.recompile_limit
    limit = max(default_limit, len(blocks))
    per_region = "recompile_limit" in inspect.signature(torch.compile).parameters  # older torches (2.11): no
    for block in blocks:
        block.compile(fullgraph=cfg.fullgraph, dynamic=cfg.compile_dynamic(),
                      **({"recompile_limit": limit} if per_region else {}),
                      **cfg.compiled_configuration().compile_options())
    call = lambda: model(**inputs)  # noqa: E731
    if not per_region:  # dynamo's own limit, raised during each call only (a few microseconds a call)
        call = torch._dynamo.config.patch(recompile_limit=limit)(call)
    _first_call(call, device, fields)
    notes = [describe_blocks(groups), "the rest runs eagerly"]
    if limit > default_limit:
        notes.append(f"recompile_limit raised to {limit} (one graph per block at most)")
    from ...measure.compile_stats import hit_recompile_limit

    if hit_recompile_limit():
        notes.append(f"recompile_limit ({limit}) hit: some blocks ran eagerly")
    return call, notes


def _steady_state(call, reference, cfg, device: str, fields: dict) -> None:
    """The sweep's warm-up and timing schedule, then one call compared with eager's output."""
    from ...config.modes import EXTRA_WARMUP_CALLS
    from ...measure import accuracy
    from ...measure.cell import timed_phase
    from ...measure.accuracy import numerics as accuracy_numerics

    samples = timed_phase(call, cfg, device, EXTRA_WARMUP_CALLS[cfg.compiled_configuration().mode])
    output = call()
    diff = accuracy.max_abs_diff(reference, output)
    fields.update(samples_s=samples, latency_ms_median=summarize(samples).median_ms, max_abs_diff=diff,
                  accuracy_ok=accuracy.within_tolerance(reference, diff, accuracy_numerics(device))
                  if cfg.compiled_configuration().precision == "float32" else None)


def _compile(strategy: str, model, inputs: dict, cfg, device: str, groups: list[BlockGroup],
             artifacts: Path, fields: dict):
    """Compile one way from a fresh compiler state, timing the first call: (the compiled call, notes)."""
    _fresh_compiler_state()
    if strategy == "regional":
        return _compile_regions(model, inputs, cfg, device, groups, fields)
    notes = [_load_artifacts(artifacts, fields)] if strategy == "cache-artifacts" else []
    call = _compile_whole(model, inputs, cfg, device, fields)
    if strategy == "whole":
        fields["artifact_bytes"], kinds = _save_artifacts(artifacts)
        notes.append(f"saved {kinds} artifacts")
    return call, notes


def measure(cfg, model_name: str, strategy: str, results_path: Path, device: str,
             fields: dict) -> None:
    import torch

    from ...measure.cell import load_for_process, process_inputs
    from ...measure.settings import inductor_context, precision_context, with_layout

    batch_size = cfg.batch_sizes[0]
    artifacts = artifacts_path(results_path, model_name, batch_size)
    if strategy == "cache-artifacts" and not artifacts.is_file():  # before minutes of model loading
        raise MissingArtifactsError(f"no cache artifacts at {artifacts}: run whole first")
    spec, loaded = load_for_process(cfg, model_name, device, fields)
    groups = find_repeated_blocks(loaded.model) if strategy == "regional" else []
    if strategy == "regional" and not groups:
        fields.update(applicable=False, note=NO_BLOCKS)
        return
    notes = [_warm_cache_note()]
    config = cfg.compiled_configuration()
    inputs = process_inputs(cfg, spec, batch_size, device)
    with torch.inference_mode():
        reference = loaded.model(**inputs)  # eager float32
    inputs = with_layout(config, loaded.model, inputs)
    with torch.inference_mode(), precision_context(config, device), inductor_context(config):
        call, more = _compile(strategy, loaded.model, inputs, cfg, device, groups, artifacts, fields)
        fields["note"] = "; ".join(note for note in notes + more if note)  # before timing: a failure keeps it
        _steady_state(call, reference, cfg, device, fields)


# --- the page ---
