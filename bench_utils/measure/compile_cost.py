"""The compile-time study, one process: one model compiled one way from an empty compiler cache, its
first call timed (compile_s), then its steady-state latency and its agreement with eager.

Strategies (all under torch.inference_mode(), batch cfg.batch_sizes[0], mode cfg.compiled_mode(),
dynamic cfg.compile_dynamic()):
- "whole": torch.compile(model), as the sweep compiles; then its portable cache is saved
  (torch.compiler.save_cache_artifacts) to study_results.artifacts_path for "cache-artifacts";
- "regional": each repeated block compiled on its own (`block.compile()`), the rest of the model eager;
- "cache-artifacts": a fresh process loads what "whole" saved (torch.compiler.load_cache_artifacts)
  into its empty cache, then compiles the whole model as "whole" does: a warm start elsewhere.

Why `block.compile()` and not `torch.compiler.nested_compile_region`: the region marker acts only
inside a whole-model torch.compile (the rest of the model is still traced and compiled, so the cut
is smaller) and it marks a function: here the forward of transformers' block classes, patched for
every instance in the process. Per-block compile is torch's documented recipe for cold-start time
("regional compilation"), needs no patching, and shows the trade-off plainly: dynamo's cache lives on
the code object (nn.Module._call_impl) and parameters are graph inputs (inline_inbuilt_nn_modules,
always on in 2.14), so structurally identical blocks share one compiled graph; the model's other
modules run eagerly, which is the price in speed the study measures. All block graphs share that
one code object's cache, so we pass recompile_limit = the number of blocks (each needs at most one
graph with static shapes; the note says when that raised the limit); hitting it anyway (dynamo then
runs blocks eagerly, silently) is detected and noted.

Caches. studies.py starts this process with TORCHINDUCTOR_CACHE_DIR set to a new empty folder. In
torch 2.14 every local on-disk compiler cache lives under it: Inductor's FX graph cache and its
compiled C++ kernels, AOTAutograd's cache (aotautograd/), Triton's kernels (triton/, unless
TRITON_CACHE_DIR points elsewhere) and dynamo's PGO profiles (dynamo/, only with a job id); remote
caches are off unless configured. In-process state is reset before compiling (dynamo's code caches,
Inductor's loaded kernels, the recorded artifacts) so that a second call in one process (tests)
starts cold too. What the artifacts hold: Inductor's and AOTAutograd's entries (with Triton kernels
on CUDA), not the compiled C++ of CPU kernels, which a fresh process compiles again.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import torch

from ..config.bench_config import BenchConfig
from ..config.modes import EXTRA_WARMUP_CALLS
from ..results.stats import summarize
from ..results.study_results import STRATEGIES, CompileCostResult, artifacts_path, compile_cost_fields
from . import accuracy, environment
from .cell import accuracy_numerics, load_for_process, measured_row, precision_context, process_inputs, timed_phase
from .compile_stats import clear_graph_stats, fx_cache_counts, graph_stats, hit_recompile_limit
from .timing import time_once

CONTAINERS = (torch.nn.ModuleList, torch.nn.Sequential)  # where repeated blocks are stacked
NO_BLOCKS = ("no repeated blocks: no ModuleList or Sequential holds two children of one class with the "
             "same parameter shapes")


class MissingArtifactsError(FileNotFoundError):
    """cache-artifacts ran before whole left its artifacts."""


@dataclass(frozen=True)
class BlockGroup:
    """Repeated blocks of one container: every child of the repeated class, in order."""

    path: str  # the container's dotted name, e.g. "vit.layers"
    blocks: tuple  # the nn.Modules to compile


def _signature(module: torch.nn.Module) -> tuple:
    """Class and every parameter's and buffer's name, shape and dtype: equal signatures can share a graph."""
    tensors = chain(module.named_parameters(), module.named_buffers())
    return (type(module), tuple((name, tuple(t.shape), t.dtype) for name, t in tensors))


def _is_block(module: torch.nn.Module) -> bool:
    """A composite module with weights (not a lone Linear or activation: too small a region)."""
    return any(True for _ in module.children()) and any(True for _ in module.parameters())


def find_repeated_blocks(model: torch.nn.Module, prefix: str = "") -> list[BlockGroup]:
    """Containers holding >= 2 structurally identical blocks, outermost first. Every child of the
    repeated class counts (ResNet's first layer of a stage, with its downsampling shortcut, then
    compiles one more graph); blocks are not searched inside, other children are."""
    groups = []
    for name, child in model.named_children():
        path = f"{prefix}.{name}" if prefix else name
        repeated = set()
        if isinstance(child, CONTAINERS):
            counts = Counter(_signature(c) for c in child.children() if _is_block(c))
            repeated = {signature[0] for signature, count in counts.items() if count >= 2}
        if repeated:
            groups.append(BlockGroup(path, tuple(c for c in child.children() if type(c) in repeated)))
        else:
            groups += find_repeated_blocks(child, path)
    return groups


def describe_blocks(groups: list[BlockGroup]) -> str:
    """E.g. "12 x ViTLayer at vit.layers", "16 x ResNetBottleNeckLayer at resnet.encoder.stages.*.layers"."""
    by_class: dict[str, list[str]] = {}
    counts: Counter = Counter()
    for group in groups:
        for block in group.blocks:
            counts[type(block).__name__] += 1
        paths = by_class.setdefault(type(group.blocks[0]).__name__, [])
        paths.append(re.sub(r"\.\d+(?=\.|$)", ".*", group.path))  # stages.0.layers -> stages.*.layers
    return "; ".join(f"{counts[name]} x {name} at {', '.join(dict.fromkeys(paths))}"
                     for name, paths in by_class.items())


def _fresh_compiler_state() -> None:
    """Forget what this process compiled or recorded before: dynamo's code caches, Inductor's loaded
    kernels and the cache artifacts recorded so far (a new process has none of them)."""
    from torch._inductor.utils import clear_caches
    from torch.compiler._cache import CacheArtifactManager

    torch._dynamo.reset()
    clear_caches()
    CacheArtifactManager.clear()
    clear_graph_stats()


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
    data = path.read_bytes()
    started = time.perf_counter()
    info = torch.compiler.load_cache_artifacts(data)
    fields.update(artifact_load_s=time.perf_counter() - started, artifact_bytes=len(data))
    if info is None:
        raise RuntimeError(f"{path}: torch.compiler.load_cache_artifacts found no artifacts in it")
    return f"loaded {_artifact_counts(info)} artifacts"


def _first_call(call, device: str, fields: dict) -> None:
    """Time the first call (it compiles), with its cache counts and graphs."""
    fields["compile_s"] = time_once(call, device)
    fields.update(fx_cache_counts(), graph_count=graph_stats(0)["graph_count"])


def _compile_whole(model, inputs: dict, cfg: BenchConfig, device: str, fields: dict):
    compiled_model = torch.compile(model, mode=cfg.compiled_mode(), fullgraph=cfg.fullgraph,
                                   dynamic=cfg.compile_dynamic())
    call = lambda: compiled_model(**inputs)  # noqa: E731
    _first_call(call, device, fields)
    return call


def _compile_regions(model, inputs: dict, cfg: BenchConfig, device: str, groups: list[BlockGroup],
                     fields: dict):
    blocks = [block for group in groups for block in group.blocks]
    limit = max(torch._dynamo.config.recompile_limit, len(blocks))
    for block in blocks:
        block.compile(mode=cfg.compiled_mode(), fullgraph=cfg.fullgraph, dynamic=cfg.compile_dynamic(),
                      recompile_limit=limit)
    call = lambda: model(**inputs)  # noqa: E731
    _first_call(call, device, fields)
    notes = [describe_blocks(groups), "the rest runs eagerly"]
    if limit > torch._dynamo.config.recompile_limit:
        notes.append(f"recompile_limit raised to {limit} (one graph per block at most)")
    if hit_recompile_limit():
        notes.append(f"recompile_limit ({limit}) hit: some blocks ran eagerly")
    return call, notes


def _steady_state(call, reference, cfg: BenchConfig, device: str, fields: dict) -> None:
    """The sweep's warm-up and timing schedule, then one call compared with eager's output."""
    samples = timed_phase(call, cfg, device, EXTRA_WARMUP_CALLS[cfg.compiled_mode()])["samples_s"]
    output = call()
    diff = accuracy.max_abs_diff(reference, output)
    fields.update(samples_s=samples, latency_ms_median=summarize(samples).median_ms, max_abs_diff=diff,
                  accuracy_ok=accuracy.within_tolerance(reference, diff, accuracy_numerics(cfg, device)))


def _compile(strategy: str, model, inputs: dict, cfg: BenchConfig, device: str, groups: list[BlockGroup],
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


def _measure(cfg: BenchConfig, model_name: str, strategy: str, results_path: Path, device: str,
             fields: dict) -> None:
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
    inputs = process_inputs(cfg, spec, loaded.model, batch_size, device)
    with torch.inference_mode(), precision_context(cfg, device):
        reference = loaded.model(**inputs)
        call, more = _compile(strategy, loaded.model, inputs, cfg, device, groups, artifacts, fields)
        fields["note"] = "; ".join(note for note in notes + more if note)  # before timing: a failure keeps it
        _steady_state(call, reference, cfg, device, fields)


def measure_compile_cost(cfg: BenchConfig, model_name: str, strategy: str,
                         results_path: str | Path) -> CompileCostResult:
    """One process of the compile-time study; never raises for a failure of the study itself (it
    becomes the row's status). `results_path`: the sweep's results.jsonl (the artifacts sit beside it)."""
    device = environment.resolve_device(cfg.device)

    def work(fields: dict) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy: {strategy!r} is not allowed; allowed: {', '.join(STRATEGIES)}")
        _measure(cfg, model_name, strategy, Path(results_path), device, fields)

    return measured_row(CompileCostResult, compile_cost_fields(cfg, model_name, strategy, device), device, work)
