"""An object folder (config/objects.py, measure/objects.py): a notebook's model and example inputs
written once and loaded by a measuring process as a registry model would be built; its settings
fingerprint is the object's, not its folder's."""

import shutil
import subprocess
import sys
import types

import pytest
import torch

from bench_utils.config.bench_config import BenchConfig
from bench_utils.config.objects import MANIFEST, read_manifest
from bench_utils.config.registry import own_spec
from bench_utils.measure import accuracy, objects
from bench_utils.measure.inputs import build_inputs
from bench_utils.measure.models import OBJECT_NOTE, load_model


def notebook_class():
    """A module class as a notebook defines it: in __main__, which no other process can import."""

    def forward(self, x, scale=1.0, *, bias=None):
        out = self.linear(x) * scale
        return out if bias is None else out + bias

    def init(self):
        torch.nn.Module.__init__(self)
        self.linear = torch.nn.Linear(4, 3)

    return types.new_class("NotebookNet", (torch.nn.Module,), exec_body=lambda ns: ns.update(
        __init__=init, forward=forward, __module__="__main__"))


def write_object(folder, model, example_inputs, task=""):
    objects.write(folder, objects.pickled(model), example_inputs, task, type(model).__qualname__,
                  objects.digest(model, example_inputs))
    return folder


@pytest.mark.parametrize("example", ["tensor", "positional", "keywords"])
def test_the_loaded_object_answers_as_the_notebook_called_it(tmp_path, example):
    torch.manual_seed(0)
    model = notebook_class()()
    x, bias = torch.randn(2, 4), torch.randn(3)
    example_inputs = {"tensor": x, "positional": (x, 2.0), "keywords": {"x": x, "bias": bias}}[example]
    expected = {"tensor": model(x), "positional": model(x, 2.0), "keywords": model(x=x, bias=bias)}[example]
    folder = write_object(tmp_path / "net", model, example_inputs)
    loaded = objects.load(folder, "cpu", torch.float32)
    tensors = objects.inputs(folder, 2, "cpu", torch.float32)
    assert sorted(tensors) == {"tensor": ["input_0"], "positional": ["input_0"], "keywords": ["bias", "x"]}[example]
    assert torch.equal(loaded(**tensors), expected.detach())
    assert not loaded.training and read_manifest(folder)["call"] == example


def test_a_class_defined_in_a_notebook_loads_in_a_process_that_never_saw_it(tmp_path):
    model = notebook_class()()
    folder = write_object(tmp_path / "net", model, torch.ones(1, 4))
    code = ("import torch; from bench_utils.measure import objects; "
            f"m = objects.load({str(folder)!r}, 'cpu', torch.float32); "
            f"print(m(**objects.inputs({str(folder)!r}, 1, 'cpu', torch.float32)).sum().item())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout) == pytest.approx(float(model(torch.ones(1, 4)).sum().detach()), rel=1e-6)


def test_an_object_folder_is_a_model_source_beside_the_registry_and_checkpoints(tmp_path):
    model = notebook_class()()
    folder = write_object(tmp_path / "net", model, torch.ones(5, 4))
    spec = own_spec("net", str(folder))
    assert spec.pickled and spec.own and spec.task == "" and spec.published == "net"
    loaded = load_model(spec, "full", "auto", "cpu", "float32")
    assert (loaded.weights, loaded.note, loaded.num_params) == ("own", OBJECT_NOTE, 15)
    assert build_inputs(spec, "full", 5, "cpu", torch.float32)["input_0"].shape == (5, 4)
    with pytest.raises(ValueError, match=r"^batch_size: 2 is not allowed for net; allowed: 5, its example inputs"):
        build_inputs(spec, "full", 2, "cpu", torch.float32)


def test_the_fingerprint_is_the_objects_not_its_folders(tmp_path):
    model = notebook_class()()
    folder = write_object(tmp_path / "a" / "net", model, torch.ones(1, 4))
    copy = tmp_path / "b" / "net"
    shutil.copytree(folder, copy)

    def cfg(path):
        return BenchConfig(models=("net",), checkpoints=(("net", str(path), ""),), configurations=("eager",))

    assert cfg(folder).settings_fingerprint() == cfg(copy).settings_fingerprint()
    with torch.no_grad():
        model.linear.bias.add_(1.0)  # other weights: another object
    write_object(copy, model, torch.ones(1, 4))
    assert cfg(folder).settings_fingerprint() != cfg(copy).settings_fingerprint()


def test_a_damaged_manifest_is_one_line(tmp_path):
    folder = write_object(tmp_path / "net", notebook_class()(), torch.ones(1, 4))
    (folder / MANIFEST).write_text('{"format": 1, "call": "tensor"}')
    with pytest.raises(ValueError, match=r"^checkpoint: .*object.json names no call \(tensor, positional, keywords\)"):
        own_spec("net", str(folder))


def test_an_object_without_a_known_task_is_judged_by_its_outputs_cosine():
    reference = {"out": torch.tensor([[1.0, 2.0, 3.0]]), "ids": torch.tensor([1])}
    assert accuracy.task_agreement("", reference, {"out": torch.tensor([[1.0, 2.0, 3.01]]), "ids": torch.tensor([1])}
                                   ) == pytest.approx(1.0, abs=1e-4)
    assert accuracy.task_agreement("", reference, {"out": -reference["out"], "ids": torch.tensor([1])}) == 0.0
    assert accuracy.task_agreement("", torch.zeros(3), torch.zeros(3)) == 1.0
