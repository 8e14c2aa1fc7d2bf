"""The studies' rows: serving with changing batch sizes, and ways to cut compile time.

Each study process writes one frozen row of the one row family (rows.Row: JSON lines next to the
sweep's results.jsonl, appended with the same durable writer, read back with rows.read_rows). No torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..config.bench_config import COMPILE_STRATEGIES
from .rows import Row

SERVING_SETTINGS = ("eager", "static", "dynamic", "auto")  # eager, then torch.compile(dynamic=False/True/None)
SERVING_FILE = "serving.jsonl"
COMPILE_COST_FILE = "compile_cost.jsonl"
# in a serving row's recompile_reasons when dynamo stopped compiling a frame (serving.py writes it,
# serving_report.py reads it): later new shapes ran eagerly
RECOMPILE_LIMIT_NOTE = "recompile_limit ({limit}) hit: dynamo ran later new shapes eagerly, without compiling"
STRATEGIES = ("whole", *COMPILE_STRATEGIES)  # the compile-time study's rows; "whole" first: it leaves the artifacts
COMPILE_CACHE_DIR = "compile-cache"  # portable cache artifacts, next to the results (see compile_cost.py)


def serving_path(results_path: str | Path) -> Path:
    return Path(results_path).with_name(SERVING_FILE)


def compile_cost_path(results_path: str | Path) -> Path:
    return Path(results_path).with_name(COMPILE_COST_FILE)


def artifacts_path(results_path: str | Path, model: str, batch_size: int) -> Path:
    """Where the whole-model compile of the compile-time study leaves its cache artifacts."""
    return Path(results_path).with_name(COMPILE_CACHE_DIR) / f"{model}-bs{batch_size}.bin"


@dataclass(frozen=True)
class ServingResult(Row):
    """One process of the serving study: one model (eager, or compiled once with one `dynamic`
    setting) fed a server's sequence of batch sizes, then timed in its steady state per batch size."""

    label: str
    model: str
    checkpoint: str
    task: str
    size: str
    mode: str  # the torch.compile mode ("eager" for the eager setting)
    setting: str  # one of SERVING_SETTINGS
    dtype: str
    device: str
    settings: str  # BenchConfig.settings_fingerprint()
    status: str
    error: str = ""
    weights: str = ""
    weights_note: str = ""
    sequence: list[int] = field(default_factory=list)  # the batch size of each request, in order
    step_ms: list[float] = field(default_factory=list)  # each request's wall time, ms (compiling included)
    step_compiled: list[bool] = field(default_factory=list)  # did this request compile a graph?
    compiles: int | None = None  # graphs compiled over the sequence (the first one included)
    recompile_reasons: list[str] = field(default_factory=list)  # dynamo's failed guards, first lines
    compile_total_s: float | None = None  # wall time of the requests that compiled, seconds
    steady_ms: dict = field(default_factory=dict)  # str(batch size) -> median ms after the sequence
    steady_samples_s: dict = field(default_factory=dict)  # str(batch size) -> raw samples, seconds
    steady_others_cpu_pct: dict = field(default_factory=dict)  # str(batch size) -> CPU others used while timing, %
    env: dict = field(default_factory=dict)
    started_at: str = ""
    duration_s: float | None = None

    @property
    def key(self) -> tuple:
        return (self.model, self.size, self.dtype, self.setting)


@dataclass(frozen=True)
class CompileCostResult(Row):
    """One process of the compile-time study: one model compiled one way, from an empty compiler
    cache, its first call timed (compile_s), then its steady-state latency."""

    label: str
    model: str
    checkpoint: str
    task: str
    size: str
    batch_size: int
    mode: str
    strategy: str  # "whole" or one of config.COMPILE_STRATEGIES
    dtype: str
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
        return (self.model, self.size, self.batch_size, self.dtype, self.mode, self.strategy)


def serving_fields(cfg, model: str, setting: str, device: str) -> dict:
    """The identity and settings of a serving row of `cfg` (a BenchConfig)."""
    spec = cfg.spec(model)
    return dict(label=cfg.label, model=model, checkpoint=spec.checkpoint, task=spec.task, size=cfg.size,
                mode="eager" if setting == "eager" else cfg.compiled_mode(), setting=setting, dtype=cfg.dtype,
                device=device, settings=cfg.settings_fingerprint(), sequence=list(cfg.serving_batch_sizes))


def compile_cost_fields(cfg, model: str, strategy: str, device: str) -> dict:
    """The identity and settings of a compile-time row of `cfg`: its first batch size, its first
    compiled mode."""
    spec = cfg.spec(model)
    return dict(label=cfg.label, model=model, checkpoint=spec.checkpoint, task=spec.task, size=cfg.size,
                batch_size=cfg.batch_sizes[0], mode=cfg.compiled_mode(), strategy=strategy, dtype=cfg.dtype,
                device=device, settings=cfg.settings_fingerprint())
