import io

import pytest

from bench_utils.compare import compare_runs, comparison_chart
from bench_utils.results import BenchResult, to_dataframe
from bench_utils.stats import summarize

NOISE_S = [0.0001 * ((i % 5) - 2) for i in range(50)]  # -0.2 .. +0.2 ms, symmetric, median 0


def row(center_ms, model="vit", batch_size=1, mode="default", status="ok", torch="2.4.0"):
    samples = [center_ms / 1000 + n for n in NOISE_S] if status == "ok" else []
    summary = summarize(samples) if samples else None
    return BenchResult(label="H100", model=model, checkpoint="x", task="image-classification", size="full",
                       batch_size=batch_size, mode=mode, fullgraph=False, dtype="float32", device="cuda",
                       settings="s", status=status, samples_s=samples,
                       latency_ms_median=summary.median_ms if summary else None,
                       latency_ms_mean=summary.mean_ms if summary else None,
                       env={"device_name": "NVIDIA H100", "torch": torch})


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


def test_unmatched_cells_are_listed_with_a_reason():
    before, after = frames(
        [row(10.0), row(20.0, batch_size=4), row(5.0, model="resnet", status="ok")],
        [row(8.0), row(9.0, mode="reduce-overhead"), row(5.0, model="resnet", status="oom")])
    result = compare_runs(before, after)
    assert result.cells[["model", "batch_size", "mode"]].values.tolist() == [["vit", 1, "default"]]
    assert result.unmatched[["model", "batch_size", "mode", "reason"]].values.tolist() == [
        ["resnet", 1, "default", "status before=ok, after=oom"],
        ["vit", 1, "reduce-overhead", "only in after"],
        ["vit", 4, "default", "only in before"]]


def test_bad_arguments_are_rejected():
    before, after = frames([row(10.0)], [row(8.0)])
    with pytest.raises(ValueError, match="stat:"):
        compare_runs(before, after, stat="p90")
    with pytest.raises(ValueError, match="before_df: no samples_s"):
        compare_runs(to_dataframe([row(10.0)]), after)
    with pytest.raises(ValueError, match="after_df: cell .* appears twice"):
        compare_runs(before, to_dataframe([row(8.0), row(9.0)], with_samples=True))


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
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][0] == "vit bs=1 default (full)"
    assert fig.axes[0].get_title() == "before → after (same torch and variant)"
    fig.savefig(io.BytesIO(), format="png")


def test_runs_differing_in_one_setting_are_matched_cell_by_cell_and_titled_by_it():
    variant = BenchResult.from_dict({**row(5.0).__dict__, "dtype": "bfloat16", "autocast": True,
                                     "channels_last": True})
    before, after = frames([row(10.0)], [variant])
    result = compare_runs(before, after)
    cell = result.cells.iloc[0]
    assert cell.change_pct == pytest.approx(-50.0) and cell.significant
    assert (cell.before_variant, cell.after_variant) == ("float32", "bfloat16 autocast, channels_last")
    assert comparison_chart(result).axes[0].get_title() == "float32 → bfloat16 autocast, channels_last"
    newer = frames([row(10.0)], [row(9.0, torch="2.6.0")])
    assert comparison_chart(compare_runs(*newer)).axes[0].get_title() == "torch 2.4.0 → torch 2.6.0"
