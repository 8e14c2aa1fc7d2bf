"""Where a configuration applies and how its settings are set in a measuring process (measure/settings.py)."""

import pytest
import torch

from bench_utils.config.configurations import configuration
from bench_utils.measure import settings


@pytest.mark.parametrize("avx512_bf16, amx, native", [(False, False, False), (True, False, True), (False, True, True)])
def test_bfloat16_is_native_only_with_avx512_bf16_or_amx(monkeypatch, avx512_bf16, amx, native):
    # oneDNN's own check says yes on any AVX-512 core (it converts in software there): not enough
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: True)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    assert settings.cpu_native("bfloat16") is native
    reason = settings.native_precision("bfloat16", "cpu")
    assert (reason == "") is native
    if not native:
        assert reason.startswith("this CPU has no native bfloat16 (")
        with pytest.raises(settings.Unsupported, match="no native bfloat16"):
            settings.check_supported(configuration("eager+bf16-autocast"), "cpu")


def test_onednn_capped_below_bfloat16_is_not_native(monkeypatch):
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: True)
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
