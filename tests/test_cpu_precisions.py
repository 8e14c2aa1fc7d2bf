"""Which lower precisions a CPU computes natively (config/cpu_precisions.py): plan's rule and the workers'."""

from bench_utils.config.cpu_precisions import cpu_lacks


def test_a_precision_is_native_only_with_the_instructions_that_make_it_fast(tmp_path):
    avx2 = tmp_path / "avx2"
    avx2.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n")
    ice_lake = tmp_path / "ice-lake"  # AVX-512 without AVX512-BF16: oneDNN converts bfloat16 in software
    ice_lake.write_text("flags\t\t: avx2 avx512f avx512dq avx512bw avx512vl avx512_vnni\n")
    zen4 = tmp_path / "zen4"
    zen4.write_text("flags\t\t: avx2 avx512f avx512dq avx512bw avx512vl avx512_bf16\n")
    sapphire = tmp_path / "amx"
    sapphire.write_text("flags\t\t: avx512f avx512dq avx512bw avx512vl avx512_bf16 avx512_fp16 amx_bf16 amx_tile\n")
    assert cpu_lacks(str(avx2), isa_cap="") == {"bf16", "fp16"}
    assert cpu_lacks(str(ice_lake), isa_cap="") == {"bf16", "fp16"}
    assert cpu_lacks(str(zen4), isa_cap="") == {"fp16"}
    assert cpu_lacks(str(sapphire), isa_cap="") == set()
    assert cpu_lacks(str(tmp_path / "none"), isa_cap="") == set()  # unknown: every configuration counted
    # oneDNN capped below the CPU (ONEDNN_MAX_CPU_ISA): the cap answers, as the workers' check does
    assert cpu_lacks(str(zen4), isa_cap="avx2") == {"bf16", "fp16"}
    assert cpu_lacks(str(zen4), isa_cap="AVX512_CORE") == {"bf16", "fp16"}  # no bfloat16 instructions below the cap
    assert cpu_lacks(str(zen4), isa_cap="AVX512_CORE_AMX") == {"fp16"}  # a cap above: the CPU's flags
    assert cpu_lacks(str(tmp_path / "none"), isa_cap="AVX512_CORE_BF16") == {"fp16"}


def test_onednns_cap_is_read_from_the_environment_under_either_name(tmp_path, monkeypatch):
    zen4 = tmp_path / "zen4"
    zen4.write_text("flags\t\t: avx2 avx512f avx512dq avx512bw avx512vl avx512_bf16\n")
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)
    assert cpu_lacks(str(zen4)) == {"fp16"}
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "AVX2")
    assert cpu_lacks(str(zen4)) == {"bf16", "fp16"}
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "avx512_core_bf16")  # the new name wins
    assert cpu_lacks(str(zen4)) == {"fp16"}
