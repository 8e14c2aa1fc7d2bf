"""Best configuration per model across precision/layout variants, from hand-made rows."""

import math

import pytest

from bench_utils.results import BenchResult, to_dataframe
from bench_utils.variants import best_configuration


def row(ms, mode="eager", model="resnet", batch_size=1, dtype="float32", autocast=False, channels_last=False,
        status="ok", hardware="AMD EPYC"):
    return BenchResult(label="CPU", model=model, checkpoint="x", task="image-classification", size="tiny",
                       batch_size=batch_size, mode=mode, fullgraph=False, dtype=dtype, device="cpu",
                       settings="s", status=status, autocast=autocast, channels_last=channels_last,
                       latency_ms_median=ms if status == "ok" else None, env={"device_name": hardware})


def test_fastest_eager_and_compiled_variants_against_float32_eager():
    rows = [row(10.0), row(4.0, mode="default"),
            row(8.0, dtype="bfloat16", autocast=True), row(2.5, mode="default", dtype="bfloat16", autocast=True),
            row(9.0, channels_last=True), row(1.0, mode="max-autotune", channels_last=True, status="oom")]
    table = best_configuration(to_dataframe(rows))
    assert len(table) == 1
    best = table.iloc[0]
    assert best.float32_eager_ms == 10.0
    assert (best.best_eager, best.best_eager_ms, best.best_eager_speedup) == ("bfloat16 autocast", 8.0, 1.25)
    assert best.best_compiled == "bfloat16 autocast · default"  # the failed 1.0 ms cell is not a candidate
    assert best.best_compiled_ms == 2.5 and best.best_compiled_speedup == pytest.approx(4.0)


def test_one_row_per_hardware_model_and_batch_in_registry_order():
    rows = [row(3.0, model="resnet"), row(5.0, model="vit"), row(6.0, model="vit", batch_size=4),
            row(7.0, model="vit", hardware="Other CPU")]
    table = best_configuration(to_dataframe(rows))
    assert table[["hardware", "model", "batch_size"]].values.tolist() == [
        ["AMD EPYC", "vit", 1], ["AMD EPYC", "vit", 4], ["AMD EPYC", "resnet", 1], ["Other CPU", "vit", 1]]
    assert table["best_compiled"].tolist() == ["—"] * 4 and table["best_compiled_ms"].isna().all()


def test_without_a_float32_eager_cell_the_speedups_stay_unknown():
    table = best_configuration(to_dataframe([row(2.0, dtype="bfloat16"), row(1.0, mode="default", dtype="bfloat16")]))
    best = table.iloc[0]
    assert math.isnan(best.float32_eager_ms) and math.isnan(best.best_compiled_speedup)
    assert best.best_eager == "bfloat16" and best.best_compiled == "bfloat16 · default"
