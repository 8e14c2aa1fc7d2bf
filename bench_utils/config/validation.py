"""Is a configuration allowed? Each field's type, choices and bounds, checked when a BenchConfig is made;
and a mapping (YAML or papermill parameters) turned into one. Errors are one line naming the field
and the allowed values. No torch.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from .bench_config import COMPILE_STRATEGIES, DEVICES, DTYPES, DYNAMIC, WEIGHTS, BenchConfig, ConfigError
from .modes import MODES
from .registry import MODEL_NAMES, SIZES

FIELD_TYPES = {f.name: f.type for f in dataclasses.fields(BenchConfig)}
_LIST_FIELDS = {"models": str, "batch_sizes": int, "modes": str, "tags": str, "serving_batch_sizes": int,
                "compile_strategies": str}
_MAY_BE_EMPTY = ("tags", "serving_batch_sizes", "compile_strategies")
_CHOICES = {"size": SIZES, "dtype": DTYPES, "device": DEVICES, "weights": WEIGHTS}


def _fail(key: str, value, allowed: str) -> None:
    shown = list(value) if isinstance(value, tuple) else value  # as the user wrote it: a YAML list
    raise ConfigError(f"{key}: {shown!r} is not allowed; allowed: {allowed}")


MAX_CALLS = 1_000_000  # warm-up or timed calls: beyond this a typo, not a plan
MAX_REPEATS = 100  # rounds (processes per mode) per cell
MAX_BLOCKS = 1000  # timed blocks per process
MAX_SECONDS = 7 * 24 * 3600.0  # any duration parameter: a week


def _check_count(key: str, value, low: int, high: int, why: str = "") -> None:
    if type(value) is not int or not low <= value <= high:
        _fail(key, value, f"an integer from {low} to {high:,}{why}")


def _check_seconds(key: str, value, allow_zero: bool, unit: str = "seconds", per_second: float = 1.0) -> None:
    # NaN passes "<= 0" and would make the runner wait forever for a hung cell; so would infinity.
    low_ok = (lambda v: v >= 0) if allow_zero else (lambda v: v > 0)
    most = MAX_SECONDS * per_second
    if type(value) not in (int, float) or not math.isfinite(value) or not low_ok(value) or value > most:
        _fail(key, value, f"a finite number of {unit} {'>= 0' if allow_zero else '> 0'}, at most {most:g}")


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


def check_config(cfg: BenchConfig) -> None:
    """Raise ConfigError naming the first field whose value is not allowed."""
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
    _check_count("max_repeats", cfg.max_repeats, 1, MAX_REPEATS)
    _check_count("blocks", cfg.blocks, 1, MAX_BLOCKS)
    _check_seconds("settle_s", cfg.settle_s, allow_zero=True)
    _check_seconds("budget_min", cfg.budget_min, allow_zero=True, unit="minutes", per_second=1 / 60)
    if type(cfg.target_halfwidth) not in (int, float) or not 0 <= cfg.target_halfwidth < 1:
        _fail("target_halfwidth", cfg.target_halfwidth, "a fraction from 0 (off) to below 1, e.g. 0.08 for +-8%")
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
