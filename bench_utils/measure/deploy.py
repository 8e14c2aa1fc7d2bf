"""Forms compiled ahead of time (config/modes.py, `form`): build the file once, load it in a serving
process. Both take the model's keyword inputs and give its output structure (a ModelOutput), so
accuracy is checked as for a compiled model.

- aot-inductor: torch.export of the model with the cell's inputs, then AOTInductor's package
  (torch._inductor.aoti_compile_and_package, with the configuration's Inductor options, e.g. freezing
  on a CPU), loaded with aoti_load_package.
- onnxruntime: torch.onnx.export (the dynamo exporter) to one .onnx file, run by an ONNX Runtime
  InferenceSession on the CPU execution provider, graph optimizations at their default level; its
  outputs, the model's output leaves in order, are put back into the eager output's structure.
- precompile: torch.compiler.precompile of the model's call (a non-strict trace lowered by Inductor)
  with the cell's inputs, its Python source and kernel cache saved in one file; a serving process
  builds the model (the artifact holds no weights) and calls the loaded function with it.

An export that fails raises the exporter's own error: the row says it (measure/cell.py).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

FILE_NAMES = {"aot-inductor": "model.pt2", "onnxruntime": "model.onnx", "precompile": "model.precompiled"}
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
    if form == "precompile":
        return _precompile(model, inputs, path)
    with torch.inference_mode(False), torch.no_grad():  # the exporter traces outside inference mode
        torch.onnx.export(model, (), str(path), kwargs=inputs, dynamo=True, external_data=False)
    return str(path)


def _precompile(model: torch.nn.Module, inputs: dict, path: Path) -> str:
    """torch.compiler.precompile of `model` called with `inputs` (positionally: its convention), its source
    and cache in one file (torch.save of text and bytes: loaded with weights_only)."""
    names = list(inputs)

    def call(module, *values):
        return module(**dict(zip(names, values)))

    with torch.inference_mode(False), torch.no_grad():  # it traces outside inference mode, as export does
        python_code, cache = torch.compiler.precompile(call, model, *inputs.values())
    torch.save({"names": names, "python_code": python_code, "cache": cache}, path)
    return str(path)


def load(form: str, path: str, structure, model: torch.nn.Module | None = None):
    """The file at `path` loaded in this process: a callable taking the model's keyword inputs and
    giving an output shaped like `structure` (the eager output); precompile's runs `model` (built in
    this process: its artifact holds no weights)."""
    if form == "aot-inductor":
        return torch._inductor.aoti_load_package(path)
    if form == "precompile":
        return Precompiled(path, model)
    return OnnxSession(path, structure)


def file_bytes(path: str) -> int:
    """The size of what a serving process loads: the file, or every file under a folder."""
    found = Path(path)
    return found.stat().st_size if found.is_file() else sum(f.stat().st_size for f in found.rglob("*") if f.is_file())


class Precompiled:
    """torch.compiler.precompile's function loaded in this process (its cache primes Inductor's, then its
    source runs), called with the model built here and the inputs in the order they were traced with."""

    def __init__(self, path: str, model: torch.nn.Module):
        saved = torch.load(path, weights_only=True)
        self.names, self.model = saved["names"], model
        self.function = torch.compiler.precompile.load(saved["python_code"], saved["cache"])

    def __call__(self, **inputs):
        return self.function(self.model, *(inputs[name] for name in self.names))


class OnnxSession:
    """An ONNX Runtime session per process. Its thread pool does not survive a fork: on the parent's
    session a forked round ran 1.5x slower than on one of its own (ResNet-50, 37.8 against 19.4 ms), and
    a fork while its threads live copies their locks into the child, which then hangs opening its own.
    So a process forked from this one opens its own session on its first call (in its warm-up), and the
    process that forks (a CPU template) closes its own just before each fork (`release`, from
    CellProcess.before_fork: its threads end)."""

    def __init__(self, path: str, structure):
        self.path, self.sessions = path, {}
        self.names = [node.name for node in self._session().get_inputs()]
        _, self.spec = tree_flatten(structure)

    def _session(self):
        import onnxruntime

        if os.getpid() not in self.sessions:
            self.sessions.clear()
            options = onnxruntime.SessionOptions()
            # its threads stop spinning when a call returns (they spin between the operators of a call,
            # as by default): between this worker's blocks another worker times its own on the same
            # cores, and an idle session's spinning threads slowed eager 1.9x in one process (probe)
            options.add_session_config_entry("session.force_spinning_stop", "1")
            self.sessions[os.getpid()] = onnxruntime.InferenceSession(self.path, options,
                                                                      providers=["CPUExecutionProvider"])
        return self.sessions[os.getpid()]

    def __call__(self, **inputs):
        feeds = {name: inputs[name].numpy() for name in self.names}
        outputs = [torch.from_numpy(array) for array in self._session().run(None, feeds)]
        return tree_unflatten(outputs, self.spec) if self.spec.num_leaves == len(outputs) else outputs

    def release(self) -> None:
        """Close this process's session (its threads end); the next call opens one again."""
        self.sessions.clear()
