"""Reading back that a configuration's settings took effect (measure/evidence.py)."""

from dataclasses import dataclass

import pytest

from bench_utils.config.configurations import configuration
from bench_utils.measure import evidence
from bench_utils.measure.settings import Unsupported


@dataclass
class Event:  # the FunctionEvent fields kernel_counts reads
    name: str
    input_dtypes: list
    input_shapes: list
    structured_input_strides: list
    cpu_parent: "Event | None" = None


def test_each_matmul_and_convolution_counts_once_with_its_dtype_and_layout():
    conv = Event("aten::conv2d", ["c10::BFloat16"], [[1, 8, 4, 4]], [[128, 1, 32, 8]])  # channels_last
    inner = Event("aten::convolution", ["c10::BFloat16"], [[1, 8, 4, 4]], [[128, 1, 32, 8]], cpu_parent=conv)
    plain = Event("mkldnn::_convolution_pointwise", ["float"], [[1, 8, 4, 4]], [[128, 16, 4, 1]])  # contiguous
    linear = Event("aten::linear", ["c10::BFloat16"], [[1, 16]], [[16, 1]])
    addmm = Event("aten::addmm", ["c10::BFloat16"], [[10]], [[1]], cpu_parent=linear)
    other = Event("aten::relu", ["float"], [[1, 8]], [[8, 1]])
    counts = evidence.kernel_counts([conv, inner, plain, linear, addmm, other])
    assert counts == {"matmuls": 3, "by_dtype": {"bfloat16": 2, "float32": 1}, "convs": 2, "convs_channels_last": 1}


def test_channels_last_strides():
    assert evidence.is_channels_last([2, 3, 4, 5], [60, 1, 15, 3])
    assert not evidence.is_channels_last([2, 3, 4, 5], [60, 20, 5, 1])
    assert evidence.is_channels_last([1, 3, 4, 5], [7, 1, 15, 3])  # a batch of one: its stride says nothing
    assert not evidence.is_channels_last([1, 3], [3, 1])


def test_freezing_that_left_parameters_as_inputs_fails_and_autotuning_with_nothing_to_tune_is_unsupported():
    frozen = configuration("default+freezing")
    evidence.check_compile(frozen, evidence.CompileCounts(1, 10, 0, 0), lowered=True, device="cpu")  # took effect
    with pytest.raises(evidence.SettingNotInEffect, match="^freezing did not take effect: 10 of 10 parameters stayed"):
        evidence.check_compile(frozen, evidence.CompileCounts(1, 0, 10, 0), lowered=True, device="cpu")
    with pytest.raises(evidence.SettingNotInEffect, match="Inductor froze no graph"):
        evidence.check_compile(frozen, evidence.CompileCounts(), lowered=True, device="cpu")
    tuned = configuration("max-autotune-no-cudagraphs")
    with pytest.raises(Unsupported, match=r"had no kernel to choose between for this model \(Inductor's CPU GEMM"):
        evidence.check_compile(tuned, evidence.CompileCounts(), lowered=True, device="cpu")
    evidence.check_compile(tuned, evidence.CompileCounts(), lowered=False, device="cpu")  # from the FX cache: its key
    evidence.check_compile(tuned, evidence.CompileCounts(kernel_choices=2), lowered=True, device="cpu")
    assert evidence.CompileCounts(1, 5, 0, 3).fields(configuration("max-autotune-no-cudagraphs+freezing")) == {
        "params_folded": 5, "params_unfolded": 0, "autotune_choices": 3}
    assert evidence.CompileCounts(1, 5, 0, 3).fields(configuration("default")) == {
        "params_folded": None, "params_unfolded": None, "autotune_choices": None}


def test_autocast_or_layout_that_did_not_reach_the_kernels_fails():
    bf16 = configuration("default+bf16-autocast")
    fields = evidence.kernel_fields(bf16, {"matmuls": 4, "by_dtype": {"float32": 4}, "convs": 2, "convs_channels_last": 0})
    assert fields == {"matmuls_seen": 4, "matmuls_in_autocast_dtype": 0, "convs_seen": None, "convs_channels_last": None}
    with pytest.raises(evidence.SettingNotInEffect, match="^bfloat16 autocast did not take effect: none of the 4"):
        evidence.check_kernels(bf16, fields)
    evidence.check_kernels(bf16, {"matmuls_seen": 0})  # nothing seen outside generated code: nothing to tell
    layout = configuration("default+channels-last")
    with pytest.raises(evidence.SettingNotInEffect, match="channels_last did not take effect: none of the 2 conv"):
        evidence.check_kernels(layout, {"matmuls_seen": 2, "convs_seen": 2, "convs_channels_last": 0})
