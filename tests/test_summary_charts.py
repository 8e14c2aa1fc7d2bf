"""Charts across runs: speedup per hardware label, and ours beside the guide's published speedups."""

import matplotlib

matplotlib.use("Agg")  # tests only: no display

from bench_utils import summary_charts  # noqa: E402
from bench_utils.results import to_dataframe  # noqa: E402

from test_charts import _texts  # noqa: E402
from test_tables import make_row  # noqa: E402


def test_cross_label_chart_has_a_panel_per_mode_and_batch_and_a_bar_per_label():
    both = to_dataframe([make_row("vit", 1, "default", compiled_ms=8.0, eager_ms=10.0, label=label)
                         for label in ("A100", "T4")] +
                        [make_row("vit", 4, "default", compiled_ms=5.0, eager_ms=10.0, label="A100")])
    fig = summary_charts.cross_label_chart(both)
    assert len(fig.axes) == 2  # default x batch 1, 4
    assert sorted(p.get_width() for p in fig.axes[0].patches) == [1.25, 1.25]
    assert [p.get_width() for p in fig.axes[1].patches] == [2.0]


def test_cross_label_chart_splits_a_label_measured_with_two_torch_versions():
    rows = [make_row("vit", 1, "default", compiled_ms=8.0, eager_ms=10.0, label="A100",
                     env={"device_name": "A100", "torch": version}) for version in ("2.1", "2.5")]
    rows.append(rows[-1])  # the same file loaded twice: one bar, not two
    ax = summary_charts.cross_label_chart(to_dataframe(rows)).axes[0]
    assert len(ax.patches) == 2
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["A100 · torch 2.1", "A100 · torch 2.5"]


def test_reference_chart_puts_our_speedup_beside_each_guide_gpu():
    from bench_utils.reference import compare_with_reference

    beside = compare_with_reference(to_dataframe([make_row("vit", 1, "default", compiled_ms=8.0, eager_ms=10.0)]))
    ax = summary_charts.reference_chart(beside).axes[0]
    widths = sorted(round(p.get_width(), 3) for p in ax.patches)
    # ours 1.25; the guide's torch 2.0.1 ViT batch-1 speedups: A100 9.325/7.584, V100 and T4 from the CSV
    assert 1.25 in widths and round(9.325 / 7.584, 3) in widths and len(widths) == 4
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["ours: CPU, default", "guide: A100",
                                                                   "guide: V100", "guide: T4"]
    assert any("no successful" in text for text in _texts(summary_charts.reference_chart(beside.iloc[0:0])))
