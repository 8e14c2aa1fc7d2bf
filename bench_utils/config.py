"""Benchmark configuration: one frozen dataclass, validated from a parameters YAML before any model loads.

No torch import: a bad parameters file must fail in a fraction of a second.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from .registry import MODEL_NAMES, SIZES

# torch.compile modes: "max-autotune" = autotuned kernels + CUDA graphs; "max-autotune-no-cudagraphs"
# separates the two (autotuning alone); on CPU "reduce-overhead" has no CUDA graphs to use.
MODES = ("eager", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
CUDAGRAPH_MODES = ("reduce-overhead", "max-autotune")
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
    repeats: int = 3  # processes per cell: intervals include the variation between processes
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
        _check(self)
        for name in ("max_warmup_s", "min_time_s", "timeout_s"):  # `10` and `10.0` s: one setting, one fingerprint
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

    def settings_fingerprint(self) -> str:
        """Hash of the settings that change a measurement but are not part of a cell's key.

        Resuming into a results file written with other settings would mix incomparable rows.
        """
        skip = ("models", "batch_sizes", "modes", "repeats", "timeout_s", "tags", "label", *STUDY_FIELDS)
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


FIELD_TYPES = {f.name: f.type for f in dataclasses.fields(BenchConfig)}
_LIST_FIELDS = {"models": str, "batch_sizes": int, "modes": str, "tags": str, "serving_batch_sizes": int,
                "compile_strategies": str}
_MAY_BE_EMPTY = ("tags", "serving_batch_sizes", "compile_strategies")
_CHOICES = {"size": SIZES, "dtype": DTYPES, "device": DEVICES, "weights": WEIGHTS}


def _fail(key: str, value, allowed: str) -> None:
    shown = list(value) if isinstance(value, tuple) else value  # as the user wrote it: a YAML list
    raise ConfigError(f"{key}: {shown!r} is not allowed; allowed: {allowed}")


MAX_CALLS = 1_000_000  # warm-up or timed calls: beyond this a typo, not a plan
MAX_REPEATS = 100  # processes per cell
MAX_SECONDS = 7 * 24 * 3600.0  # any duration parameter: a week


def _check_count(key: str, value, low: int, high: int, why: str = "") -> None:
    if type(value) is not int or not low <= value <= high:
        _fail(key, value, f"an integer from {low} to {high:,}{why}")


def _check_seconds(key: str, value, allow_zero: bool) -> None:
    # NaN passes "<= 0" and would make the runner wait forever for a hung cell; so would infinity.
    low_ok = (lambda v: v >= 0) if allow_zero else (lambda v: v > 0)
    if type(value) not in (int, float) or not math.isfinite(value) or not low_ok(value) or value > MAX_SECONDS:
        _fail(key, value, f"a finite number of seconds {'>= 0' if allow_zero else '> 0'}, at most {MAX_SECONDS:g}")


def _check_checkpoints(cfg: BenchConfig) -> None:
    from .registry import own_spec

    if not isinstance(cfg.checkpoints, tuple):
        _fail("checkpoints", cfg.checkpoints, "a list of {name, checkpoint, task} entries")
    names = [entry[0] for entry in cfg.checkpoints]
    if len(set(names)) != len(names):
        _fail("models", names, "your own checkpoints under distinct names")
    for name, checkpoint, task in cfg.checkpoints:
        try:
            own_spec(name, checkpoint, task or None)
        except ValueError as err:
            raise ConfigError(f"models: {name}: {err}") from None


def _own_entry(entry) -> tuple[str, str, str]:
    """{name, checkpoint, task} (task optional), or its list form [name, checkpoint, task]."""
    if isinstance(entry, (list, tuple)) and len(entry) == 3:
        entry = dict(zip(("name", "checkpoint", "task"), entry))
    if not isinstance(entry, dict) or set(entry) - {"name", "checkpoint", "task"} or not {"name", "checkpoint"} <= set(entry):
        _fail("models", entry, "a registry name or {name: ..., checkpoint: FOLDER_OR_HUB_ID, task: ...} (task optional "
                               "for a folder)")
    values = (entry["name"], entry["checkpoint"], entry.get("task") or "")
    if not all(isinstance(v, str) for v in values) or not values[0] or not values[1]:
        _fail("models", entry, "name, checkpoint and task as text")
    return values


def _check(cfg: BenchConfig) -> None:
    if not isinstance(cfg.label, str) or not cfg.label.strip():
        _fail("label", cfg.label, "a non-empty string")
    for key, item_type in _LIST_FIELDS.items():
        value = getattr(cfg, key)
        if not isinstance(value, tuple) or not all(type(v) is item_type for v in value):
            _fail(key, value, f"a list of {item_type.__name__}")
        if key not in _MAY_BE_EMPTY and not value:
            _fail(key, list(value), "a non-empty list")
        if len(set(value)) != len(value) and key != "serving_batch_sizes":  # a server sees a size again
            _fail(key, list(value), "a list without repeats")
    _check_checkpoints(cfg)
    own = {entry[0] for entry in cfg.checkpoints}
    for name in cfg.models:
        if name not in MODEL_NAMES and name not in own:
            _fail("models", name, ", ".join(MODEL_NAMES) + ", or {name: ..., checkpoint: FOLDER_OR_HUB_ID, task: ...}")
    for mode in cfg.modes:
        if mode not in MODES:
            _fail("modes", mode, ", ".join(MODES))
    for key in ("batch_sizes", "serving_batch_sizes"):
        for batch in getattr(cfg, key):
            if batch < 1:
                _fail(key, batch, "integers >= 1")
    if cfg.serving_batch_sizes and len(set(cfg.serving_batch_sizes)) < 2:
        _fail("serving_batch_sizes", list(cfg.serving_batch_sizes), "at least two different batch sizes "
              "(the study is about shapes that change), or an empty list")
    for strategy in cfg.compile_strategies:
        if strategy not in COMPILE_STRATEGIES:
            _fail("compile_strategies", strategy, ", ".join(COMPILE_STRATEGIES))
    if cfg.dynamic not in DYNAMIC or type(cfg.dynamic) not in (bool, str):  # 1 == True: refuse numbers
        _fail("dynamic", cfg.dynamic, "false, true or auto")
    for key, allowed in _CHOICES.items():
        if getattr(cfg, key) not in allowed:
            _fail(key, getattr(cfg, key), ", ".join(allowed))
    if cfg.size == "tiny" and cfg.weights == "pretrained" and set(cfg.models) - own:
        _fail("weights", cfg.weights, "auto or random with size 'tiny' (there are no tiny checkpoints)")
    for key in ("fullgraph", "autocast", "channels_last", "cold_compile", "profile"):
        if type(getattr(cfg, key)) is not bool:
            _fail(key, getattr(cfg, key), "true or false")
    if cfg.autocast and cfg.dtype == "float32":
        _fail("autocast", cfg.autocast, "false with dtype float32 (autocast needs dtype float16 or bfloat16)")
    if "eager" not in cfg.modes:
        _fail("modes", list(cfg.modes), "a list that includes eager (the baseline of every speedup)")
    _check_count("warmup", cfg.warmup, 0, MAX_CALLS)
    _check_count("iterations", cfg.iterations, 2, MAX_CALLS, " (a spread needs two samples)")
    _check_count("repeats", cfg.repeats, 1, MAX_REPEATS)
    _check_seconds("min_time_s", cfg.min_time_s, allow_zero=True)
    _check_seconds("max_warmup_s", cfg.max_warmup_s, allow_zero=True)
    _check_seconds("timeout_s", cfg.timeout_s, allow_zero=False)
    if cfg.image is not None:
        _check_image(cfg.image)


def _check_image(image) -> None:
    if not isinstance(image, str):
        _fail("image", image, "a path to an image file, or null")
    path = Path(image).expanduser()
    if not path.is_file():
        _fail("image", image, "an existing image file (file not found)")
    # Pillow is light (no torch); verify() reads the header without decoding the pixels.
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            img.verify()
    except Image.DecompressionBombError:
        _fail("image", image, f"an image of at most {Image.MAX_IMAGE_PIXELS:,} pixels (Pillow's decompression-bomb "
                              "limit; this one is larger)")
    except (UnidentifiedImageError, OSError):
        _fail("image", image, "an image file Pillow can read (this file is not an image)")


def config_from_dict(values: dict, source: str = "parameters") -> BenchConfig:
    """Validate a mapping (from YAML or papermill parameters) into a BenchConfig."""
    if not isinstance(values, dict):
        raise ConfigError(f"{source}: expected a mapping of key: value, got {type(values).__name__}")
    unknown = sorted(set(values) - set(FIELD_TYPES))
    if unknown:
        _fail(unknown[0], values[unknown[0]], "keys " + ", ".join(FIELD_TYPES))
    kwargs = {}
    values = dict(values)
    own = [_own_entry(entry) for entry in values.pop("checkpoints", None) or []]
    if isinstance(values.get("models"), list):  # {name, checkpoint, task} entries: your own checkpoints
        own += [_own_entry(entry) for entry in values["models"] if not isinstance(entry, str)]
        values["models"] = [entry if isinstance(entry, str) else entry["name"] for entry in values["models"]]
    if own:
        kwargs["checkpoints"] = tuple(own)
    for key, value in values.items():
        if key in _LIST_FIELDS:
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                value = [value]  # a lone value is a one-item list
            if not isinstance(value, list):
                _fail(key, value, f"a list of {_LIST_FIELDS[key].__name__}")
            value = tuple(value)
        kwargs[key] = value
    return BenchConfig(**kwargs)


REQUIRED_KEYS = ("label", "models", "batch_sizes", "modes")


class DuplicateKeyError(ValueError):
    """A parameters file names one key twice (YAML keeps the last silently)."""


def _unique_key_loader():
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise DuplicateKeyError(f"key {key!r} appears twice (line {key_node.start_mark.line + 1}); "
                                            "allowed: each key once")
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return Loader


def load_config(path: str | Path) -> BenchConfig:
    """Read and validate a parameters YAML file; raises ConfigError with a one-line message."""
    import yaml

    _UniqueKeyLoader = _unique_key_loader()
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: parameters file not found")
    try:
        values = yaml.load(path.read_text(), Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the parameters file ({err.strerror})") from None
    except DuplicateKeyError as err:
        raise ConfigError(f"{path}: {err}") from None
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        line = f" (line {where.line + 1})" if where else ""
        raise ConfigError(f"{path}: not valid YAML{line}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a text file") from None
    if values is None:
        raise ConfigError(f"{path}: the file is empty; required keys: {', '.join(REQUIRED_KEYS)}")
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: expected a mapping of key: value, got {type(values).__name__}")
    missing = [key for key in REQUIRED_KEYS if key not in values]
    if missing:
        raise ConfigError(f"{path}: missing required key {missing[0]!r}; required: {', '.join(REQUIRED_KEYS)}")
    try:
        return config_from_dict(values, source=str(path))
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None
