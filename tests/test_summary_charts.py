"""Charts across runs: speedup per hardware label, and ours beside the guide's published speedups."""

import dataclasses

import matplotlib

matplotlib.use("Agg")  # tests only: no display

import pytest  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

from bench_utils.report import summary_charts  # noqa: E402
from bench_utils.results.aggregate import to_dataframe  # noqa: E402
from conftest import figure_texts, speedup_rows  # noqa: E402


def test_cross_label_chart_has_a_panel_per_mode_and_batch_and_a_bar_per_label():
    rows = [row for label in ("A100", "T4") for row in speedup_rows("vit", 1, 10.0, 8.0, label=label)]
    rows += speedup_rows("vit", 4, 10.0, 5.0, label="A100")
    fig = summary_charts.cross_label_chart(to_dataframe(rows))
    assert len(fig.axes) == 2  # default x batch 1, 4
    assert sorted(p.get_width() for p in fig.axes[0].patches) == pytest.approx([1.25, 1.25])
    assert [p.get_width() for p in fig.axes[1].patches] == pytest.approx([2.0])


def test_cross_label_chart_splits_a_label_measured_with_two_torch_versions():
    rows = [row for version, compiled_ms in (("2.1", 8.0), ("2.5", 5.0))
            for row in speedup_rows("vit", 1, 10.0, compiled_ms, label="A100",
                                    env={"device_name": "A100", "torch": version})]
    rows += rows[-2:]  # the same file loaded twice: one bar, not two
    ax = summary_charts.cross_label_chart(to_dataframe(rows)).axes[0]
    assert [p.get_width() for p in ax.patches] == pytest.approx([1.25, 2.0])  # each against its own eager
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["A100 · torch 2.1", "A100 · torch 2.5"]
    assert ax.get_legend().get_title().get_text() == "run"  # a word, not the DataFrame's column ("label")


def test_a_cross_label_panel_keeps_its_room_beside_long_model_names_and_the_legend():
    rows = [row for label in ("CPU full-size, torch 2.11.0+cu130", "H200 race")
            for row in speedup_rows("deeplabv3-mobilenet", 1, 10.0, 8.0, label=label)]
    fig = summary_charts.cross_label_chart(to_dataframe(rows))
    FigureCanvasAgg(fig).draw()  # constrained layout places the panels when drawn
    panel_in = fig.axes[0].get_position().width * fig.get_figwidth()
    assert panel_in > 3.5  # at 5 in a figure, the names and the legend left the bars about 1.7 in


def test_a_configuration_not_supported_on_one_run_is_grey_words_not_a_red_failure():
    """A GPU run ran bfloat16, a CPU without it could not: the CPU's missing bar says so in grey, an
    out-of-memory cell in red."""
    from conftest import make_row
    from bench_utils.report.grouped_bars import FAILED_COLOR, NOT_HERE, NOT_HERE_COLOR

    rows = speedup_rows("vit", 1, 10.0, 5.0, configuration="default+bf16-autocast", label="A100")
    rows += speedup_rows("resnet", 1, 10.0, 5.0, configuration="default+bf16-autocast", label="A100")
    rows += [make_row("vit", 1, "default+bf16-autocast", status="unsupported", label="CPU",
                      error="this CPU has no native bfloat16 (AVX2)"),
             make_row("resnet", 1, "eager", 20.0, label="CPU"),
             make_row("resnet", 1, "default+bf16-autocast", status="oom", label="CPU", error="oom: fixture")]
    rows += speedup_rows("vit", 1, 20.0, 10.0, label="CPU")  # the CPU run has a figure of its own
    fig = summary_charts.cross_label_chart(to_dataframe(rows))
    ax = next(ax for ax in fig.axes if ax.get_title().startswith("default+bf16-autocast"))
    colours = {text.get_text(): text.get_color() for text in ax.texts}
    assert colours == {NOT_HERE: NOT_HERE_COLOR, "OOM": FAILED_COLOR}


def test_a_cell_the_budget_left_out_is_grey_words_too():
    """SKIPPED (the fit left the configuration out of the race) is no failure: grey, as NOT_HERE."""
    from conftest import make_row
    from bench_utils.report.grouped_bars import FAILED_COLOR, NOT_HERE_COLOR

    rows = speedup_rows("vit", 1, 10.0, 5.0, configuration="default", label="A100")
    rows += [make_row("vit", 1, "eager", 20.0, label="CPU"),
             make_row("vit", 1, "default", status="skipped", label="CPU", error="left out by the budget"),
             make_row("resnet", 1, "eager", 20.0, label="CPU"),
             make_row("resnet", 1, "default", status="timeout", label="CPU", error="timeout: fixture")]
    rows += speedup_rows("resnet", 1, 10.0, 5.0, configuration="default", label="A100")
    rows += speedup_rows("vit", 1, 20.0, 10.0, configuration="default+freezing", label="CPU")  # a CPU series
    ax = next(ax for ax in summary_charts.cross_label_chart(to_dataframe(rows)).axes
              if ax.get_title() == "default, batch size 1")
    assert {text.get_text(): text.get_color() for text in ax.texts} == {"SKIPPED": NOT_HERE_COLOR,
                                                                          "TIMEOUT": FAILED_COLOR}


def test_reference_chart_puts_our_speedup_beside_each_guide_gpu():
    from bench_utils.results.reference import compare_with_reference

    beside = compare_with_reference(to_dataframe(speedup_rows("vit", 1, 10.0, 8.0)))
    ax = summary_charts.reference_chart(beside).axes[0]
    widths = sorted(round(p.get_width(), 3) for p in ax.patches)
    # ours 1.25; the guide's torch 2.0.1 ViT batch-1 speedups: A100 9.325/7.584, V100 and T4 from the CSV
    assert 1.25 in widths and round(9.325 / 7.584, 3) in widths and len(widths) == 4
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["ours: CPU, default", "guide: A100",
                                                                   "guide: V100", "guide: T4"]
    assert any("no successful" in text for text in figure_texts(summary_charts.reference_chart(beside.iloc[0:0])))


def test_reference_chart_makes_room_for_long_run_names(recwarn):
    # two runs of one profile are named apart ("CPU, torch 2.11.0+cu130": aggregate.labels_apart); the
    # legend's names once squeezed the panel to nothing (matplotlib: "axes sizes collapsed to zero")
    import io

    from bench_utils.results.reference import compare_with_reference

    rows = [dataclasses.replace(r, label=f"CPU full-size, torch {torch}")
            for torch in ("2.11.0+cu130", "2.14.1+cu130") for r in speedup_rows("vit", 1, 10.0, 8.0)]
    fig = summary_charts.reference_chart(compare_with_reference(to_dataframe(rows)))
    fig.savefig(io.BytesIO(), format="png")
    assert not [w for w in recwarn if "collapsed" in str(w.message)]
    assert fig.axes[0].get_position().width > 0.3
