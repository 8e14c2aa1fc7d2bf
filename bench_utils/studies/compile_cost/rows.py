"""The compile-time study's row and what names its files: one model compiled one way (a strategy). No
torch."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...config.bench_config import COMPILE_STRATEGIES
from ...results.rows import Row

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
