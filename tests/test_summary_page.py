"""The summary page's table: our speedups beside the guide's, one row per model and batch size."""

from bench_utils.report.summary_page import guide_comparison, run_headers
from bench_utils.results import reference
from bench_utils.results.aggregate import to_dataframe
from conftest import make_row, speedup_rows


def test_guide_comparison_puts_ours_beside_each_guide_gpu():
    df = to_dataframe(speedup_rows("vit", 1, 4.0, 2.0) + speedup_rows("resnet", 1, 4.0, 2.0))
    table = guide_comparison(reference.compare_with_reference(df))
    assert list(table["Model"]) == ["ViT-B/16", "ResNet-50"]
    assert list(table.columns[:3]) == ["Model", "Batch (images)", "Ours: CPU, default (×, 95%)"]
    assert {"Guide: A100 (×)", "Guide: V100 (×)", "Guide: T4 (×)"} <= set(table.columns)
    assert table.loc[0, "Ours: CPU, default (×, 95%)"].startswith("2.00× (")
    assert run_headers(df).loc[0, "Run"] == "CPU"


def test_the_fastest_configurations_mean_stands_beside_the_guides_over_the_same_models():
    """Our geometric mean beside the guide's published one per GPU, over the same models: ViT-B/16 and
    ResNet-50 at batch 1 are in every guide table; OwlViT at batch 4 is in none (out of memory)."""
    from bench_utils.report.summary_page import best_configurations, geometric_mean

    published = reference.guide_speedups()
    df = to_dataframe(speedup_rows("vit", 1, 4.0, 2.0) + speedup_rows("resnet", 1, 3.0, 2.0))
    table = best_configurations(df).set_index("Model")
    for gpu in reference.GPUS:
        column = f"Guide {gpu}, default (×)"
        vit, resnet = published[("vit", 1, gpu)], published[("resnet", 1, gpu)]
        assert table.loc["ViT-B/16", column] == f"{vit:.2f}×"
        assert table.loc["Geometric mean", column] == f"{geometric_mean([vit, resnet]):.2f}×"
    assert table.loc["Geometric mean", "Its speedup (×)"] == f"{geometric_mean([2.0, 1.5]):.2f}×"
    assert ("owlvit", 4, "A100") not in published
    rows = speedup_rows("vit", 4, 4.0, 2.0) + speedup_rows("owlvit", 4, 4.0, 2.0)
    mean = best_configurations(to_dataframe(rows)).set_index("Model").loc["Geometric mean"]
    assert mean["Guide A100, default (×)"] == "—" and mean["Its speedup (×)"] == "2.00×"  # not over fewer models


def test_plain_compiles_mean_is_over_the_same_models_or_none():
    """ResNet-50's plain `default` ran out of memory while another configuration of it is recommended:
    the row's means would cover different models, so plain's says none rather than ViT's alone."""
    from bench_utils.report.summary_page import best_configurations

    rows = speedup_rows("vit", 1, 4.0, 2.0) + speedup_rows("resnet", 1, 3.0, 2.0, configuration="default+freezing")
    rows += [make_row("resnet", 1, "default", status="oom", error="oom: fixture")]
    table = best_configurations(to_dataframe(rows)).set_index("Model")
    assert table.loc["ViT-B/16", "Plain torch.compile (×)"] == "2.00×"
    assert table.loc["ResNet-50", "Plain torch.compile (×)"] == "OOM"  # why there is no figure, not "—"
    assert table.loc["Geometric mean", "Plain torch.compile (×)"] == "—"
    assert table.loc["Geometric mean", "Its speedup (×)"] == f"{(2.0 * 1.5) ** 0.5:.2f}×"


def test_a_plain_compile_the_budget_left_out_reads_skipped():
    """The fit left `default` out of a model (a skipped row, as on the Zen 5's report of 2026-12-02):
    its cell says SKIPPED, as the run's own page does, and the mean over the models leaves it none."""
    from bench_utils.report.summary_page import best_configurations

    rows = speedup_rows("vit", 1, 4.0, 2.0) + speedup_rows("resnet", 1, 3.0, 2.0, configuration="default+freezing")
    rows += [make_row("resnet", 1, "default", status="skipped", error="left out to fit the 9-min budget")]
    table = best_configurations(to_dataframe(rows)).set_index("Model")
    assert table.loc["ResNet-50", "Plain torch.compile (×)"] == "SKIPPED"
    assert table.loc["Geometric mean", "Plain torch.compile (×)"] == "—"


def test_a_reduce_overhead_choice_stands_beside_the_guides_reduce_overhead_figure():
    """The guide's default-mode columns are not reduce-overhead's: its own reduce-overhead table (A100,
    T4) is set beside a choice in that mode."""
    from bench_utils.report.summary_page import GUIDE_SAME_MODE, best_configurations

    published = reference.guide_speedups("reduce-overhead")
    rows = speedup_rows("resnet", 1, 4.0, 2.0, configuration="reduce-overhead", device="cuda")
    table = best_configurations(to_dataframe(rows)).set_index("Model")
    assert table.loc["ResNet-50", GUIDE_SAME_MODE] == (
        f"reduce-overhead: A100 {published[('resnet', 1, 'A100')]:.2f}×, T4 {published[('resnet', 1, 'T4')]:.2f}×")
    assert table.loc["Geometric mean", GUIDE_SAME_MODE] == "—"
    plain = best_configurations(to_dataframe(speedup_rows("resnet", 1, 4.0, 2.0)))
    assert GUIDE_SAME_MODE not in plain.columns  # no choice in another mode the guide timed: no column
