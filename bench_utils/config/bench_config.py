"""Benchmark configuration: one frozen dataclass whose fields declare every parameter of a run, with
its default, unit, allowed values and help (schema.Parameter in each field's metadata). Every
instance is validated on creation (validation.py reads those declarations), before any model loads.

No torch import: a bad parameters file must fail in a fraction of a second.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from dataclasses import dataclass

from .configurations import configuration
from .objects import object_digest
from .registry import MODEL_NAMES, SIZES
from .schema import parameter, parameters
from .validation import ConfigError, check_config

__all__ = ["BenchConfig", "ConfigError", "DEVICES", "WEIGHTS", "DYNAMIC", "STUDY_FIELDS", "DECISION_FIELDS"]  # ConfigError: raised by validation, imported from here

DEVICES = ("auto", "cpu", "cuda")
WEIGHTS = ("auto", "pretrained", "random")
# torch.compile(dynamic=...): false = static shapes (a recompile per new shape), true = symbolic shapes
# from the first call, "auto" = static first, symbolic after the first shape change (dynamic=None)
DYNAMIC = (False, True, "auto")
EAGER_IN_PROCESS = ("auto", True, False)
# settings that add studies after the sweep but do not change a cell's measurement
STUDY_FIELDS = ("profiler", "serving_batch_sizes", "startup")
# settings of how much to measure and how to decide: not part of a measurement (the fingerprint)
DECISION_FIELDS = ("target_halfwidth", "budget_min", "max_repeats", "worthwhile")
MAX_CALLS = 1_000_000  # warm-up or timed calls: beyond this a typo, not a plan
MAX_REPEATS = 100  # rounds per cell
MAX_BLOCKS = 1000  # timed blocks per worker and round
MAX_MINUTES = 7 * 24 * 60.0  # a sweep's budget: a week
MAX_SECONDS = 7 * 24 * 3600.0  # any duration parameter: a week


@dataclass(frozen=True)
class BenchConfig:
    """Every parameter of a run, each declared once with its help, unit and allowed values (schema.py).
    The defaults are the default CPU report's (parameters/cpu-report.yaml) with device "auto" and a
    label of their own, so a notebook run with them writes its own folder, whatever the device."""

    label: str = parameter("This machine", "label shown in the report and naming its folder, e.g. A100 (the "
                           "page names the hardware itself)", "text")
    models: tuple[str, ...] = parameter(("resnet", "vit", "segformer", "deeplabv3-mobilenet"),
                                        "registry short names (python -m bench_utils models), or your own "
                                        "checkpoints", "models", allowed=MODEL_NAMES)
    size: str = parameter("full", "full: the checkpoint's architecture; tiny: a shrunk config for smoke runs",
                          "choice", allowed=SIZES)
    batch_sizes: tuple[int, ...] = parameter((1,), "images per forward pass (the guide: 1, 4, 16)", "list",
                                             item=int, low=1)
    configurations: tuple[str, ...] = parameter(
        ("eager", "default", "default+freezing", "max-autotune-no-cudagraphs+freezing", "eager+bf16-autocast",
         "default+bf16-autocast"),
        "eager (required: the float32 baseline) and the configurations raced against it: a mode with "
        "modifiers, e.g. default+freezing (docs/method.md)", "configurations")
    fullgraph: bool = parameter(False, "torch.compile(fullgraph=...): true turns a graph break into an error",
                                "flag")
    device: str = parameter("auto", "auto: cuda when available, else cpu", "choice", allowed=DEVICES)
    weights: str = parameter("auto", "pretrained: from the hub or its cache; random: the shipped config; "
                             "auto: pretrained if available, else random", "choice", allowed=WEIGHTS)
    warmup: int = parameter(3, "untimed calls before timing, at least (then on until the latency is steady)",
                            "count", unit="calls per worker", low=0, high=MAX_CALLS)
    max_warmup_s: float = parameter(2.0, "warm-up stops here even if the latency has not settled", "seconds",
                                    unit="seconds per worker", low=0.0, high=MAX_SECONDS)
    iterations: int = parameter(8, "timed calls, at least (two at least: a spread needs two samples)",
                                "count", unit="calls per worker and round", low=2, high=MAX_CALLS)
    min_time_s: float = parameter(3.0, "timing goes on at least this long (more samples for fast models)",
                                  "seconds", unit="seconds per worker and round", low=0.0, high=MAX_SECONDS)
    repeats: int = parameter(3, "rounds per cell at least (a round: every configuration's worker times blocks, taking "
                             "turns); intervals are over rounds", "count", unit="rounds", low=1, high=MAX_REPEATS)
    blocks: int = parameter(4, "timed blocks per worker in a round, the configurations taking turns in ABBA order "
                            "(iterations and min_time_s are split over them)", "count",
                            unit="blocks per worker and round", low=1, high=MAX_BLOCKS)
    settle_s: float = parameter(0.25, "quiet before a configuration's turn: the other process's OpenMP threads stop "
                                "spinning", "seconds", unit="seconds per handoff", low=0.0, high=60.0)
    eager_in_process: bool | str = parameter(
        "auto", "true: each configuration's worker also times eager float32 on its own model between its blocks, "
        "and its speedup is over those calls; false: over eager's own worker's; auto: true on a GPU (whose host's "
        "launch speed moves between processes), false on a CPU (docs/method.md)", "choice",
        allowed=EAGER_IN_PROCESS)
    rounds_per_process: int = parameter(8, "rounds a cell's prepared workers serve before fresh ones replace them "
                                        "(a fresh one builds and compiles again; on a CPU each round is a process "
                                        "forked from the prepared one anyway, on a GPU the worker itself)", "count",
                                        unit="rounds per worker", low=1, high=MAX_REPEATS)
    live_groups: int = parameter(4, "model x batch-size groups whose workers stay alive together, taking "
                                 "turns round by round (GPU memory: one CUDA context per worker)", "count",
                                 unit="groups", low=1, high=MAX_REPEATS)
    target_halfwidth: float = parameter(0.05, "after `repeats` rounds, add rounds where a contender's 95% "
                                        "interval is widest until it is within +-this (0: never)", "number",
                                        unit="fraction of the speedup", low=0.0, high=0.99)
    worthwhile: float = parameter(1.10, "the smallest speedup worth a compile: the verdict's margin (below it: "
                                  "no worthwhile gain)", "number", unit="times eager's speed", low=1.0, high=100.0)
    budget_min: float = parameter(8.75, "no extra round starts if it would end after this much sweep (0: no "
                                  "extra rounds)", "number", unit="minutes per profile", low=0.0, high=MAX_MINUTES)
    max_repeats: int = parameter(12, "rounds per cell at most, extra rounds included (the first pass's repeats "
                                 "run whatever it says)", "count", unit="rounds", low=1, high=MAX_REPEATS)
    timeout_s: float = parameter(900.0, "wall-clock limit of one worker's round (its first: build and compile "
                                 "included)", "seconds", unit="seconds per round", low=0.0, high=MAX_SECONDS, positive=True)
    image: str | None = parameter(None, "input image file; null: the 640x480 photograph shipped in "
                                  "bench_utils/data (the guide's geometry)", "image")
    tags: tuple[str, ...] = parameter((), "free-form labels for the report, e.g. [nightly]", "list", item=str,
                                      may_be_empty=True)
    checkpoints: tuple[tuple[str, str, str], ...] = parameter(
        (), "your own models, each also named in models: [{name: my-vit, checkpoint: /folder/or/org/id, "
            "task: image-classification}]", "checkpoints")
    dynamic: bool | str = parameter(False, "torch.compile(dynamic=...) of the sweep: false (static shapes), "
                                    "true (symbolic), auto (static until a shape changes)", "choice",
                                    allowed=DYNAMIC)
    keep_freed_memory: bool = parameter(True, "true: each measuring process's C allocator keeps freed memory "
                                        "for the next call (glibc mallopt), so a CPU call does not page-fault its "
                                        "tensors in again (docs/method.md); false: glibc's defaults", "flag")
    # --- studies: none changes the sweep's numbers (STUDY_FIELDS) ---
    profiler: bool = parameter(True, "after timing, torch.profiler over a few calls of eager and each configuration "
                              "its race keeps, once, at each model's smallest batch size: why a speedup (ops, "
                              "kernels, overhead)", "flag")
    serving_batch_sizes: tuple[int, ...] = parameter(
        (), "a server's sequence of request batch sizes, e.g. [1, 4, 16, 3, 7]: the dynamic-shapes study "
            "([]: none)", "list", item=int, low=1, may_be_empty=True, repeats_ok=True)
    startup: bool = parameter(False, "true: in round 0 every configuration's start is timed in a new process "
                              "(first_answer_s: the model built, the form compiled or loaded, its first answer; "
                              "docs/method.md, \"Start-up\"), on a CPU; false: the race's leaders' warm start only, "
                              "in their first later round", "flag")

    def __post_init__(self) -> None:
        check_config(self)
        for p in parameters(type(self)):
            if p.kind in ("seconds", "number"):  # `10` and `10.0`: one setting, one fingerprint
                object.__setattr__(self, p.name, float(getattr(self, p.name)))

    def cells(self) -> list[tuple[str, int, str]]:
        """The (model, batch_size, mode) matrix in run order: model-major, eager before compiled."""
        return [(m, b, config) for m in self.models for b in self.batch_sizes for config in self.configurations]

    def runs(self) -> list[tuple[str, int, str, int]]:
        """Every process to run, (model, batch_size, mode, repeat), in run order: one pass over every
        cell per repeat, eager right before compiled within a pass. A cell's repeats are thus spread
        over the whole run, so their disagreement (and its interval) includes the machine's drift
        over minutes, while both sides of a speedup still see the same moments of it."""
        return [(m, b, config, r) for r in range(self.repeats) for m in self.models for b in self.batch_sizes
                for config in self.configurations]

    @functools.cached_property
    def smallest_batch_size(self) -> int:
        """The profile's smallest batch size (computed once: a profile may list thousands)."""
        return min(self.batch_sizes)

    def block_s(self) -> float:
        """Seconds of timed calls in one block, at least: `min_time_s` per worker and round over its `blocks`."""
        return self.min_time_s / self.blocks

    def block_calls(self) -> int:
        """Timed calls in one block, at least: `iterations` per worker and round over its `blocks`."""
        return max(1, -(-self.iterations // self.blocks))

    def settings_fingerprint(self) -> str:
        """Hash of the settings that change a measurement but are not part of a cell's key.

        Resuming into a results file written with other settings would mix incomparable rows.
        """
        keep = {k: v for k, v in self.to_dict().items() if k in self.fingerprinted()}
        # a notebook's object by what it is (its digest), not by where its folder lies: a saved copy
        # reports its rows as its own, and another object under the same name is another measurement
        keep["checkpoints"] = [entry | {"checkpoint": object_digest(entry["checkpoint"]) or entry["checkpoint"]}
                               for entry in keep["checkpoints"]]
        return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:12]

    def fingerprinted(self) -> list[str]:
        """The settings settings_fingerprint hashes, in declaration order: every field but the matrix, the
        rounds, the label and what decides or studies."""
        skip = ("models", "batch_sizes", "configurations", "repeats", "timeout_s", "tags", "label",
                "rounds_per_process", "live_groups", *DECISION_FIELDS, *STUDY_FIELDS)
        return [f.name for f in dataclasses.fields(self) if f.name not in skip]

    def to_dict(self) -> dict:
        """Plain JSON/YAML values (lists, not tuples; your checkpoints as {name, checkpoint, task})."""
        values = {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}
        values["checkpoints"] = [dict(zip(("name", "checkpoint", "task"), entry)) for entry in self.checkpoints]
        return values

    def times_eager_beside(self, device: str) -> bool:
        """Does a configuration's worker on `device` ("cpu" or "cuda") time eager beside its own blocks
        (eager_in_process; Configuration.eager_beside says which configurations can)?"""
        return device != "cpu" if self.eager_in_process == "auto" else bool(self.eager_in_process)

    def compile_dynamic(self) -> bool | None:
        """The `dynamic` argument of torch.compile: "auto" is None (static until a shape changes)."""
        return None if self.dynamic == "auto" else self.dynamic

    def compiled_configuration(self):
        """The configuration the studies compile with: the first compiled one of `configurations`
        ("default" if none), as a config/configurations.Configuration."""
        return configuration(next((name for name in self.configurations if configuration(name).compiled),
                                  "default"))

    def spec(self, name: str):
        """The ModelSpec of a name in `models`: a registry model, or one of your `checkpoints`."""
        from .registry import get_spec, own_spec

        for own_name, checkpoint, task in self.checkpoints:
            if own_name == name:
                return own_spec(own_name, checkpoint, task or None)
        return get_spec(name)

    def users_folders(self) -> dict[str, str]:
        """The folders of the profile's own files that a row's error text or a published notebook would
        name whole, each with the name it is shown by: an own checkpoint's folder by the folder's name (as
        rows name it: a weights file it could not read named /home/you/... in the results), the image's
        folder as "<image folder>"."""
        from pathlib import Path

        folders = {}
        for _, checkpoint, _ in self.checkpoints:
            if Path(checkpoint).is_absolute() or Path(checkpoint).expanduser().is_dir():
                folder = Path(checkpoint).expanduser().resolve()
                folders[str(folder)] = folder.name
                folders[checkpoint] = folder.name  # as the profile wrote it
        if self.image:
            folder = Path(self.image).expanduser().resolve().parent
            folders[str(folder)] = "<image folder>"
        return folders

    def slug(self) -> str:
        """The label as a file-system friendly name, e.g. "A100 (nightly)" -> "a100-nightly"."""
        return re.sub(r"[^a-z0-9]+", "-", self.label.lower()).strip("-") or "run"

