"""The top of a run's page: header, then the verdict table, legend, page-wide caveats and links, as HTML
from plain text (escaped)."""

from bench_utils.report.page import CELLS_CSV, folded_figures, top_of_page
from bench_utils.results.aggregate import to_dataframe
from conftest import make_row, speedup_rows


def test_header_comes_first_then_the_verdict_legend_caveats_and_links():
    html = top_of_page(to_dataframe(speedup_rows("vit", 1, 4.0, 2.0, compiled=dict(compile_s=3.0))))
    order = [html.index(part) for part in ("bench-header", "Should you compile?", "bench-verdict", "bench-legend",
                                           "Random weights", f'href="{CELLS_CSV}"')]
    assert order == sorted(order)
    assert "Compile — compile (default mode): 2.00× faster" in html and "pays back after 1,500 calls" in html
    assert "batch 1, float32, CPU" in html  # for what: on the first screen, beside the answer


def test_text_from_the_rows_is_escaped():
    rows = [make_row("vit", 1, "eager", 2.0, label="<b>lab</b>")]
    html = top_of_page(to_dataframe(rows))
    assert "<b>lab</b>" not in html and "&lt;b&gt;lab&lt;/b&gt;" in html


def test_figures_fold_into_a_closed_details_grid():
    from matplotlib.figure import Figure

    html = folded_figures([Figure(figsize=(2, 1)), Figure(figsize=(2, 1))], "per cell")
    assert html.startswith("<details><summary>per cell</summary>") and html.count("<img") == 2
