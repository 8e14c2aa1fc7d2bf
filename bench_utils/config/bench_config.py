"""Benchmark configuration: one frozen dataclass, the one source of the defaults and of the allowed
values. Every instance is validated on creation (validation.py), before any model loads.

No torch import: a bad parameters file must fail in a fraction of a second.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass, field

DTYPES = ("float32", "float16", "bfloat16")
DEVICES = ("auto", "cpu", "cuda")
WEIGHTS = ("auto", "pretrained", "random")
# torch.compile(dynamic=...): false = static shapes (a recompile per new shape), true = symbolic shapes
# from the first call, "auto" = static first, symbolic after the first shape change (dynamic=None)
DYNAMIC = (False, True, "auto")
# the compile-time study's ways to cut compile time, beside whole-model compile ("whole", always measured)
COMPILE_STRATEGIES = ("regional", "cache-artifacts")
# settings that add studies after the sweep but do not change a cell's measurement
STUDY_FIELDS = ("profile", "serving_batch_sizes", "compile_strategies")


class ConfigError(ValueError):
    """A parameters file or value is invalid; the message is one line for the user."""


@dataclass(frozen=True)
class BenchConfig:
    """Every parameter of a run. These defaults are the one source: the notebook's parameters cell and
    parameters/cpu.yaml (the default CPU profile) are held equal to them by tests."""

    label: str = "CPU"  # hardware label shown in the report, e.g. "A100"
    models: tuple[str, ...] = ("vit", "resnet")  # short names from the registry
    size: str = "tiny"  # "full" = the checkpoint's architecture, "tiny" = shrunk config for smoke runs
    batch_sizes: tuple[int, ...] = (1, 4)  # images per forward pass
    modes: tuple[str, ...] = ("eager", "default")  # "eager" (required: the baseline) and torch.compile modes
    fullgraph: bool = False  # torch.compile(fullgraph=...): a graph break becomes an error
    dtype: str = "float32"  # model and input dtype (with autocast: the autocast dtype, weights stay float32)
    autocast: bool = False  # run under torch.autocast(dtype) with float32 weights; needs float16/bfloat16
    channels_last: bool = False  # model and 4-D inputs in channels_last memory format (convolutional models)
    device: str = "cpu"  # "auto" picks cuda when available
    weights: str = "random"  # "pretrained" (hub/cache), "random" (shipped config), "auto" (try, fall back)
    warmup: int = 3  # at least this many untimed calls; warm-up then goes on until steady (timing.py)
    max_warmup_s: float = 10.0  # warm-up stops here even if the latency has not settled, seconds per process
    iterations: int = 30  # at least this many timed calls per process (the guide used 300)
    min_time_s: float = 1.0  # and at least this long timing, seconds per process (more samples for fast models)
    repeats: int = 3  # rounds per cell at least: a round is one fresh process per mode, taking turns timing
    blocks: int = 4  # timed blocks per process in a round, alternating with the other modes' (ABBA order)
    settle_s: float = 0.25  # idle seconds before each block: the previous process's OpenMP threads stop spinning
    target_halfwidth: float = 0.0  # stop adding rounds to a cell once its speedup interval is this tight
    # (relative half-width, e.g. 0.08 = +-8%); 0 = exactly `repeats` rounds
    budget_min: float = 0.0  # minutes of sweep after which no extra round starts (0 = no extra rounds)
    max_repeats: int = 12  # rounds per cell at most (extra rounds only with target_halfwidth and budget_min)
    timeout_s: float = 600.0  # wall-clock limit per cell process, seconds
    cold_compile: bool = True  # compile first with an empty compiler cache, then again with it filled
    image: str | None = None  # image path; None = the shipped 640x480 photograph (the guide's geometry)
    tags: tuple[str, ...] = field(default=())  # free-form labels for the report, e.g. ("nightly",)
    # your own checkpoints, named in `models` like registry models: (name, folder or hub id, task or "")
    checkpoints: tuple[tuple[str, str, str], ...] = field(default=())
    dynamic: bool | str = False  # torch.compile(dynamic=...) of the sweep: false, true or "auto" (DYNAMIC)
    # --- studies (explain, serve, cut compile time): off by default, none changes the sweep's numbers ---
    profile: bool = True  # after timing, torch.profiler over a few calls of each cell's first process (why a speedup)
    serving_batch_sizes: tuple[int, ...] = field(default=())  # a server's request sequence, e.g. [1, 4, 16, 3, 7]
    compile_strategies: tuple[str, ...] = field(default=())  # regional, cache-artifacts (beside whole-model)

    def __post_init__(self) -> None:
        from .validation import check_config  # it reads this module's allowed values: imported on use

        check_config(self)
        for name in ("max_warmup_s", "min_time_s", "timeout_s", "settle_s", "target_halfwidth", "budget_min"):  # `10` and `10.0` s: one setting, one fingerprint
            object.__setattr__(self, name, float(getattr(self, name)))

    def cells(self) -> list[tuple[str, int, str]]:
        """The (model, batch_size, mode) matrix in run order: model-major, eager before compiled."""
        return [(m, b, mode) for m in self.models for b in self.batch_sizes for mode in self.modes]

    def runs(self) -> list[tuple[str, int, str, int]]:
        """Every process to run, (model, batch_size, mode, repeat), in run order: one pass over every
        cell per repeat, eager right before compiled within a pass. A cell's repeats are thus spread
        over the whole run, so their disagreement (and its interval) includes the machine's drift
        over minutes, while both sides of a speedup still see the same moments of it."""
        return [(m, b, mode, r) for r in range(self.repeats) for m in self.models for b in self.batch_sizes
                for mode in self.modes]

    def block_s(self) -> float:
        """Seconds of timed calls in one block, at least: `min_time_s` per process over its `blocks`."""
        return self.min_time_s / self.blocks

    def block_calls(self) -> int:
        """Timed calls in one block, at least: `iterations` per process over its `blocks`."""
        return max(1, -(-self.iterations // self.blocks))

    def settings_fingerprint(self) -> str:
        """Hash of the settings that change a measurement but are not part of a cell's key.

        Resuming into a results file written with other settings would mix incomparable rows.
        """
        skip = ("models", "batch_sizes", "modes", "repeats", "timeout_s", "tags", "label", "target_halfwidth",
                "budget_min", "max_repeats", *STUDY_FIELDS)
        keep = {k: v for k, v in self.to_dict().items() if k not in skip}
        if keep["dynamic"] is False:
            del keep["dynamic"]  # static shapes, as before the setting existed: the fingerprint stays
        return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:12]

    def to_dict(self) -> dict:
        """Plain JSON/YAML values (lists, not tuples; your checkpoints as {name, checkpoint, task})."""
        values = {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}
        values["checkpoints"] = [dict(zip(("name", "checkpoint", "task"), entry)) for entry in self.checkpoints]
        return values

    def compile_dynamic(self) -> bool | None:
        """The `dynamic` argument of torch.compile: "auto" is None (static until a shape changes)."""
        return None if self.dynamic == "auto" else self.dynamic

    def compiled_mode(self) -> str:
        """The compile mode the studies use: the first compiled mode of `modes` ("default" if none)."""
        return next((mode for mode in self.modes if mode != "eager"), "default")

    def spec(self, name: str):
        """The ModelSpec of a name in `models`: a registry model, or one of your `checkpoints`."""
        from .registry import get_spec, own_spec

        for own_name, checkpoint, task in self.checkpoints:
            if own_name == name:
                return own_spec(own_name, checkpoint, task or None)
        return get_spec(name)

    def variant(self) -> str:
        """Precision and layout in words, e.g. "bfloat16 autocast, channels_last"."""
        return variant_name(self.dtype, self.autocast, self.channels_last)

    def slug(self) -> str:
        """The label as a file-system friendly name, e.g. "A100 (nightly)" -> "a100-nightly"."""
        return re.sub(r"[^a-z0-9]+", "-", self.label.lower()).strip("-") or "run"


def variant_name(dtype: str, autocast: bool, channels_last: bool) -> str:
    """The precision/layout variant of a run, as the report names it."""
    return dtype + (" autocast" if autocast else "") + (", channels_last" if channels_last else "")
