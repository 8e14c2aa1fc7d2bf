"""Is a configuration allowed? Checked when a BenchConfig is made: each field by the kind, allowed
values and bounds its declaration gives (schema.py), then the rules that tie fields together; and
before a command starts, the rules across its profiles (check_distinct_folders). Errors are one line
naming the field and the allowed values. No torch, no look at the machine (that is
measure/environment.check_device_available); this module does not import bench_config (which calls
it), so the two form no cycle.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

from .schema import Parameter, parameters


class ConfigError(ValueError):
    """A parameters file or value is invalid; the message is one line for the user."""


def shown(value) -> str:
    """`value` as the user wrote it (a tuple as the YAML list it was), its repr bounded: a few items of
    a list, a few levels, so a huge or aliased value (a YAML bomb) makes a short line, not gigabytes."""
    import reprlib

    short = reprlib.Repr()
    short.maxstring, short.maxother, short.maxlong, short.maxlevel = 100, 100, 100, 3
    short.maxlist = short.maxtuple = short.maxdict = short.maxset = 8
    text = short.repr(list(value) if isinstance(value, tuple) else value)
    return text if len(text) <= 200 else text[:197] + "..."


def refuse(key: str, value, allowed: str) -> None:
    """Raise the one-line ConfigError: "key: value is not allowed; allowed: ..."."""
    raise ConfigError(f"{str(key)[:100]}: {shown(value)} is not allowed; allowed: {allowed}")


MAX_TEXT = 200  # characters of a label or a tag: it names a folder and titles pages
# C0 and C1 control characters: printed on a terminal they run (clear the screen, write the clipboard)
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _check_text(p: Parameter, value) -> None:
    if not isinstance(value, str) or not value.strip():
        refuse(p.name, value, "a non-empty string")
    _check_plain(p.name, value)


def _check_plain(name: str, value: str) -> None:
    """A text a page titles and a terminal prints: at most MAX_TEXT characters, no control character."""
    if len(value) > MAX_TEXT or CONTROL.search(value):
        refuse(name, value, f"text of at most {MAX_TEXT} characters without control characters")


def _check_choice(p: Parameter, value) -> None:
    # `in` alone would let 1 pass for True: the type must be one of the allowed values' types too
    if value not in p.allowed or type(value) not in {type(v) for v in p.allowed}:
        refuse(p.name, value, p.allowed_text())


def _check_flag(p: Parameter, value) -> None:
    if type(value) is not bool:
        refuse(p.name, value, "true or false")


def _check_count(p: Parameter, value) -> None:
    if type(value) is not int or not p.low <= value <= p.high:
        refuse(p.name, value, p.allowed_text())


def _check_seconds(p: Parameter, value) -> None:
    # NaN passes "<= 0" and would make the runner wait forever for a hung cell; so would infinity.
    if (type(value) not in (int, float) or not math.isfinite(value) or value < p.low
            or (p.positive and value == p.low) or value > p.high):
        refuse(p.name, value, p.allowed_text())


def _check_list(p: Parameter, value) -> None:
    item = p.item or str
    if not isinstance(value, tuple) or not all(type(v) is item for v in value):
        refuse(p.name, value, f"a list of {item.__name__}")
    if not p.may_be_empty and not value:
        refuse(p.name, list(value), "a non-empty list")
    if not p.repeats_ok and len(set(value)) != len(value):
        refuse(p.name, list(value), "a list without repeats")
    for v in value:
        if isinstance(v, str):
            _check_plain(p.name, v)
        if p.allowed and v not in p.allowed:
            refuse(p.name, v, ", ".join(p.allowed))
        if p.low is not None and v < p.low:
            refuse(p.name, v, f"integers >= {p.low:g}")


def _check_models(p: Parameter, value, own: set[str]) -> None:
    _check_list(dataclasses.replace(p, allowed=()), value)
    for name in value:
        if name not in p.allowed and name not in own:
            refuse(p.name, name, ", ".join(p.allowed) + ", or {name: ..., checkpoint: FOLDER_OR_HUB_ID, task: ...}")


def _check_configurations(p: Parameter, value) -> None:
    from .configurations import BASELINE, configuration

    _check_list(p, value)
    for name in value:
        try:
            configuration(name)
        except ValueError as err:
            raise ConfigError(f"{p.name}: {err}") from None
    if BASELINE not in value:
        refuse(p.name, list(value), "a list that includes eager (the float32 baseline of every speedup)")


_CHECKS = {"text": _check_text, "choice": _check_choice, "flag": _check_flag, "count": _check_count,
           "seconds": _check_seconds, "number": _check_seconds, "list": _check_list,
           "configurations": _check_configurations}


def _check_checkpoints(cfg) -> None:
    from .registry import own_spec

    if not isinstance(cfg.checkpoints, tuple):
        refuse("checkpoints", cfg.checkpoints, "a list of {name, checkpoint, task} entries")
    names = [entry[0] for entry in cfg.checkpoints]
    if len(set(names)) != len(names):
        refuse("models", names, "your own checkpoints under distinct names")
    for name, checkpoint, task in cfg.checkpoints:
        try:
            own_spec(name, checkpoint, task or None)
        except ValueError as err:
            raise ConfigError(f"models: {name}: {err}") from None


def check_config(cfg) -> None:
    """Raise ConfigError naming the first field of a BenchConfig whose value is not allowed: each
    field by its declared kind (schema.py), then the rules that tie fields together."""
    _check_checkpoints(cfg)
    own = {entry[0] for entry in cfg.checkpoints}
    for p in parameters(type(cfg)):
        value = getattr(cfg, p.name)
        if p.kind == "models":
            _check_models(p, value, own)
        elif p.kind == "image":
            if value is not None:
                _check_image(value)
        elif p.kind in _CHECKS:
            _CHECKS[p.kind](p, value)
    _check_processed_size(cfg)
    if cfg.serving_batch_sizes and len(set(cfg.serving_batch_sizes)) < 2:
        refuse("serving_batch_sizes", list(cfg.serving_batch_sizes), "at least two different batch sizes "
              "(the study is about shapes that change), or an empty list")
    if cfg.size == "tiny" and cfg.weights == "pretrained" and set(cfg.models) - own:
        refuse("weights", cfg.weights, "auto or random with size 'tiny' (there are no tiny checkpoints)")


def check_distinct_folders(configs: list, paths) -> None:
    """Profiles of one command must not share a results folder: "Lab A" and "lab-a" both map to lab-a."""
    seen: dict[str, str] = {}
    for cfg, path in zip(configs, paths):
        if cfg.slug() in seen:
            raise ConfigError(f"label {cfg.label!r} of {path} uses the results folder {cfg.slug()!r} of "
                              f"{seen[cfg.slug()]}; give each profile a label of its own")
        seen[cfg.slug()] = str(path)


# the raster formats a photo comes in: Pillow opens others (EPS runs Ghostscript) that no worker should
IMAGE_FORMATS = ("JPEG", "PNG", "WEBP", "BMP", "GIF", "TIFF")
# what a processor may scale an image's shortest edge to, at most (DETR's 800, Mask2Former's 384, the
# classifiers' 224-256 and 512 below it), the aspect ratio kept: an image 10^6 x 1 px would become
# 1,333 x 1.3 billion px of float in every worker
LARGEST_SHORTEST_EDGE = 1333
MAX_PROCESSED_PIXELS = 4096 * 4096  # per image after that resize: 200 MB of float32 RGB


def processed_size(width: int, height: int, shortest_edge: int = LARGEST_SHORTEST_EDGE) -> tuple[int, int]:
    """The image's size after a processor scales its shortest edge to `shortest_edge`, the aspect kept."""
    scale = shortest_edge / max(min(width, height), 1)
    return round(width * scale), round(height * scale)


def _image_size(image: str | None) -> tuple[int, int]:
    """The input image's size, px (the shipped photograph's without one): its header only."""
    from PIL import Image

    path = Path(image).expanduser() if image else Path(__file__).resolve().parent.parent / "data" / "photo-640x480.jpg"
    with Image.open(path, formats=IMAGE_FORMATS) as img:
        return img.size


def _check_processed_size(cfg) -> None:
    """An own checkpoint's processor may scale the input past what a registry model's would (its
    preprocessor_config.json asks for any size, under any key its class reads: registry.processor_size):
    the processed image is bounded as _check_image bounds it for the registry's processors, before any
    worker builds it (100,000 px of shortest edge made the photograph 133,333 x 100,000 px: a 30 GB
    allocation in every worker; `crop_pct: 0.02` a 167 M-pixel one; `size: [6000, 6000]` 36 M)."""
    from .registry import own_spec, processor_size

    for name, checkpoint, task in cfg.checkpoints:
        spec = own_spec(name, checkpoint, task or None)
        if spec.pickled or not Path(spec.checkpoint).is_dir():  # an object's inputs are its own; a hub id's
            continue  # processor is read when it loads
        try:
            size = processor_size(spec.checkpoint)
        except ValueError as err:
            raise ConfigError(f"models: {name}: {err}") from None
        problem = _processed_problem(size, cfg.image)
        if problem:
            raise ConfigError(f"models: {name}: its image processor (preprocessor_config.json) {problem}, more "
                              f"than {MAX_PROCESSED_PIXELS:,} pixels; allowed: a processor size that keeps the "
                              "input within that")


def _processed_problem(size, image) -> str:
    """What the processor `size` (registry.ProcessorSize) makes of the input past MAX_PROCESSED_PIXELS, in
    words; "" when the input stays within it."""
    for length in (size.edge, size.longest):
        if length is not None and not (math.isfinite(length) and length <= MAX_PROCESSED_PIXELS):
            return f"asks for a length of {length:,.0f} px"
    width, height = _image_size(image)
    if not size.resizes and width * height > MAX_PROCESSED_PIXELS:
        return f"does not resize (do_resize: false), so the input is its own {width:,} x {height:,} px"
    if max(size.edge or 0, size.longest or 0) <= LARGEST_SHORTEST_EDGE:
        return ""
    if size.edge is not None:  # its shortest edge scaled to the length, the aspect kept ...
        wide, high = processed_size(width, height, size.edge)
    else:  # ... or its longest side to the bound
        wide, high = processed_size(width, height, size.longest * min(width, height) / max(width, height, 1))
    if size.longest is not None and max(wide, high) > size.longest:  # ... then within the bound
        wide, high = processed_size(width, height, size.longest * min(width, height) / max(width, height, 1))
    if wide * high <= MAX_PROCESSED_PIXELS:
        return ""
    return (f"scales images to {size.edge or size.longest:,.0f} px, so the input ({width:,} x {height:,} px) becomes "
            f"{wide:,} x {high:,} px")


def _check_image(image) -> None:
    if not isinstance(image, str):
        refuse("image", image, "a path to an image file, or null")
    path = Path(image).expanduser()
    if not path.is_file():
        refuse("image", image, "an existing image file (" + ("file not found" if not path.exists()
                                                             else "not a regular file") + ")")
    # Pillow is light (no torch); verify() reads the header without decoding the pixels.
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path, formats=IMAGE_FORMATS) as img:
            width, height = img.size
            img.verify()
    except Image.DecompressionBombError:
        refuse("image", image, f"an image of at most {Image.MAX_IMAGE_PIXELS:,} pixels (Pillow's decompression-bomb "
                              "limit; this one is larger)")
    except (UnidentifiedImageError, OSError, SyntaxError):
        refuse("image", image, f"an image file Pillow can read, {', '.join(IMAGE_FORMATS)} (this file is not an "
                              "image in one of these formats, or is damaged)")
    except ValueError as err:  # a limit Pillow keeps while reading the header, e.g. a PNG text chunk's size
        refuse("image", image, f"an image whose header Pillow reads within its limits ({str(err)[:100]})")
    if width * height > Image.MAX_IMAGE_PIXELS:  # Pillow only warns up to twice its limit
        refuse("image", image, f"an image of at most {Image.MAX_IMAGE_PIXELS:,} pixels (this one is {width:,} x "
                              f"{height:,})")
    wide, high = processed_size(width, height)
    if wide * high > MAX_PROCESSED_PIXELS:
        refuse("image", image, f"an image a processor can resize within {MAX_PROCESSED_PIXELS:,} pixels: this one "
                              f"({width:,} x {height:,} px) becomes {wide:,} x {high:,} px when its shortest edge is "
                              f"scaled to {LARGEST_SHORTEST_EDGE:,} px with its aspect ratio kept; crop it nearer to "
                              "square")
    try:  # decode it once here (within the limits above), not once per worker: a truncated file stops now
        with Image.open(path, formats=IMAGE_FORMATS) as img:
            img.load()
    except (OSError, SyntaxError, ValueError) as err:
        refuse("image", image, f"an image whose pixels decode ({str(err)[:100]})")