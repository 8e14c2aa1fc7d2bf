"""Which lower precisions this CPU computes natively, read from /proc/cpuinfo's flags and oneDNN's cap:
one rule for `plan` (which prices no configuration the CPU lacks) and the measuring process (which
refuses it, measure/settings.py). No torch.

Native means the instructions that make a lower precision faster than float32: bfloat16 needs
AVX512-BF16 or AMX beside oneDNN's AVX-512 core (AVX512 BW, VL, DQ); on a core without them oneDNN still
runs bfloat16, converting in software, slower than float32. float16 needs AVX512-FP16 or AMX-FP16.
"""

from __future__ import annotations

import os

AVX512_CORE = {"avx512bw", "avx512vl", "avx512dq"}  # oneDNN's avx512_core (ATen/native/mkldnn/Utils.h)
CPU_FLAGS_FOR = {"bf16": (AVX512_CORE | {"avx512_bf16"}, AVX512_CORE | {"amx_bf16"}),
                 "fp16": ({"avx512_fp16"}, {"amx_fp16"})}

# ONEDNN_MAX_CPU_ISA caps oneDNN below what the CPU has: a cap below AVX512_CORE_BF16 takes its bfloat16
# instructions away, a cap below AVX10_1_512 its float16 ones (oneDNN's cpu_isa_t order). Caps not listed
# (AVX2_VNNI_2 and above): read as no cap, the worst case.
ISA_CAP_LACKS = {**dict.fromkeys(("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX512_CORE", "AVX512_CORE_VNNI"),
                                 {"bf16", "fp16"}),
                 "AVX512_CORE_BF16": {"fp16"}}


def cpu_lacks(cpuinfo: str = "/proc/cpuinfo", isa_cap: str | None = None) -> set[str]:
    """The precisions ("bf16", "fp16") this x86 CPU has no native support for, or oneDNN is capped
    below (`isa_cap`, default the ONEDNN_MAX_CPU_ISA environment variable): their configurations
    become unsupported rows at no cost. Unknown (no /proc/cpuinfo, not x86): none, the worst case."""
    if isa_cap is None:  # DNNL_MAX_CPU_ISA: the variable's older name, which oneDNN still reads
        isa_cap = os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA", "")
    capped = ISA_CAP_LACKS.get(isa_cap.strip().upper(), set())
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as file:
            line = next((line for line in file if line.startswith("flags")), "")
    except OSError:
        return set(capped)
    flags = set(line.partition(":")[2].split())
    if not flags:
        return set(capped)
    return capped | {need for need, alternatives in CPU_FLAGS_FOR.items()
                     if not any(group <= flags for group in alternatives)}
