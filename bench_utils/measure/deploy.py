"""Forms compiled ahead of time (config/modes.py, `form`): build the file once, load it in a serving
process. Both take the model's keyword inputs and give its output structure (a ModelOutput), so
accuracy is checked as for a compiled model.

- aot-inductor: torch.export of the model with the cell's inputs, then AOTInductor's package
  (torch._inductor.aoti_compile_and_package, with the configuration's Inductor options, e.g. freezing
  on a CPU), loaded with aoti_load_package.
- onnxruntime: torch.onnx.export (the dynamo exporter) to one .onnx file, run by an ONNX Runtime
  InferenceSession on the CPU execution provider, graph optimizations at their default level; its
  outputs, the model's output leaves in order, are put back into the eager output's structure.

An export that fails raises the exporter's own error: the row says it (measure/cell.py).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

FILE_NAMES = {"aot-inductor": "model.pt2", "onnxruntime": "model.onnx"}
DEPLOY_EXTRA = "pip install -e '.[deploy]'"  # the optional dependencies of the onnxruntime form


def missing(form: str) -> str:
    """Why `form` cannot run in this environment ("" when it can): a package it needs is not installed."""
    if form == "onnxruntime":
        absent = [name for name in ("onnx", "onnxscript", "onnxruntime") if importlib.util.find_spec(name) is None]
        if absent:
            return f"{', '.join(absent)} not installed: {DEPLOY_EXTRA}"
    return ""


def build(form: str, model: torch.nn.Module, inputs: dict, inductor_configs: dict, folder: str | Path) -> str:
    """Export `model` called with `inputs` (keywords) and build `form`'s file in `folder`; its path."""
    path = Path(folder) / FILE_NAMES[form]
    if form == "aot-inductor":
        exported = torch.export.export(model, args=(), kwargs=inputs)
        return str(torch._inductor.aoti_compile_and_package(exported, package_path=str(path),
                                                            inductor_configs=inductor_configs))
    with torch.inference_mode(False), torch.no_grad():  # the exporter traces outside inference mode
        torch.onnx.export(model, (), str(path), kwargs=inputs, dynamo=True, external_data=False)
    return str(path)


def load(form: str, path: str, structure):
    """The file at `path` loaded in this process: a callable taking the model's keyword inputs and
    giving an output shaped like `structure` (the eager output)."""
    if form == "aot-inductor":
        return torch._inductor.aoti_load_package(path)
    import onnxruntime

    # a session per process: its thread pool does not survive a fork (a forked round's calls ran 1.5x
    # slower on the parent's session than on one of its own: ResNet-50, 37.8 against 19.4 ms), so a
    # process forked from this one opens its own on its first call, in its warm-up
    sessions: dict[int, onnxruntime.InferenceSession] = {}

    def session() -> onnxruntime.InferenceSession:
        if os.getpid() not in sessions:
            sessions.clear()
            sessions[os.getpid()] = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        return sessions[os.getpid()]

    names = [node.name for node in session().get_inputs()]
    _, spec = tree_flatten(structure)

    def call(**inputs):
        outputs = [torch.from_numpy(array) for array in session().run(None, {n: inputs[n].numpy() for n in names})]
        return tree_unflatten(outputs, spec) if spec.num_leaves == len(outputs) else outputs

    return call
