"""Best configuration per model across precision/layout variants, from hand-made rows."""

import math

import pytest
from conftest import make_row

from bench_utils.results.aggregate import to_dataframe
from bench_utils.report.variants import best_configuration


def row(ms, mode="eager", model="resnet", batch_size=1, dtype="float32", autocast=False, channels_last=False,
        status="ok", hardware="AMD EPYC", repeat=0):
    """One process of a cell; its median is exactly `ms`. Each hardware has its own label, as a run's does."""
    return make_row(model=model, batch_size=batch_size, mode=mode, ms=ms, status=status, label=hardware, repeat=repeat,
                    dtype=dtype, autocast=autocast, channels_last=channels_last, env={"device_name": hardware})


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


def test_repeats_of_a_variant_are_one_candidate_at_their_combined_median():
    rows = [row(10.0), row(8.0, dtype="bfloat16"), row(8.0 * 1.21, dtype="bfloat16", repeat=1)]
    best = best_configuration(to_dataframe(rows)).iloc[0]
    assert best.best_eager == "bfloat16" and best.best_eager_ms == pytest.approx(8.8)  # sqrt(8 * 9.68)
    assert best.best_eager_speedup == pytest.approx(10.0 / 8.8)
