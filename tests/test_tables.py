import math

import pandas as pd
import pytest

from bench_utils.config import BenchConfig
from bench_utils.results import BenchResult, to_dataframe
from bench_utils.tables import (MISSING, compile_table, failures_table, improvement_table, latency_cells,
                                latency_table, missing_cells, run_facts, weights_notice)

VIT, RESNET = "Image Classification/ViT", "Image Classification/ResNet"


def make_row(model="vit", batch_size=1, mode="eager", status="ok", compiled_ms=None, eager_ms=None,
             label="CPU", **extra) -> BenchResult:
    """A row with known numbers: mean and median both `compiled_ms` (the cell's own mode) and, for a
    compiled cell, the same-process eager mean and median both `eager_ms`."""
    values = dict(label=label, model=model, checkpoint="hub/id", task="image-classification", size="tiny",
                  batch_size=batch_size, mode=mode, fullgraph=False, dtype="float32", device="cpu",
                  settings="abc", status=status, weights="random" if status == "ok" else "",
                  weights_note="offline" if status == "ok" else "", warmup=2, iterations=10,
                  env={"device_name": "Test CPU", "torch": "2.9", "transformers": "4.50", "hostname": "h"})
    if status == "ok":
        values.update(latency_ms_mean=compiled_ms, latency_ms_median=compiled_ms)
        if mode != "eager":
            values.update(eager_ms_mean=eager_ms, eager_ms_median=eager_ms, speedup=eager_ms / compiled_ms)
    else:
        values["error"] = f"{status} happened"
    values.update(extra)
    return BenchResult(**values)


@pytest.fixture
def df():
    return to_dataframe([
        make_row("resnet", 1, "default", status="oom"),
        make_row("vit", 1, "eager", compiled_ms=10.0),
        make_row("vit", 1, "default", compiled_ms=8.0, eager_ms=10.5, compile_s=2.0,
                 speedup_ci95_low=1.1, speedup_ci95_high=1.4, latency_ms_p10=7.0, latency_ms_p90=9.0,
                 graph_breaks=1, recompiles=0, break_reasons=["print", "data-dependent"], accuracy_ok=True),
        make_row("resnet", 2, "default", compiled_ms=15.0, eager_ms=20.0, compile_s=3.0,
                 speedup_ci95_low=0.9, speedup_ci95_high=1.6, latency_ms_p10=14.9, latency_ms_p90=15.1),
        make_row("vit", 2, "default", compiled_ms=12.0, eager_ms=10.0, compile_s=1.0),
    ])


def test_latency_table_shows_numbers_status_words_and_missing_marks(df):
    table = latency_table(df, 1)
    assert list(table.index) == [VIT, RESNET]  # registry order, not file order
    assert list(table.columns) == ["eager (ms)", "default (ms)"]
    assert table.loc[VIT].tolist() == ["10.000", "8.000"]  # eager from the eager row, not the 10.5
    assert table.loc[RESNET].tolist() == [MISSING, "OOM"]
    assert table.index.name == "Task/Model"


def test_latency_table_borrows_same_process_eager_when_there_is_no_eager_row(df):
    table = latency_table(df, 2)
    assert table.loc[RESNET].tolist() == ["20.000", "15.000"]
    assert table.loc[VIT].tolist() == ["10.000", "12.000"]


def test_latency_table_numeric_variant_has_floats_and_nan(df):
    table = latency_table(df, 1, stat="median", numeric=True)
    assert table.loc[VIT].tolist() == [10.0, 8.0]
    assert all(math.isnan(v) for v in table.loc[RESNET])


def test_latency_table_rejects_bad_arguments(df):
    with pytest.raises(ValueError, match="batch_size"):
        latency_table(df, 0)
    with pytest.raises(ValueError, match="stat"):
        latency_table(df, 1, stat="p99")
    two_labels = pd.concat([df, df.assign(label="A100")], ignore_index=True)
    with pytest.raises(ValueError, match="several labels"):
        latency_table(two_labels, 1)
    with pytest.raises(ValueError, match="df"):
        latency_table([1, 2], 1)


def test_latency_cells_has_one_eager_row_per_model_and_batch(df):
    eager = latency_cells(df).query("mode == 'eager'")
    assert sorted(zip(eager["model"], eager["batch_size"], eager["latency_ms"])) == [
        ("resnet", 2, 20.0), ("vit", 1, 10.0), ("vit", 2, 10.0)]


def test_improvement_table_percentages_speedup_significance_and_noise(df):
    table = improvement_table(df).set_index(["model", "batch_size"])
    vit1 = table.loc[("vit", 1)]
    assert vit1["improvement_pct"] == pytest.approx((10.5 - 8.0) / 10.5 * 100)
    assert vit1["speedup"] == pytest.approx(10.5 / 8.0)
    assert bool(vit1["significant"]) and bool(vit1["noisy"])  # CI 1.1..1.4; spread 2/8 = 0.25
    resnet2 = table.loc[("resnet", 2)]
    assert resnet2["improvement_pct"] == pytest.approx(25.0)
    assert not resnet2["significant"] and not resnet2["noisy"]  # CI includes 1; spread 0.2/15
    assert table.loc[("vit", 2), "improvement_pct"] == pytest.approx(-20.0)  # compiled is slower
    resnet1 = table.loc[("resnet", 1)]
    assert resnet1["status"] == "oom" and math.isnan(resnet1["improvement_pct"])
    assert "eager" not in set(improvement_table(df)["mode"])
    assert set(table["hardware"]) == {"Test CPU"} and set(table["torch"]) == {"2.9"}


def test_compile_table_breakeven_and_graph_breaks(df):
    table = compile_table(df).set_index(["model", "batch_size"])
    # 2 s of compiling, 10.5 - 8 = 2.5 ms saved per call -> 800 calls
    assert table.loc[("vit", 1), "breakeven_calls"] == pytest.approx(800.0)
    assert table.loc[("resnet", 2), "breakeven_calls"] == pytest.approx(600.0)  # 3 s / 5 ms
    assert math.isinf(table.loc[("vit", 2), "breakeven_calls"])  # slower: never pays off
    assert math.isnan(table.loc[("resnet", 1), "breakeven_calls"])  # OOM
    assert table.loc[("vit", 1), "break_reasons"] == "print; data-dependent"
    assert table.loc[("vit", 1), "graph_breaks"] == 1
    assert table.loc[("vit", 1), "accuracy_ok"] == True  # noqa: E712 - object column


def test_failures_table_lists_non_ok_rows_in_capitals(df):
    table = failures_table(df)
    assert table[["model", "batch_size", "mode", "status", "error"]].values.tolist() == [
        ["resnet", 1, "default", "OOM", "oom happened"]]


def test_missing_cells_counts_the_config_cells_without_a_row(df):
    cfg = BenchConfig(models=("vit", "resnet"), batch_sizes=(1, 2), modes=("eager", "default"))
    missing = missing_cells(df, cfg.cells())
    assert len(cfg.cells()) == 8 and len(missing) == 3
    assert list(zip(missing["model"], missing["batch_size"], missing["mode"])) == [
        ("vit", 2, "eager"), ("resnet", 1, "eager"), ("resnet", 2, "eager")]
    assert missing_cells(df, [("vit", 1, "eager")]).empty
    with pytest.raises(ValueError, match="expected_cells"):
        missing_cells(df, [("vit", 1)])


def test_run_facts_and_weights_notice_make_random_weights_loud(df):
    facts = run_facts(df)
    assert list(facts.columns) == ["CPU"]
    assert facts.loc["hardware", "CPU"] == "Test CPU"
    assert facts.loc["torch", "CPU"] == "2.9"
    assert facts.loc["cells", "CPU"] == "4 ok, 1 failed"
    assert facts.loc["weights", "CPU"].startswith("RANDOM weights, not pretrained, for 2 of 2 loaded models: vit, resnet")
    assert facts.loc[f"weights: {VIT}", "CPU"] == "random (offline)"
    assert "RANDOM" in weights_notice(df)
    pretrained = to_dataframe([make_row(compiled_ms=1.0, weights="pretrained", weights_note="")])
    assert weights_notice(pretrained).startswith("**Pretrained weights**")
    assert run_facts(pretrained).loc["weights", "CPU"] == "pretrained (hub checkpoints)"


def test_empty_input_gives_empty_tables_not_errors():
    empty = to_dataframe([])
    assert latency_table(empty, 1).empty
    assert improvement_table(empty).empty and compile_table(empty).empty and failures_table(empty).empty
    assert len(missing_cells(empty, [("vit", 1, "eager")])) == 1
    assert run_facts(empty).shape == (1, 1)
    assert weights_notice(empty).startswith("No measured cells")


def test_placement_table_names_host_device_and_duration():
    from bench_utils.results import BenchResult, to_dataframe
    from bench_utils.tables import placement_table

    rows = [BenchResult(label="A100", model=model, checkpoint="x", task="image-classification", size="full",
                        batch_size=1, mode="eager", fullgraph=False, dtype="float32", device="cuda", settings="s",
                        status="ok", duration_s=duration, env={"hostname": host, "device_name": "NVIDIA A100"})
            for model, host, duration in (("resnet", "node-b", 12.5), ("vit", "node-a", 30.0))]
    table = placement_table(to_dataframe(rows))
    assert table[["model", "hostname", "hardware", "duration_s"]].values.tolist() == [
        ["vit", "node-a", "NVIDIA A100", 30.0], ["resnet", "node-b", "NVIDIA A100", 12.5]]
