import io

import pytest
from conftest import fixture_samples, make_row

from bench_utils.report.run_comparison import comparison_chart, comparison_table, runs_text, unmatched_table
from bench_utils.results.compare import compare_runs
from bench_utils.results.aggregate import to_dataframe


def row(center_ms, model="vit", batch_size=1, configuration="default", status="ok", torch="2.4.0", repeat=0, label="H100",
        **extra):
    """One process of a cell on an H100: 50 samples at `center_ms` +-0, 1, 2 %, median exactly `center_ms`."""
    return make_row(model=model, batch_size=batch_size, configuration=configuration, ms=center_ms, status=status, repeat=repeat,
                    label=label, n=50, spread=0.01, size="full", device="cuda",
                    env={"device_name": "NVIDIA H100", "torch": torch}, **extra)


def frames(before_rows, after_rows):
    return to_dataframe(before_rows, with_samples=True), to_dataframe(after_rows, with_samples=True)


def test_clear_speedup_is_significant_and_change_is_exact():
    before, after = frames([row(10.0)], [row(8.0, torch="2.5.1")])
    result = compare_runs(before, after)
    cell = result.cells.iloc[0]
    assert (cell.before_ms, cell.after_ms) == (pytest.approx(10.0), pytest.approx(8.0))
    assert cell.change_pct == pytest.approx(-20.0)
    assert cell.ratio == pytest.approx(1.25)
    assert 1.0 < cell.ratio_ci95_low <= 1.25 <= cell.ratio_ci95_high < 1.3
    assert cell.change_ci95_low_pct <= -20.0 <= cell.change_ci95_high_pct < 0
    assert cell.significant and (cell.n_before, cell.n_after) == (50, 50)
    assert (cell.before_torch, cell.after_torch) == ("2.4.0", "2.5.1")
    assert result.unmatched.empty and result.stat == "median"


def test_no_change_is_not_significant():
    before, after = frames([row(10.0)], [row(10.0)])
    cell = compare_runs(before, after).cells.iloc[0]
    assert cell.change_pct == pytest.approx(0.0)
    assert cell.ratio_ci95_low < 1.0 < cell.ratio_ci95_high
    assert not cell.significant


def test_slowdown_and_mean_statistic():
    before, after = frames([row(10.0)], [row(12.5)])
    cell = compare_runs(before, after, stat="mean").cells.iloc[0]
    assert cell.change_pct == pytest.approx(25.0) and cell.significant and cell.ratio == pytest.approx(0.8)


def test_mean_statistic_reads_the_mean_not_the_median():
    skewed = fixture_samples(10.0, 50)[:-1] + [0.5]  # one 500 ms call: the mean moves, the median hardly
    before, after = frames([row(10.0)], [row(10.0, samples_s=skewed)])
    median = compare_runs(before, after).cells.iloc[0]
    mean = compare_runs(before, after, stat="mean").cells.iloc[0]
    assert abs(median.change_pct) < 1.0 and mean.change_pct > 90.0
    assert (mean.ratio, mean.significant) == (median.ratio, median.significant)  # the CI is always of medians


def test_between_process_interval_when_both_runs_have_repeats():
    """3 processes a side whose medians differ by +-5 %: the interval is a t-interval over the
    processes, wider than the bootstrap of the same samples pooled into one process."""
    before_rows = [row(ms, repeat=r) for r, ms in enumerate((9.5, 10.0, 10.5))]
    after_rows = [row(ms, repeat=r) for r, ms in enumerate((7.6, 8.0, 8.4))]
    pooled = [row(10.0, samples_s=[v for r in before_rows for v in r.samples_s]),
              row(8.0, samples_s=[v for r in after_rows for v in r.samples_s])]
    between = compare_runs(*frames(before_rows, after_rows)).cells.iloc[0]
    within = compare_runs(*frames(pooled[:1], pooled[1:])).cells.iloc[0]
    assert (between.n_before, between.n_after) == (within.n_before, within.n_after) == (150, 150)
    assert between.ratio == pytest.approx(1.25) and within.ratio == pytest.approx(1.25)
    assert between.ratio_ci95_low < 1.25 < between.ratio_ci95_high
    width = between.ratio_ci95_high - between.ratio_ci95_low
    assert width > 2 * (within.ratio_ci95_high - within.ratio_ci95_low)
    assert between.significant  # 25 % faster is still clear with this much process-to-process spread


def test_unmatched_cells_are_listed_with_a_reason():
    before, after = frames(
        [row(10.0), row(20.0, batch_size=4), row(5.0, model="resnet", status="ok")],
        [row(8.0), row(9.0, configuration="reduce-overhead"), row(5.0, model="resnet", status="oom")])
    result = compare_runs(before, after)
    assert result.cells[["model", "batch_size", "configuration"]].values.tolist() == [["vit", 1, "default"]]
    assert result.unmatched[["model", "batch_size", "configuration", "reason"]].values.tolist() == [
        ["resnet", 1, "default", "not_ok"], ["vit", 1, "reduce-overhead", "only_after"],
        ["vit", 4, "default", "only_before"]]  # codes: the words are the page's
    assert unmatched_table(result)["Why not compared"].tolist() == ["before: measured; after: OOM", "only in after",
                                                                    "only in before"]


def test_bad_arguments_are_rejected():
    before, after = frames([row(10.0)], [row(8.0)])
    with pytest.raises(ValueError, match="stat:"):
        compare_runs(before, after, stat="p90")
    with pytest.raises(ValueError, match="before_df: no samples_s"):
        compare_runs(to_dataframe([row(10.0)]), after)
    two_labels = to_dataframe([row(8.0), row(9.0, label="A100")], with_samples=True)  # repeats of one cell combine
    with pytest.raises(ValueError, match="after_df: cell .* appears twice"):
        compare_runs(before, two_labels)


def test_chart_has_one_bar_per_cell_and_highlights_significant_ones():
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba
    from matplotlib.figure import Figure

    before, after = frames([row(10.0), row(10.0, model="beit"), row(10.0, model="resnet")],
                           [row(8.0), row(10.0, model="beit"), row(12.0, model="resnet")])
    fig = comparison_chart(compare_runs(before, after))
    assert isinstance(fig, Figure) and plt.get_fignums() == []  # not registered with pyplot: no double display
    bars = fig.axes[0].patches
    assert [round(b.get_width(), 6) for b in bars] == [-20.0, 0.0, 20.0]  # sorted by change
    assert [b.get_facecolor() for b in bars] == [to_rgba(c) for c in ("tab:green", "lightgray", "tab:red")]
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][0] == "ViT-B/16, batch 1, default"
    assert fig.axes[0].get_title() == "before → after (same hardware, torch and variant)"
    fig.savefig(io.BytesIO(), format="png")


def test_runs_differing_in_one_setting_are_matched_cell_by_cell_and_titled_by_it():
    variant = row(5.0, fullgraph=True)
    before, after = frames([row(10.0)], [variant])
    result = compare_runs(before, after)
    cell = result.cells.iloc[0]
    assert cell.change_pct == pytest.approx(-50.0) and cell.significant
    assert (cell.before_fullgraph, cell.after_fullgraph) == (False, True)
    assert comparison_chart(result).axes[0].get_title() == "graph breaks allowed → fullgraph"
    newer = frames([row(10.0)], [row(9.0, torch="2.6.0")])
    assert comparison_chart(compare_runs(*newer)).axes[0].get_title() == "torch 2.4.0 → torch 2.6.0"


def test_rerun_agreement_counts_figures_inside_the_other_runs_interval():
    from bench_utils.results.compare import rerun_agreement

    def run(eager_ms, compiled_ms):
        return to_dataframe([make_row("vit", 1, "eager", eager_ms), make_row("vit", 1, "default", compiled_ms)])

    same = rerun_agreement(run(10.0, 5.0), run(10.0, 5.0))
    assert same["figure"].tolist() == ["eager median", "speedup"]
    assert same["run2_in_run1"].all() and same["run1_in_run2"].all()
    moved = rerun_agreement(run(10.0, 5.0), run(13.0, 5.0)).set_index("figure")
    assert not moved.loc["eager median", "run2_in_run1"] and not moved.loc["speedup", "run1_in_run2"]
    assert moved.loc["speedup", "run2"] == pytest.approx(2.6)


def test_the_compared_cells_read_in_words_and_rounded_figures():
    # a page shows words and rounded numbers, never a DataFrame's column names (change_ci95_low_pct)
    before, after = frames([row(10.0), row(10.0, model="resnet")], [row(8.0, torch="2.5.1"), row(10.0, model="resnet",
                                                                                               torch="2.5.1")])
    result = compare_runs(before, after)
    shown = comparison_table(result)
    assert not any("_" in column for column in shown.columns)
    vit = shown[shown["Model"] == "ViT-B/16"].iloc[0]
    assert (vit["Before, median (ms)"], vit["After, median (ms)"], vit["Change (negative: faster)"]) == (
        "10.0", "8.00", "−20.0%")
    assert vit["95% interval of the change"].startswith("−") and vit["Significant?"] == "yes"
    # none reads "±0%", as on every page
    assert shown[shown["Model"] == "ResNet-50"].iloc[0]["Change (negative: faster)"] == "±0%"
    assert runs_text(result, "/a/old/results.jsonl", "/b/new/results.jsonl") == (
        "Before: old/results.jsonl (NVIDIA H100; torch 2.4.0); after: new/results.jsonl (NVIDIA H100; torch 2.5.1).")


def test_runs_on_different_hardware_say_so():
    # an H100 run against an A100 run of the same torch: the change is the machine's, and the page says it
    on_a100 = make_row(model="vit", batch_size=1, configuration="default", ms=14.0, status="ok", repeat=0, label="A100",
                       n=50, spread=0.01, size="full", device="cuda", env={"device_name": "NVIDIA A100", "torch": "2.4.0"})
    result = compare_runs(*frames([row(10.0)], [on_a100]))
    assert runs_text(result, "h100/results.jsonl", "a100/results.jsonl") == (
        "Before: h100/results.jsonl (NVIDIA H100; torch 2.4.0); after: a100/results.jsonl (NVIDIA A100; torch 2.4.0)."
        " They ran on different hardware: a change is the machine's as much as the software's.")
    assert comparison_chart(result).axes[0].get_title() == "NVIDIA H100 → NVIDIA A100"
