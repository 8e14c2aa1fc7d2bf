"""What bench_utils.race is given, checked in the user's kernel before any measuring process starts:
the model is a module that answers the example inputs (one eager call) and can be written for the
measuring processes (cloudpickle); each wrong argument is one line (ConfigError) naming it and what
is allowed. The user's model is left as it was (its training flags restored after the call).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..config.registry import TASKS, task_of
from ..config.validation import ConfigError

NAME_TEXT = re.compile(r"[^A-Za-z0-9._-]+")  # what a race's name may not hold (it names files: registry.FILE_NAME)


@dataclass(frozen=True)
class Example:
    """The checked model and inputs, as the object folder needs them (measure/objects.write)."""

    class_name: str  # module.qualname of the model's class
    task: str  # a Hugging Face class's task (registry.TASKS), "" for none known
    batch_size: int  # the inputs' first dimension
    model_bytes: bytes  # the model as written (measure/objects.pickled)
    digest: str  # measure/objects.digest


def checked(model, example_inputs) -> Example:
    """The example `model` and `example_inputs` make, after every check; ConfigError in one line."""
    import torch

    from ..measure import objects

    if not isinstance(model, torch.nn.Module):
        raise ConfigError(f"model: a {type(model).__name__} is not a torch.nn.Module; allowed: a module (a Hugging "
                          "Face model, or a class of your own), called as model(example_inputs)")
    if hasattr(model, "_orig_mod") and type(model).__name__ == "OptimizedModule":
        raise ConfigError("model: already compiled by torch.compile; allowed: the module itself (model._orig_mod): "
                          "the race compiles it each way")
    try:
        args, kwargs, tensors = objects.split(example_inputs)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    if not tensors:
        raise ConfigError("example_inputs: no tensor among them; allowed: a tensor, or a tuple or dict holding the "
                          "model's input tensors")
    _answers(model, args, kwargs, tensors)
    return Example(f"{type(model).__module__}.{type(model).__qualname__}", model_task(model),
                   objects.batch_size(example_inputs), _written(model, example_inputs),
                   objects.digest(model, example_inputs))


def _answers(model, args: list, kwargs: dict, tensors: dict) -> None:
    """One eager call, in eval mode and inference mode, as a measuring process calls it; ConfigError in one
    line when it fails or returns no floating-point tensor (nothing to compare a compiled answer with)."""
    import torch

    from ..measure import accuracy, objects

    call = objects.ObjectCall(model, args, kwargs)
    training = {module: module.training for module in model.modules()}
    try:
        model.eval()
        with torch.inference_mode():
            output = call(**tensors)
    except Exception as err:  # noqa: BLE001 - whatever the user's model raises, said in one line
        raise ConfigError(f"model: cannot be called with example_inputs as given: {one_line(err)}") from None
    finally:
        for module, flag in training.items():
            module.training = flag
    if not accuracy.floating_tensors(output):
        raise ConfigError(f"model: returned a {type(output).__name__} holding no floating-point tensor; allowed: a "
                          "model whose output holds one (each configuration's answer is compared with eager's)")


def _written(model, example_inputs) -> bytes:
    """The model pickled for the measuring processes; ConfigError naming what cloudpickle could not write."""
    from ..measure import objects

    for value, what in ((example_inputs, "example_inputs"), (model, "model")):
        try:
            data = objects.pickled(value)
        except Exception as err:  # noqa: BLE001 - pickle raises TypeError, PicklingError, AttributeError, ...
            raise ConfigError(f"{what}: cannot be written for the measuring processes (cloudpickle): "
                              f"{one_line(err)}") from None
    return data


def model_task(model) -> str:
    """The task a Hugging Face model's class implies (its task-level agreement then applies), else ""."""
    config = getattr(model, "config", None)
    model_type = getattr(config, "model_type", None)
    task = task_of({"architectures": [type(model).__name__], "model_type": model_type})
    return task if task in TASKS else ""


def race_name(model, name: str | None) -> str:
    """The race's name (its rows' model, its folder): `name`, else the model's class name, made fit to name
    files; ConfigError when a given name is not."""
    if name is None:
        return NAME_TEXT.sub("-", type(model).__name__).strip("-.")[:100] or "model"
    if not isinstance(name, str) or not name or NAME_TEXT.search(name) or not name[0].isalnum() or len(name) > 100:
        raise ConfigError(f"name: {name!r} is not allowed; allowed: up to 100 letters, digits, '.', '_' or '-', "
                          "starting with a letter or digit")
    return name


def one_line(err: BaseException) -> str:
    """"TypeError: its message's first line", at most 300 characters."""
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".rstrip(": ")[:300]
