"""The index page's per-profile speedup chart: one inline SVG bar per compiled cell, coloured by
significance, against a line at 1x."""

import re

from bench_utils.report import index_page
from bench_utils.results.aggregate import to_dataframe
from conftest import speedup_rows


def _bars(svg: str) -> list[tuple[float, str, str]]:
    return [(float(width), fill, title) for width, fill, title in
            re.findall(r'<rect [^>]*width="([\d.]+)"[^>]*fill="(#\w+)"><title>([^<]*)</title>', svg)]


def test_one_bar_per_compiled_cell_scaled_against_the_one_x_line():
    frame = to_dataframe(speedup_rows("vit", 1, 4.0, 2.0) + speedup_rows("resnet", 1, 3.0, 4.0)
                         + speedup_rows("resnet", 4, 4.0, 3.2, significant=False))
    svg = index_page.speedup_svg(frame)
    scale = index_page.CHART_WIDTH_PX / (2.0 * 1.05)  # px per 1x: the largest speedup is 2.0
    bars = _bars(svg)
    assert [title.split(":")[0] for _, _, title in bars] == ["vit bs=1 default float32", "resnet bs=1 default float32",
                                                             "resnet bs=4 default float32"]
    assert [fill for _, fill, _ in bars] == ["#1a7f37", "#b42318", "#9aa4ae"]  # faster, slower, not significant
    assert bars[0][0] == round(2.0 * scale, 1) and bars[1][0] == round(0.75 * scale, 1)
    assert f'x1="{scale:.1f}"' in svg and "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_no_successful_compiled_cell_is_a_dash():
    frame = to_dataframe(speedup_rows("vit", 1, 4.0, 2.0)[:1])  # the eager cell alone
    assert index_page.speedup_svg(frame) == "—"
