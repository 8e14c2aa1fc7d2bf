"""Why a configuration's cell is faster than eager or not, in one line and one chart, from the profiler pass
(`profiler: true`) of its process and of its eager cell's. No torch.

On CPU a call's time splits into operators (what eager dispatches one by one; what compiled code
still hands to oneDNN/BLAS), compiled code outside operators (Inductor's fused kernels) and the rest
(Python, module calls, guards): compiling wins by fusing operators into fewer passes over memory
and by removing the per-operator overhead. On CUDA the line adds kernels per call, CUDA-graph replays
and the share of the call the device was busy (the rest it waited for the host).
"""

from __future__ import annotations

import math

from ..config.registry import display_name
from ..results.record import FUSED_KERNELS
from .display import number, signed_percent
from .tables import sort_cells


def _present(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _change(before: float, after: float) -> str:
    """The relative change from `before` to `after` as a page writes it ("−89%"), "n/a" from nothing;
    "±0%" where it rounds to none (never "−0%")."""
    if not _present(before) or not _present(after) or not before:
        return "n/a"
    return signed_percent((after - before) / before * 100, integer=True)


def explanation(row) -> str:
    """One line for a configuration's cell (a DataFrame row with its eager cell's profiler figures beside
    it), its numbers as every page rounds them (display.number); "" when either side was not profiled. The
    configuration is named: an eager one (bfloat16 autocast) is profiled too and compiles nothing."""
    if row.get("configuration") == "eager" or not _present(row.get("profile_ops_per_call")) \
            or not _present(row.get("eager_profile_ops_per_call")):
        return ""
    name = row["configuration"]
    eager_ops, ops = row["eager_profile_ops_per_call"], row["profile_ops_per_call"]
    if _present(row.get("profile_kernels_per_call")) and _present(row.get("eager_profile_kernels_per_call")):
        eager_busy = row["eager_profile_device_ms"] / row["eager_profile_call_ms"]
        busy = row["profile_device_ms"] / row["profile_call_ms"]
        replays = row.get("profile_graph_replays_per_call")
        replays = replays if _present(replays) else 0  # NaN is truthy: `or 0` would keep it
        count = number(replays, integer=float(replays).is_integer())
        graphs = f", {count} CUDA-graph replay{'' if replays == 1 else 's'}" if replays else ""
        return (f"eager {number(row['eager_profile_kernels_per_call'], integer=True)} kernels a call, the device "
                f"busy {eager_busy:.0%}; {name} {number(row['profile_kernels_per_call'], integer=True)} "
                f"kernels{graphs}, busy {busy:.0%}")
    fused = row["profile_compiled_ms"] if _present(row.get("profile_compiled_ms")) else 0.0
    fused_words = f" and {number(fused)} ms of fused code" if fused else ""
    return (f"eager {number(eager_ops, integer=True)} operators a call ({number(row['eager_profile_op_ms'])} ms "
            f"in them); {name} {number(ops, integer=True)} operators ({number(row['profile_op_ms'])} ms)"
            f"{fused_words}; outside operators {number(row['eager_profile_overhead_ms'])} → "
            f"{number(row['profile_overhead_ms'])} ms ({_change(row['eager_profile_overhead_ms'], row['profile_overhead_ms'])})")


# what an operator does, in words, for the one sentence of the verdict (the profiler's names otherwise)
OPERATOR_WORDS = {"aten::copy_": "copying tensors", "aten::to": "converting tensors", "aten::contiguous": "copying tensors",
                  "aten::native_layer_norm": "in layer norms", "aten::native_batch_norm": "in batch norms",
                  "aten::_softmax": "in softmax", "aten::gelu": "in GELU activations", "aten::add": "adding tensors",
                  "aten::mul": "multiplying tensors", "aten::upsample_bilinear2d": "upsampling",
                  "aten::_scaled_dot_product_flash_attention_for_cpu": "in attention"}
# Convolutions and matrix multiplies are one part of a call: freezing turns a 1x1 convolution into a
# matrix multiply (ResNet-50: 89 ms of convolutions eager, 54 ms of convolutions and 35 ms of
# matrix multiplies frozen), so compared apart they would show a change that is only a new name
CONVOLUTIONS = {"aten::mkldnn_convolution", "aten::convolution", "aten::_convolution", "aten::_slow_conv2d_forward",
                "mkldnn::_convolution_pointwise"}
MATMULS = {"aten::addmm", "aten::mm", "aten::bmm", "aten::linear", "aten::matmul", "mkldnn::_linear_pointwise",
           "aten::_mkl_linear"}


def _parts(top_ops) -> dict[str, float]:
    """A profile's top operators (name, ms per call) summed by what they do: convolutions and matrix
    multiplies together ("dense"), the others one by one; Inductor's fused code left out."""
    parts: dict[str, float] = {}
    for name, ms in top_ops or []:
        if name == FUSED_KERNELS:
            continue
        key = "dense" if name in CONVOLUTIONS or name in MATMULS else name
        parts[key] = parts.get(key, 0.0) + ms
    return parts


def _dense_words(names: set) -> str:
    kinds = [words for words, group in (("convolutions", CONVOLUTIONS), ("matrix multiplies", MATMULS)) if names & group]
    return "in " + " and ".join(kinds)


def why_sentence(row) -> str:
    """One plain sentence: where the configuration's time per call differs most from eager's, by the
    profiler's top operators (convolutions and matrix multiplies as one part) and the time outside
    operators; "" when either side was not profiled.
    E.g. "eager spends 76 ms per call copying tensors; default+freezing spends 0.4 ms"."""
    if not row or not _present(row.get("profile_call_ms")) or not _present(row.get("eager_profile_call_ms")):
        return ""
    eager, mine = _parts(row.get("eager_profile_top_ops")), _parts(row.get("profile_top_ops"))
    names = {name for name, _ in [*(row.get("eager_profile_top_ops") or []), *(row.get("profile_top_ops") or [])]}
    words = lambda key: _dense_words(names) if key == "dense" else OPERATOR_WORDS.get(key, f"in {key}")  # noqa: E731
    changes = [(eager.get(n, 0.0) - mine.get(n, 0.0), words(n), eager.get(n, 0.0), mine.get(n, 0.0))
               for n in set(eager) | set(mine)]
    overhead = (row["eager_profile_overhead_ms"] or 0.0, row["profile_overhead_ms"] or 0.0)
    changes.append((overhead[0] - overhead[1], "outside operators (Python, module calls)", *overhead))
    change, what, before, after = max(changes, key=lambda c: abs(c[0]))
    if abs(change) < 0.05 * row["eager_profile_call_ms"]:
        return f"no part of the call changes by more than 5%: {row['configuration']} runs about as eager does"
    fused = row.get("profile_compiled_ms") or 0.0
    tail = f" ({fused:.3g} ms per call in fused compiled code)" if fused else ""
    return (f"eager spends {before:.3g} ms per call {what}; {row['configuration']} spends {after:.3g} ms{tail}")


def explain_table(df):
    """Per profiled compiled cell: the speedup beside its one-line explanation and the trace files. The
    speedup is the race figure every other table and the verdict show (results/race.py)."""
    rows = df[(df["configuration"] != "eager") & df["profile_ops_per_call"].notna()]
    frame = rows[["label", "model", "batch_size", "configuration"]].copy()
    frame["race_speedup"] = rows["race_speedup"]
    frame["why"] = [explanation(row) for _, row in rows.iterrows()]
    frame["trace"] = rows["profile_trace"].fillna("")
    return sort_cells(frame)


def top_ops_chart(row):
    """Horizontal bars: the operators with the most self time per call, eager against compiled (ms)."""
    import matplotlib.pyplot as plt

    eager = dict(row["eager_profile_top_ops"] or [])
    compiled = dict(row["profile_top_ops"] or [])
    names = list(dict.fromkeys([*compiled, *eager]))[:10]
    fig, ax = plt.subplots(figsize=(7.0, 0.35 * len(names) + 1.2))
    y = range(len(names))
    ax.barh([i + 0.2 for i in y], [eager.get(n, 0.0) for n in names], height=0.4, label="eager")
    ax.barh([i - 0.2 for i in y], [compiled.get(n, 0.0) for n in names], height=0.4, label=row["configuration"])
    ax.set_yticks(list(y), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("self time per call (ms)")
    ax.set_title(f"{display_name(row['model'])} · batch {row['batch_size']}: where the time goes", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.close(fig)
    return fig
