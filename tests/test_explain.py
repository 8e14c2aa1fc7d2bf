"""The one-line explanation of a speedup and the top-operators chart, from hand-built rows."""

import math

import pandas as pd

from bench_utils.report import explain

CPU_ROW = {"label": "CPU", "model": "resnet", "batch_size": 1, "configuration": "default", "mode": "default",
           "speedup": 1.6, "profile_ops_per_call": 12.0, "profile_op_ms": 2.0, "profile_compiled_ms": 1.5,
           "profile_overhead_ms": 0.25, "profile_call_ms": 3.75, "profile_kernels_per_call": None,
           "profile_top_ops": [["compiled code (Inductor)", 1.5], ["mkldnn::_convolution_pointwise", 1.8]],
           "profile_trace": "resnet-bs1-default-r0.json",
           "eager_profile_ops_per_call": 150.0, "eager_profile_op_ms": 5.0, "eager_profile_overhead_ms": 1.0,
           "eager_profile_call_ms": 6.0, "eager_profile_kernels_per_call": None,
           "eager_profile_top_ops": [["aten::mkldnn_convolution", 3.0], ["aten::native_batch_norm", 1.0]]}


def test_cpu_explanation_names_ops_fused_code_and_overhead_rounded_as_the_page_rounds():
    assert explain.explanation(CPU_ROW) == (
        "eager 150 operators a call (5.00 ms in them); default 12 operators (2.00 ms) and 1.50 ms of fused code; "
        "outside operators 1.00 → 0.250 ms (−75%)")
    # three significant figures, never four (the Zen 5's page of 2026-12-02 read "271.2 ms" and "15.40")
    long = CPU_ROW | {"eager_profile_op_ms": 271.23, "eager_profile_overhead_ms": 15.404}
    assert "(271 ms in them)" in explain.explanation(long) and "outside operators 15.4 → " in explain.explanation(long)


def test_an_eager_configuration_is_named_and_has_no_fused_code():
    """eager+bf16-autocast compiles nothing: its line names it and says nothing of fused code (it read
    "compiled 286 ops (114.3 ms) + 0.0 ms fused code")."""
    line = explain.explanation(CPU_ROW | {"configuration": "eager+bf16-autocast", "profile_compiled_ms": 0.0})
    assert line.startswith("eager 150 operators a call") and "; eager+bf16-autocast 12 operators (2.00 ms); " in line
    assert "fused" not in line and "compiled" not in line


def test_cuda_explanation_names_kernels_graph_replays_and_device_busy_share():
    row = CPU_ROW | {"profile_kernels_per_call": 40.0, "profile_device_ms": 1.8, "profile_call_ms": 2.0,
                     "profile_graph_replays_per_call": 1.0, "eager_profile_kernels_per_call": 210.0,
                     "eager_profile_device_ms": 3.0, "eager_profile_call_ms": 6.0}
    assert explain.explanation(row) == ("eager 210 kernels a call, the device busy 50%; "
                                        "default 40 kernels, 1 CUDA-graph replay, busy 90%")
    assert ", 2 CUDA-graph replays," in explain.explanation(row | {"profile_graph_replays_per_call": 2.0})
    assert "replay" not in explain.explanation(row | {"profile_graph_replays_per_call": math.nan})  # not recorded


def test_a_change_that_rounds_to_none_reads_plus_minus_zero_and_missing_fused_code_reads_none():
    line = explain.explanation(CPU_ROW | {"profile_overhead_ms": 0.996, "profile_compiled_ms": math.nan})
    assert line.endswith("outside operators 1.00 → 0.996 ms (±0%)") and "fused" not in line


def test_no_explanation_without_both_profiles_or_for_eager():
    assert explain.explanation(CPU_ROW | {"eager_profile_ops_per_call": math.nan}) == ""
    assert explain.explanation(CPU_ROW | {"profile_ops_per_call": None}) == ""
    assert explain.explanation(CPU_ROW | {"configuration": "eager"}) == ""


def test_explain_table_lists_profiled_compiled_cells_with_trace():
    eager = CPU_ROW | {"configuration": "eager", "speedup": 1.0}
    unprofiled = CPU_ROW | {"model": "vit", "profile_ops_per_call": math.nan}
    # the race figure, as every other table shows it (lowered for the round that picked it), not the raw one
    raced = CPU_ROW | {"race_speedup": 1.55}
    table = explain.explain_table(pd.DataFrame([unprofiled | {"race_speedup": 1.5}, eager, raced]))
    assert list(table["model"]) == ["resnet"] and table.loc[0, "trace"] == "resnet-bs1-default-r0.json"
    assert table.loc[0, "race_speedup"] == 1.55
    assert table.loc[0, "why"] == explain.explanation(CPU_ROW)


def test_top_ops_chart_has_both_sides_per_operator():
    fig = explain.top_ops_chart(pd.Series(CPU_ROW))
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["compiled code (Inductor)", "mkldnn::_convolution_pointwise", "aten::mkldnn_convolution",
                      "aten::native_batch_norm"]
    eager_bars, compiled_bars = ax.containers
    assert [b.get_width() for b in eager_bars] == [0.0, 0.0, 3.0, 1.0]
    assert [b.get_width() for b in compiled_bars] == [1.5, 1.8, 0.0, 0.0]


def test_one_plain_sentence_says_where_the_time_per_call_changed_most():
    # the convolutions: 3.0 ms per call eager, 1.8 ms compiled under oneDNN's fused op's name
    assert explain.why_sentence(CPU_ROW) == "eager spends 3 ms per call in convolutions; default spends 1.8 ms " \
                                            "(1.5 ms per call in fused compiled code)"
    # freezing turns ResNet-50's 1x1 convolutions into matrix multiplies: a new name, not a change
    frozen = CPU_ROW | {"configuration": "default+freezing", "eager_profile_call_ms": 118.9, "eager_profile_overhead_ms": 12.3,
                        "profile_overhead_ms": 1.5, "eager_profile_top_ops": [["aten::mkldnn_convolution", 89.4]],
                        "profile_top_ops": [["aten::mkldnn_convolution", 54.0], ["aten::mm", 35.4]]}
    assert explain.why_sentence(frozen).startswith("eager spends 12.3 ms per call outside operators (Python, module "
                                                   "calls); default+freezing spends 1.5 ms")
    copying = CPU_ROW | {"eager_profile_top_ops": [["aten::copy_", 76.0]], "eager_profile_call_ms": 90.0,
                         "profile_top_ops": [["aten::copy_", 0.4]]}
    assert explain.why_sentence(copying).startswith("eager spends 76 ms per call copying tensors; default spends 0.4 ms")
    same = CPU_ROW | {"profile_top_ops": CPU_ROW["eager_profile_top_ops"], "profile_overhead_ms": 1.0}
    assert explain.why_sentence(same) == "no part of the call changes by more than 5%: default runs about as eager does"
    assert explain.why_sentence(CPU_ROW | {"eager_profile_call_ms": None}) == ""
