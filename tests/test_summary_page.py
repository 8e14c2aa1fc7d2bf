"""The summary page's table: our speedups beside the guide's, one row per model and batch size."""

from bench_utils.report.summary_page import guide_comparison, run_headers
from bench_utils.results import reference
from bench_utils.results.aggregate import to_dataframe
from conftest import speedup_rows


def test_guide_comparison_puts_ours_beside_each_guide_gpu():
    df = to_dataframe(speedup_rows("vit", 1, 4.0, 2.0) + speedup_rows("resnet", 1, 4.0, 2.0))
    table = guide_comparison(reference.compare_with_reference(df))
    assert list(table["Model"]) == ["ViT-B/16", "ResNet-50"]
    assert list(table.columns[:3]) == ["Model", "Batch (images)", "Ours: CPU, default (×, 95%)"]
    assert {"Guide: A100 (×)", "Guide: V100 (×)", "Guide: T4 (×)"} <= set(table.columns)
    assert table.loc[0, "Ours: CPU, default (×, 95%)"].startswith("2.00× (")
    assert run_headers(df).loc[0, "Run"] == "CPU"
