import math

import pandas as pd
import pytest

from bench_utils.config.bench_config import BenchConfig
from bench_utils.report.tables import (MISSING, compile_table, failures_table, improvement_table, latency_cells,
                                       latency_table, missing_cells)
from bench_utils.results.aggregate import to_dataframe
from conftest import make_row

VIT, RESNET = "ViT-B/16", "ResNet-50"


def row(model="vit", batch_size=1, configuration="eager", ms=None, status="ok", **extra):
    env = {"device_name": "Test CPU", "torch": "2.9", "transformers": "4.50", "hostname": "h"}
    return make_row(model, batch_size, configuration, ms, status, env=env, weights_note="offline", **extra)


@pytest.fixture
def df():
    # resnet bs 2: three processes per mode whose medians disagree (x0.8, x1, x1.25): geometric means
    # exactly 20 and 15 ms, and an interval over processes too wide to call the speedup significant
    resnet2 = [row("resnet", 2, "eager", 20.0 * k, repeat=r) for r, k in enumerate((0.8, 1.0, 1.25))]
    resnet2 += [row("resnet", 2, "default", 15.0 * k, repeat=r, compile_s=3.0)
                for r, k in enumerate((1.25, 1.0, 0.8))]
    return to_dataframe([
        row("resnet", 1, "default", status="oom"),
        row("vit", 1, "eager", 10.0),
        row("vit", 1, "default", 8.0, spread=0.1, compile_s=2.0, graph_breaks=1, recompiles=0,
            break_reasons=["print", "data-dependent"], accuracy_ok=True),
        *resnet2,
        row("vit", 2, "eager", 10.0),
        row("vit", 2, "default", 12.0, compile_s=1.0),
    ])


def test_latency_table_shows_numbers_status_words_and_missing_marks(df):
    table = latency_table(df, 1)
    assert list(table.index) == [VIT, RESNET]  # registry order, not file order
    assert list(table.columns) == ["eager (ms)", "default (ms)"]
    assert table.loc[VIT].tolist() == ["10.0", "8.00"]
    assert table.loc[RESNET].tolist() == [MISSING, "OOM"]
    assert table.index.name is None  # the guide table makes it a column: no second header row


def test_latency_table_marks_a_cell_not_timed_in_the_charts_words():
    """A status is marked in capitals as the guide marks OOM, in the words a chart's bar note uses:
    "NOT SUPPORTED HERE" and "SKIPPED", never the status code "UNSUPPORTED"."""
    table = latency_table(to_dataframe([
        row("vit", 1, "eager", 10.0), row("vit", 1, "default", status="unsupported", error="no Triton"),
        row("vit", 1, "reduce-overhead", status="skipped", error="left out by the budget")]), 1)
    assert table.loc[VIT].tolist() == ["10.0", "NOT SUPPORTED HERE", "SKIPPED"]


def test_one_eager_number_per_cell(df):
    """A compiled cell's eager figure is its eager cell's, in every column that shows one."""
    for _, compiled in df[(df["configuration"] != "eager") & (df["status"] == "ok")].iterrows():
        eager = df[(df["configuration"] == "eager") & (df["model"] == compiled["model"])
                   & (df["batch_size"] == compiled["batch_size"])].iloc[0]
        assert compiled["eager_ms_median"] == eager["latency_ms_median"]
        assert compiled["eager_ms_mean"] == eager["latency_ms_mean"]
        assert compiled["speedup"] == pytest.approx(eager["latency_ms_median"] / compiled["latency_ms_median"])
    numbers = latency_cells(df, "median").set_index(["model", "batch_size", "configuration"])
    improvement = improvement_table(df).set_index(["model", "batch_size"])
    assert numbers.loc[("resnet", 2, "eager"), "latency_ms"] == improvement.loc[("resnet", 2), "eager_ms_median"]


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
    eager = latency_cells(df).query("configuration == 'eager'")
    assert sorted(zip(eager["model"], eager["batch_size"], eager["latency_ms"].round(9))) == [
        ("resnet", 2, 20.0), ("vit", 1, 10.0), ("vit", 2, 10.0)]


def test_improvement_table_percentages_speedup_significance_and_noise(df):
    table = improvement_table(df).set_index(["model", "batch_size"])
    vit1 = table.loc[("vit", 1)]
    assert vit1["improvement_pct"] == pytest.approx((10.0 - 8.0) / 10.0 * 100)
    assert vit1["race_speedup"] == pytest.approx(10.0 / 8.0)
    assert bool(vit1["race_significant"]) and bool(vit1["noisy"])  # one process each; spread 0.32 / 8 > 0.1
    assert not vit1["disturbed"] and vit1["repeats"] == 1
    resnet2 = table.loc[("resnet", 2)]
    assert resnet2["improvement_pct"] == pytest.approx(25.0)
    assert not resnet2["race_significant"]  # the processes disagree: the interval over them includes 1
    assert resnet2["race_ci95_low"] < 1.0 < resnet2["race_ci95_high"] and resnet2["repeats"] == 3
    # their disagreement (x0.8 .. x1.25: 56%) is inside that interval; with fewer than four rounds none
    # is judged outlying, so the cell is not marked disturbed for it
    spread = df.set_index(["model", "batch_size", "configuration"]).loc[("resnet", 2, "default"), "process_spread"]
    assert spread == pytest.approx(1.25 / 0.8 - 1) and not resnet2["disturbed"]
    assert table.loc[("vit", 2), "improvement_pct"] == pytest.approx(-20.0)  # compiled is slower
    resnet1 = table.loc[("resnet", 1)]
    assert resnet1["status"] == "oom" and math.isnan(resnet1["improvement_pct"])
    # not measured: whether its interval excludes 1x is unknown ("—" on the page), not "no"
    assert pd.isna(resnet1["race_significant"]) and pd.isna(resnet1["noisy"]) and pd.isna(resnet1["disturbed"])
    assert "eager" not in set(improvement_table(df)["configuration"])
    assert set(table["hardware"]) == {"Test CPU"} and set(table["torch"]) == {"2.9"}


def test_compile_table_compile_times_and_graph_breaks_but_no_pay_back(df):
    table = compile_table(df).set_index(["model", "batch_size"])
    assert table.loc[("vit", 1), "compile_s"] == 2.0 and math.isnan(table.loc[("resnet", 1), "compile_s"])  # OOM
    assert "breakeven_calls" not in table.columns  # the verdict's, for the configuration it recommends
    assert table.loc[("vit", 1), "break_reasons"] == "data-dependent; print"  # union over processes, sorted
    assert table.loc[("vit", 1), "graph_breaks"] == 1
    assert table.loc[("vit", 1), "accuracy_ok"] == True  # noqa: E712 - object column


def test_failures_table_lists_non_ok_rows_in_capitals(df):
    table = failures_table(df)
    assert table[["model", "batch_size", "configuration", "status", "error"]].values.tolist() == [
        ["resnet", 1, "default", "OOM", "oom: fixture"]]


def test_a_configuration_not_supported_here_is_counted_apart_and_never_as_a_failure():
    from bench_utils.report.tables import cell_states, cell_states_text

    reason = "this CPU has no native bfloat16 (AVX2)"
    rows = [make_row("resnet", 1, "eager", 10.0), make_row("resnet", 1, "default", 8.0),
            make_row("resnet", 1, "default+bf16-autocast", status="unsupported", error=reason),
            make_row("resnet", 1, "eager+bf16-autocast", status="unsupported", error=reason)]
    frame = to_dataframe(rows)
    assert failures_table(frame).empty
    assert cell_states(frame) == (2, 2, 0, 0) and cell_states_text(frame) == "2 ok, 2 not supported here, 0 failed"
    frame = to_dataframe(rows + [make_row("vit", 1, "eager", status="oom", error="oom: fixture")])
    assert failures_table(frame)["status"].tolist() == ["OOM"]
    assert cell_states_text(frame, "<br>") == "2 ok<br>2 not supported here<br>1 failed"


def test_missing_cells_counts_the_config_cells_without_a_row(df):
    cfg = BenchConfig(models=("vit", "resnet"), batch_sizes=(1, 2), configurations=("eager", "default"))
    missing = missing_cells(df, cfg.cells())
    assert len(cfg.cells()) == 8 and len(missing) == 1
    assert list(zip(missing["model"], missing["batch_size"], missing["configuration"])) == [("resnet", 1, "eager")]
    assert missing_cells(df, [("vit", 1, "eager")]).empty
    with pytest.raises(ValueError, match="expected_cells"):
        missing_cells(df, [("vit", 1)])


def test_empty_input_gives_empty_tables_not_errors():
    empty = to_dataframe([])
    assert latency_table(empty, 1).empty
    assert improvement_table(empty).empty and compile_table(empty).empty and failures_table(empty).empty
    assert len(missing_cells(empty, [("vit", 1, "eager")])) == 1


def test_placement_table_names_host_device_and_duration():
    from bench_utils.report.tables import placement_table

    rows = [make_row(model, label="A100", duration_s=duration, env={"hostname": host, "device_name": "NVIDIA A100"})
            for model, host, duration in (("resnet", "node-b", 12.5), ("vit", "node-a", 30.0))]
    table = placement_table(to_dataframe(rows))
    assert table[["model", "hostname", "hardware", "duration_s"]].values.tolist() == [
        ["vit", "node-a", "NVIDIA A100", 30.0], ["resnet", "node-b", "NVIDIA A100", 12.5]]


def test_guide_table_puts_the_median_beside_the_mean_and_marks_outliers():
    from bench_utils.report.tables import OUTLIER_MARK, guide_table

    steady = [row("vit", 1, "eager", 10.0), row("vit", 1, "default", 8.0)]
    # nine calls at 4 ms and one at 40 ms: median 4, mean 7.6
    outlier = row("resnet", 1, "eager", 4.0, samples_s=[0.004] * 9 + [0.04])
    table = guide_table(to_dataframe(steady + [outlier]), 1).set_index("Model")
    # the model a column, not an index with a header row; a configuration's mean and median in one cell
    assert list(table.columns) == ["eager: mean / median (ms)", "default: mean / median (ms)"]
    assert table.loc[VIT].tolist() == ["10.0", "8.00"]  # equal: once
    assert table.loc[RESNET, "eager: mean / median (ms)"] == "7.60" + OUTLIER_MARK + " / 4.00"
    assert table.loc[RESNET, "default: mean / median (ms)"] == MISSING


def test_gpu_memory_is_compared_on_the_reserved_peak_that_holds_the_cuda_graph_pool():
    # a replay allocates nothing: reduce-overhead's allocated peak (60 MiB) would read leaner than
    # eager's (300 MiB) while it holds more (its pool); the table shows what each held
    from bench_utils.report.display import readable
    from bench_utils.report.tables import main_table

    cuda = dict(device="cuda", env={"device": "cuda"})
    rows = [make_row("vit", 1, "eager", 2.0, peak_mem_mb=300.0, peak_reserved_mb=340.0, **cuda),
            make_row("vit", 1, "reduce-overhead", 1.0, peak_mem_mb=60.0, peak_reserved_mb=420.0,
                     cudagraph_pool_mb=350.0, **cuda),
            make_row("resnet", 1, "eager", 2.0, peak_mem_mb=900.0), make_row("resnet", 1, "default", 1.0, peak_mem_mb=950.0)]
    frame = main_table(to_dataframe(rows))
    table = frame.set_index("model")
    assert (table.loc["vit", "eager_held_mem_mb"], table.loc["vit", "compiled_peak_mem_mb"]) == (340.0, 420.0)
    assert (table.loc["resnet", "eager_held_mem_mb"], table.loc["resnet", "compiled_peak_mem_mb"]) == (900.0, 950.0)
    assert "Compiled peak memory (MiB; CPU: process peak; CUDA: GPU reserved)" in readable(frame).columns
    gpu_only = readable(frame[frame["device"] == "cuda"])
    assert "Compiled peak memory (MiB; GPU reserved)" in gpu_only.columns


def test_configurations_no_model_could_run_are_one_sentence_not_empty_bars_and_columns():
    from bench_utils.report.tables import run_here

    reason = "this CPU has no native bfloat16 (AVX2)"
    rows = [make_row(m, 1, "eager", 10.0) for m in ("resnet", "vit")]
    rows += [make_row(m, 1, "default", 8.0) for m in ("resnet", "vit")]
    rows += [make_row(m, 1, c, status="unsupported", error=reason) for m in ("resnet", "vit")
             for c in ("eager+bf16-autocast", "default+bf16-autocast")]
    rows += [make_row("resnet", 1, "default+channels-last", status="unsupported", error="not here"),
             make_row("vit", 1, "default+channels-last", 9.0)]  # unsupported for one model only: kept
    ran, said = run_here(to_dataframe(rows))
    assert set(ran["configuration"]) == {"eager", "default", "default+channels-last"}
    assert said == f"Not run on this machine: eager+bf16-autocast, default+bf16-autocast ({reason})."
    everything, nothing = run_here(to_dataframe(rows[:4]))
    assert nothing == "" and len(everything) == 4


def test_the_data_dictionary_names_units_and_leaves_out_other_devices_columns():
    from bench_utils.report.tables import cells_dictionary

    cuda = dict(device="cuda", env={"device": "cuda"})
    cpu = cells_dictionary(to_dataframe([make_row("vit", 1, "eager", 2.0), make_row("vit", 1, "default", 1.0)]))
    cpu = cpu.set_index("column")
    assert cpu.loc["latency_ms_median", "unit"] == "ms" and cpu.loc["speedup", "unit"] == "×"
    assert cpu.loc["held_mem_mb", "unit"] == "MiB" and cpu["meaning"].all()
    gpu = cells_dictionary(to_dataframe([make_row("vit", 1, "eager", 2.0, **cuda)]))
    assert "peak_reserved_mb" not in cpu.index and "peak_reserved_mb" in set(gpu["column"])


def test_a_row_that_left_the_race_early_shows_eagers_median_of_its_own_rounds():
    """Eager ran rounds 0 and 1 (the machine slower in round 1), the configuration round 0 only (it
    left the race): pooled over both rounds, eager's median would make the row's medians read 1.48x
    beside a speedup of 1.25x (ResNet-50's dropped rows read 1.20 beside 1.13 on the e9fd0db page).
    The row shows eager's median of round 0, so its medians, speedup and improvement (20%) agree."""
    rows = [row("vit", 1, "eager", 10.0), row("vit", 1, "eager", 14.0, repeat=1),
            row("vit", 1, "default", 8.0, compile_s=2.0)]
    table = improvement_table(to_dataframe(rows)).iloc[0]
    assert table["race_speedup"] == pytest.approx(1.25)
    assert table["improvement_pct"] == pytest.approx(20.0)
    assert table["eager_ms_median"] == pytest.approx(10.0)
    assert table["eager_ms_median"] / table["compiled_ms_median"] == pytest.approx(1.25)
    eager = to_dataframe(rows).set_index("configuration").loc["eager"]
    assert eager["latency_ms_median"] == pytest.approx((10.0 * 14.0) ** 0.5)  # eager's own cell keeps both rounds


def test_page_derived_columns_are_the_records_from_the_rounds_beside_the_median():
    """Throughput and the race's significance are record columns (results/aggregate.py), in the data
    dictionary with their units; the main table shows them as computed there. A configuration that left
    the race after round 0 shows eager's p90, throughput and memory of round 0 only, as its median."""
    from bench_utils.report.tables import cells_dictionary, main_table

    rows = [row("vit", 1, "eager", 10.0), row("vit", 1, "eager", 14.0, repeat=1),
            row("vit", 1, "default", 8.0, compile_s=2.0)]
    df = to_dataframe(rows)
    record = df[df["configuration"] == "default"].iloc[0]
    table = main_table(df).iloc[0]
    assert table["eager_images_per_s"] == pytest.approx(1000.0 / 10.0) == record["eager_images_per_s"]
    assert table["images_per_s"] == pytest.approx(1000.0 / 8.0) == record["images_per_s"]
    assert table["eager_ms_p90"] == pytest.approx(10.0, rel=0.05)  # round 0's, not pooled with round 1's 14 ms
    assert bool(table["race_significant"]) == bool(record["race_significant"])
    dictionary = cells_dictionary(df).set_index("column")
    assert dictionary.loc["images_per_s", "unit"] == dictionary.loc["eager_images_per_s", "unit"] == "images/s"
    assert "race_significant" in dictionary.index


def test_every_rows_improvement_agrees_with_its_speedup(df):
    table = improvement_table(df)
    shown = table[table["race_speedup"].notna()]
    assert len(shown) >= 3
    assert shown["improvement_pct"].tolist() == pytest.approx((100 * (1 - 1 / shown["race_speedup"])).tolist())


def test_the_compile_tables_caption_says_why_a_warm_compile_is_missing():
    # a "—" alone read as a failure: on a CPU only a leader of the race times its warm compile
    from bench_utils.report.tables import COMPILE_CAPTION, compile_table_caption

    both = pd.DataFrame({"status": ["ok", "ok"], "compile_warm_s": [4.0, 9.0]})
    assert compile_table_caption(both) == COMPILE_CAPTION
    one = pd.DataFrame({"status": ["ok", "ok"], "compile_warm_s": [4.0, math.nan]})
    caption = compile_table_caption(one)
    assert caption.startswith(COMPILE_CAPTION + ". Warm compile —: not timed") and "never led" in caption


def test_the_main_tables_caption_says_where_its_eager_latencies_were_timed():
    from bench_utils.report.tables import MAIN_CAPTION, main_table_caption
    from bench_utils.results.aggregate import to_dataframe
    from conftest import fixture_samples, make_row

    apart = [make_row("vit", 1, "eager", 10.0), make_row("vit", 1, "default", 8.0)]
    beside = [apart[0], make_row("vit", 1, "default", 8.0, eager_samples_s=fixture_samples(9.0),
                                 eager_block_lengths=[5, 5])]
    assert main_table_caption(to_dataframe(apart)) == MAIN_CAPTION
    said = main_table_caption(to_dataframe(beside))
    assert "timed beside each configuration" in said and "the guide's table above shows eager's own worker" in said


def test_a_compile_that_began_beside_importing_spares_says_its_time_may_read_high():
    # sweep/workers.Spares import beside a fresh round's compiles (never beside its blocks): the compile
    # table's notes say which compiles; the verdict's caveats, made of compile_note_words, do not (the speeds
    # are not touched)
    from bench_utils.report.notes import compile_note_words
    from bench_utils.results.aggregate import to_dataframe
    from conftest import make_row

    rows = [make_row("vit", 1, "eager", 10.0), make_row("vit", 1, "default", 8.0, compile_s=12.0,
                                                        compiled_beside_starts=2)]
    table = compile_table(to_dataframe(rows))
    assert table["compile_notes"].tolist() == ["compiled while 2 worker(s) for the next round imported: its "
                                               "compile time may read high"]
    assert compile_note_words(to_dataframe(rows).iloc[1].to_dict()) == ""
    quiet = [rows[0], make_row("vit", 1, "default", 8.0, compile_s=12.0)]
    assert compile_table(to_dataframe(quiet))["compile_notes"].tolist() == [""]


def test_a_cell_that_was_not_measured_reads_a_dash_where_differs_from_eager_would_say_no():
    """A skipped or failed cell's "Differs from eager?" is "—" on the page: "no" would read as an
    interval that was measured and held 1x (the Zen 5's default report of 2026-12-02 said "no" beside
    SKIPPED)."""
    from bench_utils.report.display import readable
    from bench_utils.report.tables import main_table

    frame = to_dataframe([row("vit", 1, "eager", 10.0), row("vit", 1, "default", status="skipped", error="budget"),
                          row("vit", 1, "default+freezing", 5.0)])
    shown = readable(main_table(frame)).set_index("Configuration")
    assert shown.loc["default", "Differs from eager?"] == MISSING
    assert shown.loc["default+freezing", "Differs from eager?"] == "yes"
