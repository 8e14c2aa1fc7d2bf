"""The 12 checkpoints of the reference guide: short name -> what to build and how to feed it.

No torch import here: the registry is read by config validation and by `python -m bench_utils models`.
Architecture values live in shipped JSON files (``model_configs/<size>/<name>/``), copied from each
checkpoint's own ``config.json`` / ``preprocessor_config.json``, so a random-weight model has the
same shapes as the real one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

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

    def config_dir(self, size: str) -> Path:
        """Directory holding config.json and preprocessor_config.json for this size."""
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
MODEL_NAMES = tuple(MODELS)


def get_spec(name: str) -> ModelSpec:
    """The spec for a short name; a ValueError lists the valid names."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; valid names: {', '.join(MODEL_NAMES)}") from None


def _published() -> dict:
    path = resources.files("bench_utils") / "model_configs" / "published_params.json"
    return json.loads(path.read_text())
