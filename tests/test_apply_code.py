"""The code a page shows for each configuration (report/apply_code.py) runs on a tiny model and applies
what the measuring process applies: the same torch.compile mode, Inductor settings in effect while it
traces (read back as the measuring process reads them: measure/evidence.py), autocast and layout."""

import pytest
import torch

from bench_utils.config.configurations import configuration
from bench_utils.measure import evidence
from bench_utils.report.apply_code import code_lines, code_text


class TinyConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, pixel_values):
        return self.head(self.conv(pixel_values).relu().mean((2, 3)))


class TinyStack(torch.nn.Module):
    """A stack of identical blocks, as regional compilation wants (measure/regions.py)."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3)
        self.blocks = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU()) for _ in range(3))
        self.head = torch.nn.Linear(8, 4)

    def forward(self, pixel_values):
        hidden = self.stem(pixel_values).relu().mean((2, 3))
        for block in self.blocks:
            hidden = block(hidden)
        return self.head(hidden)


def run_shown_code(name: str, monkeypatch, tmp_path, model=None, regions_at: str = "") -> dict:
    """Execute the code shown for `name` on a tiny model; what torch.compile was given, what the compile's
    probes and one call's kernels showed, and the outputs."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    monkeypatch.chdir(tmp_path)  # a package is written where the code says: here
    seen: dict = {}
    real_compile = torch.compile

    def recording_compile(model, **kwargs):
        seen["compile_kwargs"] = kwargs
        return real_compile(model, **kwargs)

    monkeypatch.setattr(torch, "compile", recording_compile)
    torch._dynamo.reset()
    namespace = {"model": model or TinyConvNet(), "inputs": {"pixel_values": torch.randn(2, 3, 16, 16)}}
    with torch._inductor.config.patch(freezing=False), evidence.compile_probe() as counts:  # restored after
        exec(compile(code_text(name, regions_at=regions_at), f"<code shown for {name}>", "exec"), namespace)
        seen["call"] = lambda: namespace["model"](**namespace["inputs"])
        with torch.inference_mode(), (torch.autocast("cpu", dtype=torch.bfloat16) if configuration(name).autocast
                                      else torch.inference_mode()):
            seen["kernels"] = evidence.kernels_seen(seen["call"], "cpu") if not configuration(name).packaged else {}
    seen["counts"], seen["outputs"], seen["namespace"] = counts, namespace.get("outputs"), namespace
    return seen


@pytest.mark.parametrize("name", ["default", "default+freezing", "max-autotune-no-cudagraphs+freezing",
                                  "default+channels-last", "eager+bf16-autocast", "default+bf16-autocast"])
def test_the_code_shown_compiles_with_the_settings_the_measuring_process_used(name, monkeypatch, tmp_path):
    config = configuration(name)
    seen = run_shown_code(name, monkeypatch, tmp_path)
    assert seen["outputs"] is not None and seen["outputs"].shape == (2, 4)
    if config.compiled:
        fullgraph_and_dynamic = {"fullgraph", "dynamic"}  # the sweep's own choices, not the configuration's
        assert {k: v for k, v in seen["compile_kwargs"].items() if k not in fullgraph_and_dynamic} == \
            config.compile_options()
    else:
        assert "compile_kwargs" not in seen
    if config.inductor_settings.get("freezing"):  # read back as a measuring process reads it
        assert seen["counts"].params_folded > 0 and seen["counts"].params_unfolded == 0
    else:
        assert seen["counts"].frozen_graphs == 0
    if config.mode.startswith("max-autotune"):
        assert seen["counts"].kernel_choices > 0
    kernels = seen["kernels"]
    if config.autocast:
        assert kernels["by_dtype"].get("bfloat16", 0) > 0
    if config.channels_last:
        assert kernels["convs"] > 0 and kernels["convs_channels_last"] == kernels["convs"]


@pytest.mark.slow
def test_the_package_code_shown_builds_a_frozen_package_and_answers(monkeypatch, tmp_path):
    seen = run_shown_code("aot-inductor+freezing", monkeypatch, tmp_path)
    assert seen["counts"].frozen_graphs >= 1 and seen["counts"].params_unfolded == 0
    assert (tmp_path / "model.pt2").is_file() and seen["outputs"].shape == (2, 4)


def test_the_regional_code_compiles_each_block_of_the_stack_its_row_names(monkeypatch, tmp_path):
    model = TinyStack()
    seen = run_shown_code("default+regional", monkeypatch, tmp_path, model, regions_at="3 x Sequential at blocks")
    assert seen["outputs"].shape == (2, 4) and seen["compile_kwargs"] == {"mode": "default"}  # the blocks'
    assert all(block._compiled_call_impl is not None for block in model.blocks)
    assert model.stem._compiled_call_impl is None and model.head._compiled_call_impl is None
    nested = code_text("default+regional", regions_at="16 x ResNetBottleNeckLayer at resnet.encoder.stages.*.layers")
    assert "for stage0 in model.resnet.encoder.stages:\n    for block in stage0.layers:" in nested


def test_the_cache_artifacts_code_saves_what_a_new_process_loads(monkeypatch, tmp_path):
    seen = run_shown_code("default+artifacts", monkeypatch, tmp_path)
    assert seen["outputs"].shape == (2, 4) and seen["compile_kwargs"] == {"mode": "default"}
    data, info = seen["namespace"]["data"], seen["namespace"]["info"]
    assert isinstance(data, bytes) and len(data) > 0 and info.inductor_artifacts  # Inductor's graphs in it


@pytest.mark.slow
def test_the_precompile_code_builds_and_answers_with_the_model(monkeypatch, tmp_path):
    seen = run_shown_code("precompile", monkeypatch, tmp_path)
    namespace = seen["namespace"]
    with torch.inference_mode():
        eager = namespace["model"](**namespace["inputs"])
    assert "compile_kwargs" not in seen and torch.allclose(seen["outputs"], eager, atol=1e-5)


def test_the_code_names_what_the_configuration_declares():
    assert code_lines("default+freezing")[:4] == [
        "import torch", "", "torch._inductor.config.freezing = True  # before compiling: dynamo reads it while "
        "tracing", "model = model.eval()"]
    assert 'model = torch.compile(model, mode="max-autotune-no-cudagraphs")' in code_lines(
        "max-autotune-no-cudagraphs+freezing")
    assert code_lines("eager")[-2:] == ["with torch.inference_mode():", "    outputs = model(**inputs)"]
    assert code_lines("reduce-overhead+fp16-autocast", "cuda")[-2] == (
        'with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):')
    onnx = code_text("onnxruntime")
    assert "torch.onnx.export(" in onnx and "InferenceSession(" in onnx and "torch.compile" not in onnx
    aoti = code_text("aot-inductor+freezing")
    assert "inductor_configs={'freezing': True}" in aoti and "torch._inductor.config.freezing" not in aoti
