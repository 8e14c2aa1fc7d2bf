"""Build a registry model: the real checkpoint when it can be had, else the same architecture with
random weights from the config shipped in the package (latency does not depend on weight values).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlparse

import torch

from ..config.registry import ModelSpec

TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
HUB_PROBE_TIMEOUT_S = 3.0  # how long `weights: auto` waits for the hub before choosing random weights
# Checkpoints whose config asks timm for ImageNet backbone weights: the checkpoint has them already.
_NO_BACKBONE_DOWNLOAD = {"use_pretrained_backbone": False}


@dataclass
class LoadedModel:
    model: torch.nn.Module
    weights: str  # "pretrained" or "random": what was actually used
    note: str  # why, in words
    num_params: int


def count_params(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


@lru_cache(maxsize=1)
def hub_reachable() -> bool:
    """One quick TCP connect to the hub endpoint, instead of the hub client's minute of retries."""
    endpoint = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        with socket.create_connection((endpoint.hostname, port), timeout=HUB_PROBE_TIMEOUT_S):
            return True
    except OSError:
        return False


def in_local_cache(checkpoint: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(checkpoint, "config.json"), str)


def _model_class(spec: ModelSpec):
    import transformers

    return getattr(transformers, spec.model_class)


def _config_kwargs(spec: ModelSpec) -> dict:
    return dict(_NO_BACKBONE_DOWNLOAD) if spec.task == "object-detection" else {}


def build_random(spec: ModelSpec, size: str) -> torch.nn.Module:
    """The architecture from the shipped config, random weights, no network access."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(spec.config_dir(size), local_files_only=True)
    for key, value in _config_kwargs(spec).items():
        setattr(config, key, value)
    torch.manual_seed(0)  # the same random weights in every process: eager and compiled agree
    return _model_class(spec)(config)


def load_pretrained(spec: ModelSpec, local_only: bool) -> torch.nn.Module:
    return _model_class(spec).from_pretrained(
        spec.checkpoint, local_files_only=local_only, **_config_kwargs(spec))


WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")


def _build_own(spec: ModelSpec, weights: str):
    """A user's checkpoint: its own weights (pretrained, or auto when the folder has them), or its
    architecture with random weights."""
    import json

    import transformers
    from transformers import AutoConfig

    folder = spec.config_dir("full")
    architecture = json.loads((folder / "config.json").read_text())["architectures"][0]
    model_class = getattr(transformers, architecture)
    has_weights = any((folder / name).is_file() for name in WEIGHT_FILES)
    if weights == "random" or (weights == "auto" and not has_weights):
        torch.manual_seed(0)  # the same random weights in every process: eager and compiled agree
        why = "requested" if weights == "random" else "no weights file in the checkpoint"
        return model_class(AutoConfig.from_pretrained(folder, local_files_only=True)), "random", \
            f"random weights ({why}), architecture of {spec.checkpoint}"
    return model_class.from_pretrained(folder, local_files_only=True), "pretrained", f"your checkpoint {spec.checkpoint}"


def load_model(spec: ModelSpec, size: str, weights: str, device: str, dtype: str) -> LoadedModel:
    """Build `spec` in eval mode on `device` in `dtype`; `weights` is pretrained, random or auto."""
    if weights not in ("auto", "pretrained", "random"):
        raise ValueError(f"weights: {weights!r} is not allowed; allowed: auto, pretrained, random")
    if size == "tiny" and weights == "pretrained" and not spec.own:
        raise ValueError("weights: 'pretrained' is not allowed with size 'tiny' (no tiny checkpoints)")
    model, used, note = _build_own(spec, weights) if spec.own else _choose_and_build(spec, size, weights)
    model = model.to(device=device, dtype=TORCH_DTYPES[dtype]).eval()
    return LoadedModel(model, used, note, count_params(model))


def _choose_and_build(spec: ModelSpec, size: str, weights: str):
    if weights == "random" or size == "tiny":
        why = "tiny config" if size == "tiny" else "requested"
        return build_random(spec, size), "random", f"random weights ({why}), shipped config"
    if weights == "pretrained":
        return load_pretrained(spec, local_only=_hub_offline()), "pretrained", f"{spec.checkpoint}"
    # auto: the local cache first, then the hub if it answers, else random weights.
    cache_note = "not in local Hugging Face cache"
    if in_local_cache(spec.checkpoint):
        try:
            return load_pretrained(spec, local_only=True), "pretrained", "local Hugging Face cache"
        except OSError as err:  # e.g. config cached but weights missing
            cache_note = f"local cache incomplete ({err.__class__.__name__})"
    if _hub_offline():
        return build_random(spec, size), "random", f"{cache_note}; HF_HUB_OFFLINE is set"
    if not hub_reachable():
        return build_random(spec, size), "random", f"{cache_note}; hub unreachable"
    try:
        return load_pretrained(spec, local_only=False), "pretrained", "downloaded from the hub"
    except OSError as err:
        first_line = str(err).splitlines()[0] if str(err) else err.__class__.__name__
        return build_random(spec, size), "random", f"hub download failed: {first_line}"
