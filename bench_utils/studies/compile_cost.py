"""The compile-time study (`compile_strategies`): one model compiled one way from an empty compiler
cache, its first call timed (compile_s), then its steady-state latency and its agreement with eager.
The strategies (whole, regional, cache-artifacts): docs/method.md. All run under inference_mode at
batch cfg.batch_sizes[0], with the first compiled configuration and cfg.compile_dynamic(); "whole"
saves its artifacts next to the results (artifacts_path) for "cache-artifacts".

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

Caches. The sweep starts this process with TORCHINDUCTOR_CACHE_DIR set to a new empty folder. In
torch 2.14 every local on-disk compiler cache lives under it: Inductor's FX graph cache and its
compiled C++ kernels, AOTAutograd's cache (aotautograd/), Triton's kernels (triton/, unless
TRITON_CACHE_DIR points elsewhere) and dynamo's PGO profiles (dynamo/, only with a job id); remote
caches are off unless configured. In-process state is reset before compiling (dynamo's code caches,
Inductor's loaded kernels, the recorded artifacts) so that a second call in one process (tests)
starts cold too. What the artifacts hold: Inductor's and AOTAutograd's entries (with Triton kernels
on CUDA), not the compiled C++ of CPU kernels, which a fresh process compiles again.

On the page every speedup divides the sweep's eager median of the same model and batch size by the
study's compiled median (one eager number); compile time is compared as compile_total_s = compile_s +
artifact_load_s, what a fresh process waits for its first compiled answer, against "whole".
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import numpy as np
import pandas as pd

from ..config.bench_config import COMPILE_STRATEGIES
from ..results.rows import Row, model_fields
from ..results.stats import summarize
from .base import BaseStudy

STRATEGIES = ("whole", *COMPILE_STRATEGIES)  # "whole" first: it leaves the artifacts cache-artifacts loads
COMPILE_CACHE_DIR = "compile-cache"  # portable cache artifacts, next to the results


def artifacts_path(results_path: str | Path, model: str, batch_size: int) -> Path:
    """Where the whole-model compile leaves its cache artifacts."""
    return Path(results_path).with_name(COMPILE_CACHE_DIR) / f"{model}-bs{batch_size}.bin"


@dataclass(frozen=True)
class CompileCostResult(Row):
    """One process of the study: one model compiled one way, from an empty compiler cache, its first
    call timed (compile_s), then its steady-state latency."""

    label: str
    model: str
    checkpoint: str
    task: str
    size: str
    batch_size: int
    configuration: str  # the profile's first compiled configuration
    strategy: str  # one of STRATEGIES
    device: str
    settings: str
    status: str
    error: str = ""
    weights: str = ""
    weights_note: str = ""
    applicable: bool = True  # False: the strategy does not apply to this model (`note` says why)
    note: str = ""  # e.g. "12 x ViTLayer at vit.layers" or "no repeated blocks"
    compile_s: float | None = None  # first compiled call, seconds (cache-artifacts: after loading them)
    fx_cache_hits: int | None = None
    fx_cache_misses: int | None = None
    graph_count: int | None = None  # graphs dynamo compiled (regional: distinct block graphs)
    artifact_bytes: int | None = None  # size of the saved cache artifacts (whole, cache-artifacts)
    artifact_load_s: float | None = None  # torch.compiler.load_cache_artifacts, seconds (cache-artifacts)
    latency_ms_median: float | None = None  # steady state after compiling
    samples_s: list[float] = field(default_factory=list)
    max_abs_diff: float | None = None  # against eager's output
    accuracy_ok: bool | None = None
    env: dict = field(default_factory=dict)
    started_at: str = ""
    duration_s: float | None = None

    @property
    def key(self) -> tuple:
        return (self.model, self.size, self.batch_size, self.configuration, self.strategy)


# --- the measurement, in a worker process ---

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

    from ..measure.compile_stats import forget_compiled

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
    from ..measure.compile_stats import fx_cache_counts, graphs_compiled
    from ..measure.timing import time_once

    fields["compile_s"] = time_once(call, device)
    fields.update(fx_cache_counts(), graph_count=graphs_compiled())


def _compile_whole(model, inputs: dict, cfg, device: str, fields: dict):
    import torch

    compiled_model = torch.compile(model, fullgraph=cfg.fullgraph, dynamic=cfg.compile_dynamic(),
                                   **cfg.compiled_configuration().compile_options())
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
    from ..measure.compile_stats import hit_recompile_limit

    if hit_recompile_limit():
        notes.append(f"recompile_limit ({limit}) hit: some blocks ran eagerly")
    return call, notes


def _steady_state(call, reference, cfg, device: str, fields: dict) -> None:
    """The sweep's warm-up and timing schedule, then one call compared with eager's output."""
    from ..config.modes import EXTRA_WARMUP_CALLS
    from ..measure import accuracy
    from ..measure.cell import accuracy_numerics, timed_phase

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


def _measure(cfg, model_name: str, strategy: str, results_path: Path, device: str,
             fields: dict) -> None:
    import torch

    from ..measure.cell import load_for_process, precision_context, process_inputs, with_layout

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
    with torch.inference_mode(), precision_context(config, device):
        call, more = _compile(strategy, loaded.model, inputs, cfg, device, groups, artifacts, fields)
        fields["note"] = "; ".join(note for note in notes + more if note)  # before timing: a failure keeps it
        _steady_state(call, reference, cfg, device, fields)


# --- the page ---

COLUMNS = ["label", "model", "task_model", "size", "batch_size", "configuration", "strategy", "status", "error",
           "applicable", "note", "compile_s", "artifact_load_s", "compile_total_s", "compile_saving_s",
           "compile_saving_pct", "eager_ms_median", "latency_ms_median", "speedup", "graph_count", "fx_cache_hits",
           "fx_cache_misses", "artifact_bytes", "max_abs_diff", "accuracy_ok", "device", "duration_s"]
_COPIED = [c for c in COLUMNS if c in {f.name for f in dataclasses.fields(CompileCostResult)}]
NOT_APPLICABLE = "N/A"


def eager_medians(sweep_frame) -> dict[tuple[str, int], float]:
    """(model, batch_size) -> the eager cell's median ms, from the sweep's DataFrame (aggregate.to_dataframe)
    of one run; cells that did not end ok are left out."""
    from ..report.tables import one_label

    one_label(sweep_frame, "sweep_frame")
    eager = sweep_frame[(sweep_frame["configuration"] == "eager") & (sweep_frame["status"] == "ok")]
    return {(row.model, int(row.batch_size)): float(row.latency_ms_median) for row in eager.itertuples()
            if math.isfinite(row.latency_ms_median)}


def _total_s(row: dict) -> float:
    """compile_s + artifact_load_s of an ok, applicable row; NaN otherwise."""
    if row["status"] != "ok" or not row["applicable"] or row["compile_s"] is None:
        return math.nan
    return row["compile_s"] + (row["artifact_load_s"] or 0.0)


def _baseline_key(row: dict) -> tuple:
    return (row["model"], row["size"], row["batch_size"], row["configuration"])


def compile_cost_frame(rows, eager_ms: dict) -> pd.DataFrame:
    """One row per (model, strategy), models in registry order, strategies in STRATEGIES order.
    `eager_ms`: (model, batch_size) -> the sweep's eager median ms (eager_medians)."""
    from ..config.registry import display_name
    from ..report.tables import numeric_column, sort_rows

    records = [{c: getattr(row, c) for c in _COPIED} for row in rows]
    for record in records:
        record["compile_total_s"] = _total_s(record)
    whole = {_baseline_key(r): r["compile_total_s"] for r in records if r["strategy"] == "whole"}
    for record in records:
        baseline = whole.get(_baseline_key(record), math.nan)
        record["compile_saving_s"] = baseline - record["compile_total_s"]
        record["compile_saving_pct"] = 100.0 * record["compile_saving_s"] / baseline if baseline > 0 else math.nan
        record["eager_ms_median"] = eager_ms.get((record["model"], record["batch_size"]), math.nan)
        record["task_model"] = display_name(record["model"])
    frame = pd.DataFrame.from_records(records, columns=COLUMNS)
    for column in ("compile_s", "artifact_load_s", "latency_ms_median", "graph_count", "fx_cache_hits",
                   "fx_cache_misses", "artifact_bytes", "max_abs_diff"):
        frame[column] = numeric_column(frame, column).where(frame["status"] == "ok")
    frame["speedup"] = frame["eager_ms_median"] / frame["latency_ms_median"]
    return sort_rows(frame, ["model", "batch_size", "strategy"], {"strategy": STRATEGIES})


def _outcome(row) -> str:
    """What a row shows where numbers are missing: N/A, the status in capitals, or ""."""
    if row.status != "ok":
        return row.status.upper()
    return "" if row.applicable else NOT_APPLICABLE


def _text(value: float, integer: bool = False) -> str:
    """`value` as a page writes a number (report/display.number: 3 significant figures); "" when missing."""
    from ..report.display import number

    return "" if value is None or not math.isfinite(value) else number(value, integer=integer)


def _saving(row) -> str:
    if row.strategy == "whole":
        return "baseline" if math.isfinite(row.compile_total_s) else ""
    if not (math.isfinite(row.compile_saving_s) and math.isfinite(row.compile_saving_pct)):
        return ""
    return f"{-row.compile_saving_s:+.1f} s ({-row.compile_saving_pct:+.0f}%)"  # a change: minus is faster


def compile_cost_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The study to show: per model and strategy, time to first answer, its saving, steady speed."""
    from ..report.display import number

    rows = list(frame.itertuples())
    return pd.DataFrame({
        "Model": frame["task_model"], "strategy": frame["strategy"],
        # compile seconds to 0.1 s, as in "compile vs whole" and the verdict
        "compile (s)": [f"{r.compile_total_s:.1f}" if math.isfinite(r.compile_total_s) else _outcome(r) for r in rows],
        "compile vs whole": [_saving(r) for r in rows],
        "latency (ms)": [_text(r.latency_ms_median) for r in rows],
        "speedup vs eager": [_text(r.speedup) for r in rows],
        "graphs": [_text(r.graph_count, integer=True) for r in rows],
        "FX cache hits/misses": [f"{number(r.fx_cache_hits, integer=True)}/{number(r.fx_cache_misses, integer=True)}"
                                 if math.isfinite(r.fx_cache_hits) else "" for r in rows],
        "artifacts (MB)": [_text(r.artifact_bytes / 1e6) for r in rows],
        "note": [r.error if r.status != "ok" else r.note for r in rows]})


def compile_cost_chart(frame: pd.DataFrame):
    """Per model, one bar per strategy: time to first compiled answer (s), the steady speedup vs
    eager written at the end of each bar; strategies that do not apply or failed say so."""
    import seaborn as sns

    from ..report.grouped_bars import BAR_SLOT_IN, NO_DATA, Bars, empty_figure, figure, grouped_barh, legend, status_notes
    from ..config.registry import display_name
    from ..report.tables import ordered_models

    colors = dict(zip(STRATEGIES, sns.color_palette("colorblind", 8)[4:7]))
    if frame.empty or not np.isfinite(frame["compile_total_s"].to_numpy(float)).any():
        return empty_figure(f"compile-time study: {NO_DATA}")
    models = ordered_models(frame["model"])
    series, speedups = [], []
    for strategy in [s for s in STRATEGIES if s in set(frame["strategy"])]:
        cells = frame[frame["strategy"] == strategy].drop_duplicates("model").set_index("model").reindex(models)
        notes = [NOT_APPLICABLE if ok == "ok" and applicable is False else note for ok, applicable, note
                 in zip(cells["status"], cells["applicable"], status_notes(cells["status"]))]
        values = cells["compile_total_s"].to_numpy(float)
        series.append(Bars(strategy, values, colors.get(strategy), notes))
        speedups.append(cells["speedup"].to_numpy(float)[np.isfinite(values)])
    fig, axes = figure(8, 1.2 + BAR_SLOT_IN * len(models) * len(series))
    ax = axes[0, 0]
    grouped_barh(ax, [display_name(m) for m in models], series)
    for container, values in zip(ax.containers, speedups):  # one BarContainer per series, drawn bars only
        for patch, speedup in zip(container.patches, values):
            if math.isfinite(speedup):
                ax.text(patch.get_width(), patch.get_y() + patch.get_height() / 2, f" ×{_text(speedup)}",
                        va="center", ha="left", fontsize=8)
    ax.margins(x=0.15)  # room for the speedup labels
    ax.set_xlabel("time to first compiled answer, s (cache-artifacts: loading them included)")
    ax.set_title("Compile time by strategy (×: steady speedup vs eager)")
    legend(ax, series, "strategy")
    return fig


def _speed(row) -> str:
    from ..report.display import number

    if math.isfinite(row["speedup"]):
        return f"×{number(row['speedup'])} vs eager"
    return f"{number(row['latency_ms_median'])} ms"


SPEED_CAVEAT = ("Speeds here come from one process per strategy (no interval): the sweep's cells above carry "
                "the intervals; trust this study for compile times.")


class CompileCost(BaseStudy):
    name = "compile-cost"
    row = CompileCostResult
    file_name = "compile_cost.jsonl"
    option_name, options = "strategy", STRATEGIES
    no_rows = "No compile-time study rows: no verdict."
    verdict_note = SPEED_CAVEAT
    heading = "Cutting compile time: regional compilation and portable caches"

    def jobs(self, cfg) -> list[tuple[str, int, str]]:
        if not cfg.compile_strategies:
            return []
        return [(model, cfg.batch_sizes[0], strategy) for model in cfg.models
                for strategy in ("whole", *cfg.compile_strategies)]

    def identity(self, cfg, model: str, option: str, device: str) -> dict:
        """A row's identity and settings: the profile's first batch size, its first compiled mode."""
        return model_fields(cfg, model, device) | dict(
            batch_size=cfg.batch_sizes[0], configuration=cfg.compiled_configuration().name, strategy=option)

    def work(self, cfg, model: str, option: str, results_path, device: str, fields: dict) -> None:
        """`results_path`: the sweep's results.jsonl (the artifacts sit beside it). A strategy is checked
        here, not before: an unknown one is an error row."""
        self.check_option(option)
        _measure(cfg, model, option, Path(results_path), device, fields)

    def frame(self, results_path: Path, cells) -> pd.DataFrame:
        return compile_cost_frame(self.read(results_path), eager_medians(cells))

    def model_verdict(self, cells: pd.DataFrame) -> str:
        """What cuts compile time the most and what it costs in speed (the verdict ends with SPEED_CAVEAT)."""
        from ..report.tables import first_row

        name = cells["task_model"].iloc[0]
        base = first_row(cells, "strategy", "whole")
        if base is None or not math.isfinite(base["compile_total_s"]):
            state = base["status"] if base is not None else "not measured"
            return f"**{name}**: no whole-model compile to compare with ({state})"
        others = cells[(cells["strategy"] != "whole") & np.isfinite(cells["compile_total_s"].to_numpy(float))]
        asides = [f"{r.strategy}: " + (f"not applicable ({r.note.split(':')[0]})" if r.status == "ok" else r.status)
                  for r in cells.itertuples() if r.strategy != "whole" and not math.isfinite(r.compile_total_s)]
        if others.empty or others["compile_total_s"].min() >= base["compile_total_s"]:
            line = (f"**{name}**: nothing cut compile time below whole-model compile ({base['compile_total_s']:.1f} s, "
                    f"{_speed(base)})")
        else:
            best = others.loc[others["compile_total_s"].idxmin()]
            line = (f"**{name}**: {best.strategy} cuts compile time the most, {base['compile_total_s']:.1f} s → "
                    f"{best.compile_total_s:.1f} s (−{best.compile_saving_pct:.0f}%), at {_speed(best)} "
                    f"(whole: {_speed(base)})")
            if best.accuracy_ok is False:
                asides.insert(0, "its output differs from eager beyond tolerance")
        return line + "".join(f"; {aside}" for aside in asides)

    def shown(self, frame: pd.DataFrame):
        yield compile_cost_table(frame)
        yield compile_cost_chart(frame)


STUDY = CompileCost()
