"""A notebook's model and example inputs on their way to the measuring processes: written once, in the
user's kernel, into an object folder (config/objects.py: its files and manifest), and loaded by every
measuring process where a registry model is built (models.load_model, inputs.build_inputs).

On a CPU the measuring processes fork from a server that imported torch before the notebook defined
anything (sweep/workers.py), so the object travels as a file: torch.save with cloudpickle as its
pickler, which writes a class or function defined in the notebook (`__main__`) by value and an
importable one (a Hugging Face model's) by reference, the tensors as torch's own storages. The model
is written as it is (its device, dtype and training flag): nothing of the user's object changes.
What it costs and where it cannot work: docs/explore.md.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import torch

from ..config.objects import DATA, INPUTS, MANIFEST, manifest_text, read_manifest
from ..files import write_file


class ObjectCall(torch.nn.Module):
    """The model called as the notebook calls it, from keyword tensors: the measuring process calls every
    model as model(**inputs) (measure/cell.py), so a model called with a tensor or positional arguments
    gets them back in their places; values that are not tensors are passed as given. One Python frame
    more per eager call; torch.compile traces through it into the model."""

    def __init__(self, model: torch.nn.Module, args: list, kwargs: dict):
        super().__init__()
        self.model = model
        self.args, self.kwargs = args, kwargs  # a tensor's place holds its name in the inputs: ("input", name)

    def forward(self, **tensors):
        args = [tensors[item[1]] if _is_slot(item) else item for item in self.args]
        kwargs = {key: tensors[value[1]] if _is_slot(value) else value for key, value in self.kwargs.items()}
        return self.model(*args, **kwargs)


def _is_slot(value) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and value[0] == "input"


def call_of(example_inputs) -> str:
    """How a model is called with `example_inputs` (config/objects.CALLS); ValueError naming the argument."""
    if isinstance(example_inputs, torch.Tensor):
        return "tensor"
    if isinstance(example_inputs, (tuple, list)):
        return "positional"
    if isinstance(example_inputs, dict) and all(isinstance(key, str) for key in example_inputs):
        return "keywords"
    raise ValueError(f"example_inputs: a {type(example_inputs).__name__} is not allowed; allowed: a tensor, a tuple "
                     "of positional arguments, or a dict of keyword arguments, as the model is called")


def split(example_inputs) -> tuple[list, dict, dict]:
    """(args, kwargs, tensors): the call with each top-level tensor replaced by its slot, and the
    tensors by name (input_0, ... for positional ones, the keyword for keyword ones)."""
    call = call_of(example_inputs)
    positional = [example_inputs] if call == "tensor" else list(example_inputs) if call == "positional" else []
    keywords = example_inputs if call == "keywords" else {}
    tensors: dict = {}
    args = []
    for index, value in enumerate(positional):
        if isinstance(value, torch.Tensor):
            tensors[f"input_{index}"] = value
            value = ("input", f"input_{index}")
        args.append(value)
    kwargs = {}
    for key, value in keywords.items():
        if isinstance(value, torch.Tensor):
            tensors[key] = value
            value = ("input", key)
        kwargs[key] = value
    return args, kwargs, tensors


def batch_size(example_inputs) -> int:
    """The batch: the first dimension of the first tensor input (1 for a 0-d tensor)."""
    first = next(iter(split(example_inputs)[2].values()), None)
    return int(first.shape[0]) if first is not None and first.dim() and first.shape[0] else 1


def digest(model: torch.nn.Module, example_inputs) -> str:
    """What is measured, as a hash: the model's class, its parameters and buffers and the inputs (names,
    dtypes, shapes, values); the code is left out (a notebook's class is written anew in every
    session). A race folder refuses another object under the same name (explore/race.py)."""
    hashed = hashlib.sha256(f"{type(model).__module__}.{type(model).__qualname__}".encode())
    tensors = list(model.state_dict().items()) + list(split(example_inputs)[2].items())
    for name, tensor in tensors:
        hashed.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}".encode())
        hashed.update(_tensor_bytes(tensor))
    return hashed.hexdigest()[:16]


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    try:
        return tensor.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    except (RuntimeError, TypeError):  # a layout without plain bytes (sparse, quantized): as torch prints it
        return repr(tensor).encode()


def pickled(value) -> bytes:
    """`value` as torch.save writes it with cloudpickle: what an object folder's files hold. An object
    cloudpickle cannot write raises its own error (explore/arguments.py says it in one line)."""
    import io

    import cloudpickle

    buffer = io.BytesIO()
    torch.save(value, buffer, pickle_module=cloudpickle)
    return buffer.getvalue()


def write(folder: Path, model_bytes: bytes, example_inputs, task: str, class_name: str, object_digest: str) -> None:
    """The object folder: the model (`model_bytes`, pickled), its inputs, then the manifest, each file
    written whole (files.write_file)."""
    folder = Path(folder)
    write_file(folder / DATA, model_bytes, folder)
    write_file(folder / INPUTS, pickled(example_inputs), folder)
    write_file(folder / MANIFEST, manifest_text(class_name, call_of(example_inputs), batch_size(example_inputs), task,
                                                object_digest), folder)


def load(folder: str | Path, device: str, dtype: torch.dtype) -> torch.nn.Module:
    """The model as a measuring process uses it: on `device`, in eval mode, its floating weights in
    `dtype` (eager is the float32 baseline), wrapped in ObjectCall (called with `inputs`)."""
    read_manifest(folder)
    model = torch.load(Path(folder) / DATA, map_location=device, weights_only=False)
    model = model.to(device=device, dtype=dtype).eval()
    args, kwargs, _ = split(_example(folder, device))
    return ObjectCall(model, args, kwargs).eval()


def _example(folder: str | Path, device: str):
    return torch.load(Path(folder) / INPUTS, map_location=device, weights_only=False)


def inputs(folder: str | Path, batch: int, device: str, dtype: torch.dtype) -> dict:
    """The keyword tensors of an object folder for a batch of `batch`: its example inputs' own batch only."""
    manifest = read_manifest(folder)
    if batch != manifest["batch_size"]:
        raise ValueError(f"batch_size: {batch} is not allowed for {Path(folder).name}; allowed: "
                         f"{manifest['batch_size']}, its example inputs' batch")
    tensors = split(_example(folder, device))[2]
    return {name: tensor.to(device=device, dtype=dtype if tensor.is_floating_point() else None).contiguous()
            for name, tensor in tensors.items()}
