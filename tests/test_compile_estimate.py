"""plan's GPU compile times (sweep/compile_estimate.py): the mode table's constants, taken as
ResNet-50's, scaled per model by what a CPU compile counted, as a range; and a CPU's, scaled the same way."""

import pytest

from bench_utils.config.modes import MODE_BY_NAME
from bench_utils.config.registry import MODEL_NAMES
from bench_utils.sweep.compile_estimate import GRAPH_S, NODE_SHARE, SPREAD, compile_counts, gpu_compile_s


def size(model: str) -> float:
    """A model's compile against ResNet-50's: half by the operators lowered, half by the kernels."""
    counts, resnet = compile_counts()[model], compile_counts()["resnet"]
    return NODE_SHARE * counts["nodes"] / resnet["nodes"] + (1 - NODE_SHARE) * counts["kernels"] / resnet["kernels"]


def test_every_registry_model_has_its_counts():
    counts = compile_counts()
    assert set(MODEL_NAMES) <= set(counts)
    assert all(c["nodes"] > 0 and c["graphs"] >= 1 and c["gemm_conv_shapes"] > 0 for c in counts.values())


DEFAULT_COLD_S = MODE_BY_NAME["default"].cold_compile_s  # ResNet-50's (config/modes.py)
DEFAULT_WARM_S = MODE_BY_NAME["default"].warm_compile_s


def test_resnet_50_gets_the_mode_tables_constants_as_the_middle_of_its_range():
    default = gpu_compile_s("resnet", "default", cold=True)
    assert (default.low, default.point, default.high) == (DEFAULT_COLD_S / SPREAD, DEFAULT_COLD_S, DEFAULT_COLD_S * SPREAD)
    assert gpu_compile_s("resnet", "reduce-overhead", cold=True) == default  # the same graphs compile
    assert gpu_compile_s("resnet", "max-autotune", cold=True).point == MODE_BY_NAME["max-autotune"].cold_compile_s
    assert gpu_compile_s("resnet", "default", cold=False).point == MODE_BY_NAME["default"].warm_compile_s
    assert gpu_compile_s("resnet", "eager", cold=True).high == 0.0


def test_a_bigger_graph_a_broken_graph_and_more_gemm_shapes_cost_more():
    counts = compile_counts()
    assert size("mask2former") > 3 and size("vit") < 1  # 6448 operators and 70 kernels; 726 and 8
    assert gpu_compile_s("mask2former", "default", cold=True).point == pytest.approx(DEFAULT_COLD_S * size("mask2former"))
    segformer = counts["segformer"]
    assert segformer["graphs"] >= 2  # it breaks its graph: each graph beyond the first adds GRAPH_S
    assert gpu_compile_s("segformer", "default", cold=True).point == pytest.approx(
        DEFAULT_COLD_S * size("segformer") + GRAPH_S * (segformer["graphs"] - 1))
    autotune = MODE_BY_NAME["max-autotune"].cold_compile_s - DEFAULT_COLD_S  # beyond default's: per GEMM/conv shape
    vit = counts["vit"]
    assert gpu_compile_s("vit", "max-autotune", cold=True).point == pytest.approx(
        DEFAULT_COLD_S * size("vit") + autotune * vit["gemm_conv_shapes"] / counts["resnet"]["gemm_conv_shapes"])
    assert gpu_compile_s("vit", "default", cold=False).point == pytest.approx(DEFAULT_WARM_S * size("vit"))  # warm: scaled too


def test_a_model_the_counts_lack_gets_the_constants():
    assert gpu_compile_s("my-own-vit", "default", cold=True).point == DEFAULT_COLD_S
    assert gpu_compile_s("my-own-vit", "max-autotune", cold=False).point == MODE_BY_NAME["max-autotune"].warm_compile_s


def test_a_cpu_compile_grows_with_the_model_around_the_default_reports_mean():
    from bench_utils.sweep.compile_estimate import CPU_CONSTANT_MODELS, cpu_compile_scale, size_factor

    # the CPU constants are the default report's four models' compiles: on average they keep them
    assert sum(cpu_compile_scale(m) for m in CPU_CONSTANT_MODELS) / len(CPU_CONSTANT_MODELS) == pytest.approx(1.0)
    assert size_factor("resnet") == 1.0 and cpu_compile_scale("own/checkpoint") == 1.0
    # what the Zen 4 measured cold (2026-12-03): ConvNeXt-L about ResNet-50's, DETR twice, Mask2Former 8x
    # (25, 29, 54, 195 s): the order holds and Mask2Former is the largest by far
    scales = {m: cpu_compile_scale(m) for m in ("resnet", "convnext", "detr", "mask2former")}
    assert scales["resnet"] <= scales["convnext"] * 1.05 < scales["detr"] < scales["mask2former"]
    assert scales["mask2former"] > 4 * scales["resnet"]
