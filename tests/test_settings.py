"""Where a configuration applies and how its settings are set in a measuring process (measure/settings.py)."""

import pytest
import torch

from bench_utils.config.configurations import configuration
from bench_utils.config.cpu_precisions import cpu_lacks
from bench_utils.measure import settings


@pytest.mark.parametrize("flags, native", [("avx2 avx512bw avx512vl avx512dq", False),
                                           ("avx512bw avx512vl avx512dq avx512_bf16", True),
                                           ("avx512bw avx512vl avx512dq amx_bf16 amx_tile", True)])
def test_bfloat16_is_native_only_with_avx512_bf16_or_amx(monkeypatch, tmp_path, flags, native):
    # oneDNN's own check says yes on any AVX-512 core (it converts in software there): not enough
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"flags\t\t: fpu sse {flags}\n")
    monkeypatch.setattr(settings, "cpu_lacks", lambda: cpu_lacks(str(cpuinfo), isa_cap=""))
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: True)
    assert settings.cpu_native("bfloat16") is native
    reason = settings.native_precision("bfloat16", "cpu")
    assert (reason == "") is native
    if not native:
        assert reason.startswith("this CPU has no native bfloat16 (")
        with pytest.raises(settings.Unsupported, match="no native bfloat16"):
            settings.check_supported(configuration("eager+bf16-autocast"), "cpu")


def test_onednn_capped_below_bfloat16_is_not_native(monkeypatch, tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("flags\t\t: avx512bw avx512vl avx512dq amx_bf16\n")
    assert cpu_lacks(str(cpuinfo), isa_cap="AVX512_CORE") == {"bf16", "fp16"}  # the cap takes its instructions away
    assert cpu_lacks(str(cpuinfo), isa_cap="AVX512_CORE_BF16") == {"fp16"}
    monkeypatch.setattr(settings, "cpu_lacks", lambda: set())
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False)  # oneDNN's check: no
    assert not settings.cpu_native("bfloat16")


def test_inductor_settings_are_set_globally_for_the_block_and_restored():
    import torch._inductor.config as inductor_config

    before = inductor_config.freezing
    with settings.inductor_context(configuration("default+freezing")):
        assert inductor_config.freezing is True  # what dynamo reads while it traces
    assert inductor_config.freezing == before
    with settings.inductor_context(configuration("default")):
        assert inductor_config.freezing == before


def test_channels_last_layout_applies_to_the_model_and_four_d_float_inputs():
    model = torch.nn.Conv2d(3, 4, 3)
    inputs = {"pixel_values": torch.ones(1, 3, 8, 8), "ids": torch.ones(1, 3, 8, 8, dtype=torch.long),
              "mask": torch.ones(1, 8)}
    out = settings.with_layout(configuration("default+channels-last"), model, inputs)
    assert out["pixel_values"].is_contiguous(memory_format=torch.channels_last)
    assert not out["ids"].is_contiguous(memory_format=torch.channels_last) and out["mask"] is inputs["mask"]
    assert model.weight.is_contiguous(memory_format=torch.channels_last)
    assert settings.with_layout(configuration("default"), model, inputs) is inputs
