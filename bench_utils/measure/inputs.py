"""Model inputs: one photograph through the checkpoint's own preprocessing, repeated N times.

The default image is a real photograph (Grace Hopper, from matplotlib's sample data), cut to the 4:3
landscape 640x480 of the COCO image the guide timed (000000039769), so every model sees the guide's
input shapes (DETR 800x1066); latency depends on the geometry, not the content. No download needed.
Preprocessing settings come from the checkpoint's preprocessor config shipped in
the package. OWL-ViT's text queries are CLIP token ids, shipped too, so no tokenizer is fetched.
"""

from __future__ import annotations

from pathlib import Path

import torch
from PIL import Image

from ..config.registry import ModelSpec
from . import objects

TEXT_QUERIES = ("a photo of a cat", "a photo of a dog")  # the guide's OWL-ViT queries
# CLIP BPE ids of TEXT_QUERIES: <|startoftext|> a photo of a cat|dog <|endoftext|>; OWL-ViT pads
# with id 0 to 16 tokens (its processor uses padding="max_length"; id 0 is "!", its pad token).
# Checked offline: transformers' CLIPTokenizer, built from CLIP's BPE merges as shipped in the PyPI
# wheel open_clip_torch 3.3.0 (open_clip/bpe_simple_vocab_16e6.txt.gz; vocab = 256 bytes, the same
# with </w>, the merges, then <|startoftext|> <|endoftext|>: 49408 ids), encodes both queries to
# exactly these ids. Neither tokenizers nor transformers ships the vocabulary, so no test redoes it.
_QUERY_TOKEN_IDS = ((49406, 320, 1125, 539, 320, 2368, 49407), (49406, 320, 1125, 539, 320, 1929, 49407))
OWLVIT_MAX_TEXT_LEN = 16
MODEL_INPUT_KEYS = ("pixel_values", "pixel_mask", "input_ids", "attention_mask")


def default_image_path() -> Path:
    """bench_utils/data/photo-640x480.jpg: matplotlib's grace_hopper.jpg (512x600), rows 48-431 (a 4:3
    band around the face) scaled to 640x480 with Lanczos."""
    return Path(__file__).resolve().parent.parent / "data" / "photo-640x480.jpg"


def load_image(path: str | Path | None = None) -> Image.Image:
    path = Path(path).expanduser() if path else default_image_path()
    with Image.open(path) as img:
        return img.convert("RGB")


def image_processor(spec: ModelSpec, size: str):
    from transformers import AutoImageProcessor

    return AutoImageProcessor.from_pretrained(spec.config_dir(size), local_files_only=True)


def text_inputs() -> dict[str, torch.Tensor]:
    """Token ids and attention mask for TEXT_QUERIES, for one image (OWL-ViT flattens them)."""
    ids = torch.zeros((len(_QUERY_TOKEN_IDS), OWLVIT_MAX_TEXT_LEN), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, tokens in enumerate(_QUERY_TOKEN_IDS):
        ids[row, : len(tokens)] = torch.tensor(tokens)
        mask[row, : len(tokens)] = 1
    return {"input_ids": ids, "attention_mask": mask}


def build_inputs(spec: ModelSpec, size: str, batch_size: int, device: str, dtype: torch.dtype,
                 image: str | Path | None = None) -> dict[str, torch.Tensor]:
    """Keyword inputs for `spec`'s forward: `batch_size` copies of the processed image."""
    if batch_size < 1:
        raise ValueError(f"batch_size: {batch_size} is not allowed; allowed: >= 1")
    if spec.pickled:  # a notebook's object: its own example inputs (measure/objects.py)
        return objects.inputs(spec.checkpoint, batch_size, device, dtype)
    if spec.own and spec.takes_text:  # your zero-shot detector: its own processor tokenizes the queries
        from transformers import AutoProcessor

        processor = AutoProcessor.from_pretrained(spec.config_dir(size), local_files_only=True)
        processed = processor(text=[list(TEXT_QUERIES)], images=load_image(image), return_tensors="pt")
    else:
        processed = image_processor(spec, size)(images=load_image(image), return_tensors="pt")
    inputs = {k: v for k, v in processed.items() if k in MODEL_INPUT_KEYS}
    if spec.takes_text and not spec.own:
        inputs.update(text_inputs())
    batch = {}
    for key, tensor in inputs.items():
        # Only floating inputs follow the model dtype; ids and masks keep their integer types. To the
        # device first: a batch too large for the GPU fails there (an `oom` row), not in host memory.
        tensor = tensor.to(device=device, dtype=dtype if tensor.is_floating_point() else None)
        repeats = (batch_size,) + (1,) * (tensor.dim() - 1)
        batch[key] = tensor.repeat(*repeats).contiguous()
    return batch
