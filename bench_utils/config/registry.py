"""The 12 checkpoints of the reference guide: short name -> what to build and how to feed it.

No torch import here: the registry is read by config validation and by `python -m bench_utils models`.
Architecture values live in shipped JSON files (``model_configs/<size>/<name>/``), copied from each
checkpoint's own ``config.json`` / ``preprocessor_config.json``, so a random-weight model has the
same shapes as the real one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .objects import is_object_folder, read_manifest

SIZES = ("full", "tiny")
TASKS = (
    "image-classification",
    "semantic-segmentation",
    "universal-segmentation",
    "instance-segmentation",
    "zero-shot-object-detection",
    "object-detection",
)


@dataclass(frozen=True)
class ModelSpec:
    name: str  # short name used everywhere in the project
    checkpoint: str  # Hugging Face hub id
    task: str  # one of TASKS
    model_class: str  # transformers class name, e.g. "ViTForImageClassification"
    label: str  # the guide's row label, e.g. "Image Classification/ViT"
    takes_text: bool = False  # OWL-ViT also needs text queries
    own: bool = False  # a user's checkpoint (a folder or a hub id), not one of the guide's 12
    pickled: bool = False  # an object folder (config/objects.py): a notebook's model, measure/objects.py loads it

    @property
    def published(self) -> str:
        """The checkpoint as rows and pages name it: a hub id as is, a user's folder by its name only
        (its absolute path names this machine's folders)."""
        return Path(self.checkpoint).name if Path(self.checkpoint).is_absolute() else self.checkpoint

    def config_dir(self, size: str, local_only: bool | None = None) -> Path:
        """Directory holding config.json and preprocessor_config.json for this size (a user's own
        checkpoint: its folder, or the hub id's snapshot in the local cache, fetched unless `local_only`
        (default: HF_HUB_OFFLINE); `size` does not apply)."""
        if self.own:
            if Path(self.checkpoint).is_dir():
                return Path(self.checkpoint)
            import os

            from huggingface_hub import snapshot_download

            if local_only is None:
                local_only = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
            try:
                return Path(snapshot_download(self.checkpoint, local_files_only=local_only))
            except Exception as err:  # the hub client's own error types, many of them
                if not local_only:
                    raise
                raise OSError(f"{self.checkpoint}: not in the local Hugging Face cache, and the hub is offline "
                              f"or did not answer ({type(err).__name__})") from None
        if size not in SIZES:
            raise ValueError(f"size: {size!r} is not allowed; allowed: {', '.join(SIZES)}")
        return Path(str(resources.files("bench_utils") / "model_configs" / size / self.name))

    @property
    def published_params(self) -> int:
        """Parameter count published for the real checkpoint (see model_configs/published_params.json)."""
        return int(_published()[self.name]["params"])


_SPECS = (
    ModelSpec("vit", "google/vit-base-patch16-224", "image-classification",
              "ViTForImageClassification", "Image Classification/ViT"),
    ModelSpec("beit", "microsoft/beit-base-patch16-224-pt22k-ft22k", "image-classification",
              "BeitForImageClassification", "Image Classification/BeiT"),
    ModelSpec("convnext", "facebook/convnext-large-224", "image-classification",
              "ConvNextForImageClassification", "Image Classification/ConvNeXT"),
    ModelSpec("resnet", "microsoft/resnet-50", "image-classification",
              "ResNetForImageClassification", "Image Classification/ResNet"),
    ModelSpec("segformer", "nvidia/segformer-b0-finetuned-ade-512-512", "semantic-segmentation",
              "SegformerForSemanticSegmentation", "Image Segmentation/Segformer"),
    ModelSpec("mask2former", "facebook/mask2former-swin-tiny-coco-panoptic", "universal-segmentation",
              "Mask2FormerForUniversalSegmentation", "Image Segmentation/Mask2former"),
    ModelSpec("maskformer", "facebook/maskformer-swin-base-ade", "instance-segmentation",
              "MaskFormerForInstanceSegmentation", "Image Segmentation/Maskformer"),
    ModelSpec("deeplabv3-mobilenet", "google/deeplabv3_mobilenet_v2_1.0_513", "semantic-segmentation",
              "MobileNetV2ForSemanticSegmentation", "Image Segmentation/MobileNet"),
    ModelSpec("owlvit", "google/owlvit-base-patch32", "zero-shot-object-detection",
              "OwlViTForObjectDetection", "Object Detection/OwlViT", takes_text=True),
    ModelSpec("detr", "facebook/detr-resnet-50", "object-detection",
              "DetrForObjectDetection", "Object Detection/DETR"),
    ModelSpec("detr-resnet-101", "facebook/detr-resnet-101", "object-detection",
              "DetrForObjectDetection", "Object Detection/Resnet-101"),
    ModelSpec("conditional-detr", "microsoft/conditional-detr-resnet-50", "object-detection",
              "ConditionalDetrForObjectDetection", "Object Detection/Conditional-DETR"),
)

MODELS: dict[str, ModelSpec] = {spec.name: spec for spec in _SPECS}
MODEL_NAMES = tuple(MODELS)  # also the order models are listed in, on every page

# the one name each model goes by on a page (the guide's row labels hide DeepLabV3, say "Resnet-101" for DETR)
DISPLAY_NAMES = {"vit": "ViT-B/16", "beit": "BEiT-B/16", "convnext": "ConvNeXt-L", "resnet": "ResNet-50",
                 "segformer": "SegFormer-B0", "mask2former": "Mask2Former-Swin-T", "maskformer": "MaskFormer-Swin-B",
                 "deeplabv3-mobilenet": "DeepLabV3-MobileNetV2", "owlvit": "OWL-ViT-B/32", "detr": "DETR-ResNet-50",
                 "detr-resnet-101": "DETR-ResNet-101", "conditional-detr": "Conditional-DETR-ResNet-50"}


def display_name(name: str) -> str:
    """A model's name on a page: the registry's display name, a user's own checkpoint by its own name."""
    return DISPLAY_NAMES.get(name, name)


def get_spec(name: str) -> ModelSpec:
    """The spec for a short name; a ValueError lists the valid names."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; valid names: {', '.join(MODEL_NAMES)}") from None


_TASK_BY_CLASS_SUFFIX = {"ForImageClassification": "image-classification",
                         "ForSemanticSegmentation": "semantic-segmentation",
                         "ForUniversalSegmentation": "universal-segmentation",
                         "ForInstanceSegmentation": "instance-segmentation",
                         "ForObjectDetection": "object-detection"}
_ZERO_SHOT_TYPES = ("owlvit", "owlv2", "grounding-dino")  # detection models that take text queries
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
# A name that becomes part of file names (logs, traces) and command lines: a letter or digit first
# (no "-" an option parser would take, no ".."), then letters, digits, ".", "_" or "-"; no separators.
FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
ARCHITECTURE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")  # a transformers class name
MAX_CONFIG_BYTES = 10_000_000  # a config.json is a few KB; a larger one is not a model's config


def task_of(config: dict) -> str | None:
    """The task a transformers config.json implies by its architecture, or None."""
    if config.get("model_type") in _ZERO_SHOT_TYPES:
        return "zero-shot-object-detection"
    architecture = (config.get("architectures") or [""])[0]
    return next((task for suffix, task in _TASK_BY_CLASS_SUFFIX.items() if architecture.endswith(suffix)), None)


def own_spec(name: str, checkpoint: str, task: str | None = None) -> ModelSpec:
    """A user's own checkpoint as a spec; a ValueError says in one line what is wrong with the entry.

    A local folder (saved with `save_pretrained`, model and image processor) is checked here, offline:
    config.json with its architecture, preprocessor_config.json, the task. A hub id is checked when
    the model loads (network or local cache), so it needs `task`.
    """
    if name in MODELS:
        raise ValueError(f"name: {name!r} is a registry model; allowed: another name for your checkpoint")
    if not FILE_NAME.match(name):
        raise ValueError(f"name: {name!r} is not allowed; allowed: up to 100 letters, digits, '.', '_' or '-', "
                         "starting with a letter or digit (it names files)")
    folder = Path(checkpoint).expanduser()
    if is_object_folder(folder):
        return _object_spec(name, folder, task)
    if folder.exists() or checkpoint.startswith((".", "/", "~")):
        config = _checked_folder(folder)
        architecture = (config.get("architectures") or [None])[0]
        task = task or task_of(config)
        if task not in TASKS:
            raise ValueError(f"task: {task!r} is not allowed for {checkpoint} (architecture {architecture}); "
                             f"allowed: {', '.join(TASKS)}")
        return ModelSpec(name, str(folder.resolve()), task, architecture, name,
                         takes_text=task == "zero-shot-object-detection", own=True)
    if not HUB_ID.match(checkpoint):
        raise ValueError(f"checkpoint: {checkpoint!r} is not allowed; allowed: a folder saved with "
                         "save_pretrained, or a hub id such as org/name")
    if task is None:  # a hub id's config cannot be read here (no hub): the task must be named
        raise ValueError(f"task: required for the hub id {checkpoint}; allowed: {', '.join(TASKS)}")
    if task not in TASKS:
        raise ValueError(f"task: {task!r} is not allowed for the hub id {checkpoint}; allowed: {', '.join(TASKS)}")
    return ModelSpec(name, checkpoint, task, "", name, takes_text=task == "zero-shot-object-detection", own=True)


def _object_spec(name: str, folder: Path, task: str | None) -> ModelSpec:
    """A notebook's object (bench_utils.race): its task the manifest's (a Hugging Face class's, or ""
    for none known: its outputs are compared element-wise and as a whole, measure/accuracy.py)."""
    manifest = read_manifest(folder)
    task = task or manifest["task"]
    if task and task not in TASKS:
        raise ValueError(f"task: {task!r} is not allowed for {folder}; allowed: {', '.join(TASKS)}, or none")
    return ModelSpec(name, str(folder.resolve()), task, manifest["class"], name,
                     takes_text=task == "zero-shot-object-detection", own=True, pickled=True)


def _checked_folder(folder: Path) -> dict:
    if not folder.is_dir():
        raise ValueError(f"checkpoint: {str(folder)!r} is not allowed; allowed: an existing folder (not found)")
    if not (folder / "config.json").is_file():
        raise ValueError(f"checkpoint: {str(folder)!r} has no config.json; allowed: a folder saved with "
                         "model.save_pretrained(folder)")
    if not (folder / "preprocessor_config.json").is_file():
        raise ValueError(f"checkpoint: {str(folder)!r} has no preprocessor_config.json; allowed: a folder "
                         "where the image processor was saved too (processor.save_pretrained(folder))")
    try:
        if (folder / "config.json").stat().st_size > MAX_CONFIG_BYTES:
            raise ValueError("too large")
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (ValueError, OSError, RecursionError):
        raise ValueError(f"checkpoint: {str(folder)!r}: config.json is not readable JSON") from None
    if not isinstance(config, dict):
        raise ValueError(f"checkpoint: {str(folder)!r}: config.json is a {type(config).__name__}, not a mapping; "
                         "allowed: a model saved with save_pretrained")
    architectures = config.get("architectures")
    if not (isinstance(architectures, list) and architectures and isinstance(architectures[0], str)
            and ARCHITECTURE.match(architectures[0])):
        raise ValueError(f"checkpoint: {str(folder)!r}: config.json names no architecture (\"architectures\": "
                         f"{str(architectures)[:60]}); allowed: a model saved with save_pretrained (it writes a "
                         "list of class names)")
    if "model_type" in config and not isinstance(config["model_type"], str):
        raise ValueError(f"checkpoint: {str(folder)!r}: config.json's model_type is not text")
    return config


# what a processor may read as a length in pixels: `size`, `crop_size`, `pad_size`, `max_size`,
# `size_divisor`, `shortest_edge`, `longest_edge`, `height`, `width`, `image_resolution`, ... whatever the
# processor's class, nested or in a list
_PIXEL_KEY = re.compile(r"size|edge|height|width|resolution", re.IGNORECASE)
# a fraction the processor divides a length by before cropping back (ConvNeXt's and PoolFormer's
# `crop_pct`: 224 px at 0.02 is a 11,200 px shortest edge)
_FRACTION_KEY = re.compile(r"pct|percent", re.IGNORECASE)
MAX_PROCESSOR_DEPTH = 8  # nesting of a preprocessor_config.json's values read for lengths


_CAP_KEY = re.compile(r"longest_edge|max_size", re.IGNORECASE)  # a bound on the longest side, not a length to reach


@dataclass(frozen=True)
class ProcessorSize:
    """What an own checkpoint's image processor may scale an image to, as far as its
    preprocessor_config.json tells, whatever keys its class reads: `edge`, the largest length in
    pixels any of its values names (after dividing by a crop fraction), None when none; `longest`, the
    largest bound it names on the longest side (`longest_edge`, `max_size`); `resizes`, False where it
    keeps the image's own size (`do_resize: false`)."""

    edge: float | None
    resizes: bool = True
    longest: float | None = None


def _lengths(value, depth: int = 0, key: str = ""):
    """(key path, number) under keys a processor reads as pixel lengths, however nested (a dict, a list)."""
    if depth > MAX_PROCESSOR_DEPTH:
        return
    if isinstance(value, dict):
        for name, inner in value.items():
            yield from _lengths(inner, depth + 1, f"{key} {name}")
    elif isinstance(value, list):
        for inner in value:
            yield from _lengths(inner, depth + 1, key)
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and _PIXEL_KEY.search(key):
        yield key, float(value)
    elif isinstance(value, str) and _PIXEL_KEY.search(key):  # the processor fails on it in every worker
        raise ValueError(f"{key.strip()}: {value[:40]!r} is not a number of pixels")


def processor_size(folder: str | Path) -> ProcessorSize:
    """The largest length, px, an own checkpoint's image processor may scale an image to (ProcessorSize);
    a ValueError in one line when its preprocessor_config.json is not a mapping."""
    path = Path(folder) / "preprocessor_config.json"
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ValueError("too large")
        values = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError, RecursionError):
        raise ValueError(f"checkpoint: {str(folder)!r}: preprocessor_config.json is not readable JSON") from None
    if not isinstance(values, dict):
        raise ValueError(f"checkpoint: {str(folder)!r}: preprocessor_config.json is not a mapping")
    try:
        lengths = list(_lengths(values))
    except ValueError as err:
        raise ValueError(f"checkpoint: {str(folder)!r}: preprocessor_config.json: {err}") from None
    edge = max((abs(length) for key, length in lengths if not _CAP_KEY.search(key)), default=None)
    longest = max((abs(length) for key, length in lengths if _CAP_KEY.search(key)), default=None)
    fractions = [abs(v) for k, v in values.items() if _FRACTION_KEY.search(k) and isinstance(v, (int, float))
                 and not isinstance(v, bool)]
    if edge is not None and fractions:
        smallest = min(fractions)
        edge = edge / smallest if smallest > 0 else float("inf")
    return ProcessorSize(edge, values.get("do_resize", True) is not False, longest)


def _published() -> dict:
    path = resources.files("bench_utils") / "model_configs" / "published_params.json"
    return json.loads(path.read_text(encoding="utf-8"))
