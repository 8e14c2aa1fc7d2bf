"""Build a registry model: the real checkpoint when it can be had, else the same architecture with
random weights from the config shipped in the package (latency does not depend on weight values).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlparse

import torch

from ..config.registry import ModelSpec
from ..results.rows import OWN_WEIGHTS
from . import objects

TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
HUB_PROBE_TIMEOUT_S = 3.0  # seconds `weights: auto` and own hub ids wait for the hub to answer before going without it
OBJECT_NOTE = "the notebook's own object, its weights as they were"  # a row's weights_note for an object
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
    """One HTTP request to the hub endpoint with a timeout of seconds, instead of the hub client's
    minute of retries. An HTTP request, not only a TCP connect: a server that accepts connections and
    never answers (a proxy or tarpit) would otherwise hang every download until the cell's timeout_s."""
    import urllib.error
    import urllib.request

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/") + "/"
    if urlparse(endpoint).scheme not in ("http", "https"):
        return False
    try:
        with urllib.request.urlopen(urllib.request.Request(endpoint, method="HEAD"), timeout=HUB_PROBE_TIMEOUT_S):
            return True
    except urllib.error.HTTPError as err:  # it answered: a client error still means the hub is there
        return err.code < 500
    except (OSError, ValueError):  # URLError, socket.timeout, a connection refused or reset
        return False


def in_local_cache(checkpoint: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(checkpoint, "config.json"), str)


def _model_class(spec: ModelSpec):
    import transformers

    return getattr(transformers, spec.model_class)


def _config_kwargs(spec: ModelSpec) -> dict:
    return dict(_NO_BACKBONE_DOWNLOAD) if spec.task == "object-detection" else {}


def _skipped_init():
    """transformers' context that skips weight initialization (its name moved between versions)."""
    try:
        from transformers.initialization import no_init_weights
    except ImportError:
        try:
            from transformers.modeling_utils import no_init_weights
        except ImportError:
            return None
    return no_init_weights


_ONE = ("weight", "running_var")  # 1-D tensors of these names scale: one
_ZERO = ("bias", "running_mean")  # and these shift: zero


@torch.no_grad()
def fill_random(model: torch.nn.Module) -> torch.nn.Module:
    """Cheap, deterministic random weights in the ranges trained ones have: matrices and kernels
    uniform with variance 1 / fan in, as torch's own Linear default (activations keep their scale, so no overflow, NaN or denormal
    changes the speed of a call), 1-D scales (norm weights, running variances) one, shifts (biases,
    running means) zero, other 1-D parameters normal with std 0.02 (embeddings, layer scales). Other
    buffers (position ids, masks) stay as their modules made them; 1-D buffers named like a norm's are
    set too, since frozen batch norms copy them from a norm built without initialization."""
    generator = torch.Generator().manual_seed(0)
    for name, param in model.named_parameters():
        if not param.is_floating_point():
            continue
        if param.dim() >= 2:
            bound = (3.0 / max(1, param[0].numel())) ** 0.5  # uniform with variance 1 / fan in
            param.uniform_(-bound, bound, generator=generator)
        elif not _fill_norm_like(name, param):
            param.normal_(0.0, 0.02, generator=generator)
    for name, buffer in model.named_buffers():
        if buffer.is_floating_point() and buffer.dim() == 1:
            _fill_norm_like(name, buffer)
    return model


def _fill_norm_like(name: str, tensor: torch.Tensor) -> bool:
    leaf = name.rsplit(".", 1)[-1]
    if leaf in _ONE:
        tensor.fill_(1.0)
    elif leaf in _ZERO:
        tensor.zero_()
    else:
        return False
    return True


def instantiate_random(model_class, config) -> torch.nn.Module:
    """`model_class(config)` with random weights: built without transformers' initializers (seconds
    of work for a ResNet-50 on CPU), then fill_random (a tenth of a second); the same weights in every
    process, so eager and compiled outputs agree."""
    skipped = _skipped_init()
    if skipped is None:  # an old transformers: its own initializers, seeded
        torch.manual_seed(0)
        return model_class(config)
    with skipped():
        model = model_class(config)
    return fill_random(model)


def build_random(spec: ModelSpec, size: str) -> torch.nn.Module:
    """The architecture from the shipped config, random weights, no network access."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(spec.config_dir(size), local_files_only=True)
    for key, value in _config_kwargs(spec).items():
        setattr(config, key, value)
    return instantiate_random(_model_class(spec), config)


def load_pretrained(spec: ModelSpec, local_only: bool) -> torch.nn.Module:
    return _model_class(spec).from_pretrained(
        spec.checkpoint, local_files_only=local_only, **_config_kwargs(spec))


WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")


def _build_own(spec: ModelSpec, weights: str, device: str, dtype: str):
    """A user's checkpoint: its own weights (pretrained, or auto when the folder has them), or its
    architecture with random weights."""
    import json

    import transformers
    from transformers import AutoConfig

    folder = spec.config_dir("full", local_only=_hub_offline() or (not Path(spec.checkpoint).is_dir()
                                                                     and not hub_reachable()))
    architecture = json.loads((folder / "config.json").read_text(encoding="utf-8"))["architectures"][0]
    model_class = getattr(transformers, architecture)
    config = AutoConfig.from_pretrained(folder, local_files_only=True)
    check_room(model_class, config, dtype, device)  # a config declaring an absurd size: oom, not a SIGKILL
    has_weights = any((folder / name).is_file() for name in WEIGHT_FILES)
    if weights == "random" or (weights == "auto" and not has_weights):
        why = "requested" if weights == "random" else "no weights file in the checkpoint"
        note = f"random weights ({why}), architecture of {spec.published}"  # a folder by its name only
        return instantiate_random(model_class, config), "random", note
    model, info = model_class.from_pretrained(folder, local_files_only=True, output_loading_info=True)
    return model, "pretrained", f"your checkpoint {spec.published}{_unloaded(model, info, spec.published)}"


def _unloaded(model: torch.nn.Module, info: dict, name: str) -> str:
    """What of the model its weights file left at random, said after its note ("" when nothing); a
    ValueError when the file matches none of its tensors (another model's weights: the model was wholly
    random and its rows said "pretrained weights")."""
    tensors = set(model.state_dict())
    unloaded = (set(info.get("missing_keys") or ()) | {key[0] if isinstance(key, tuple) else key
                                                      for key in info.get("mismatched_keys") or ()}) & tensors
    if tensors and unloaded == tensors:
        raise ValueError(f"the weights file of {name} matches none of the model's {len(tensors)} tensors (its "
                         "parameter names or shapes are another model's); allowed: the weights saved with this "
                         "config.json, or weights: random to time the architecture alone")
    return f" ({len(unloaded)} of its {len(tensors)} tensors not in its weights file: random)" if unloaded else ""


def declared_params(model_class, config) -> int | None:
    """The parameters `model_class(config)` would have, counted on the meta device: nothing allocated,
    however large the config says the model is. None when the class cannot be built there (its
    __init__ reads a tensor's value, e.g. ConvNeXt's drop-path rates)."""
    skipped = _skipped_init()
    try:
        with torch.device("meta"), (skipped() if skipped is not None else contextlib.nullcontext()):
            return count_params(model_class(config))
    except (RuntimeError, NotImplementedError, TypeError, ValueError):
        return None


# Layers a config may declare: the registry's deepest vision model has a few dozen. Counting parameters
# on the meta device still builds every module object (~70 KB a small layer: 10,000 layers took 26 s and
# 700 MB), so a config declaring 100,000 was killed at a 4 GB cap before the size check ran.
MAX_LAYERS = 1_000
LAYER_KEYS = ("num_hidden_layers", "num_layers", "encoder_layers", "decoder_layers", "num_encoder_layers",
              "num_decoder_layers", "depths")


def declared_layers(values: dict, depth: int = 0) -> tuple[int, str]:
    """(layers, the key that declares them): the largest of a config's layer counts (a list such as Swin's
    `depths` summed), its sub-configs' (vision_config, backbone_config, ...) included."""
    found = (0, "")
    for key, value in values.items():
        if key in LAYER_KEYS and isinstance(value, int) and not isinstance(value, bool):
            found = max(found, (value, key))
        elif key in LAYER_KEYS and isinstance(value, list) and all(isinstance(v, int) for v in value):
            found = max(found, (sum(value), key))
        elif isinstance(value, dict) and depth < 4:
            found = max(found, declared_layers(value, depth + 1))
    return found


def check_room(model_class, config, dtype: str, device: str) -> None:
    """MemoryError (the row's status: oom) when the weights `config` declares cannot fit in the memory
    this machine has available (memory_room on a CPU, the GPU's free memory on CUDA), or when it
    declares more layers than MAX_LAYERS (counting them would cost the memory it guards): refused before
    a byte is allocated, instead of a process the kernel kills halfway through building it."""
    from .memory_room import available_bytes

    layers, key = declared_layers(config.to_dict())
    if layers > MAX_LAYERS:
        raise MemoryError(f"out of memory: the checkpoint declares {layers:,} layers ({key}), more than the "
                          f"{MAX_LAYERS:,} any vision model here has; refused before building any")
    params = declared_params(model_class, config)
    if params is None:
        return
    needed = params * torch.empty((), dtype=TORCH_DTYPES[dtype]).element_size()
    room = torch.cuda.mem_get_info()[0] if device == "cuda" else available_bytes()
    if room is not None and needed > room:
        raise MemoryError(f"out of memory: the checkpoint declares {params / 1e9:.3g} B parameters, "
                          f"{needed / 2**30:.3g} GiB of weights in {dtype}, more than the {room / 2**30:.3g} GiB of "
                          f"{'GPU memory' if device == 'cuda' else 'memory'} available")


def load_model(spec: ModelSpec, size: str, weights: str, device: str, dtype: str) -> LoadedModel:
    """Build `spec` in eval mode on `device` in `dtype`; `weights` is pretrained, random or auto."""
    if weights not in ("auto", "pretrained", "random"):
        raise ValueError(f"weights: {weights!r} is not allowed; allowed: auto, pretrained, random")
    if size == "tiny" and weights == "pretrained" and not spec.own:
        raise ValueError("weights: 'pretrained' is not allowed with size 'tiny' (no tiny checkpoints)")
    if spec.pickled:  # a notebook's object (measure/objects.py): its own weights, whatever `weights` says
        model = objects.load(spec.checkpoint, device, TORCH_DTYPES[dtype])
        return LoadedModel(model, OWN_WEIGHTS, OBJECT_NOTE, count_params(model))
    model, used, note = _build_own(spec, weights, device, dtype) if spec.own else _choose_and_build(spec, size, weights)
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
