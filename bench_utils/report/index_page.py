"""reports/index.html: one line per profile (hardware, weights, cells ok / failed / missing, best
speedup) linking its page, and a flag on every profile whose notebook failed. No torch."""

from __future__ import annotations

import datetime as dt
import html
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..results.aggregate import to_dataframe
from ..results.rows import read_results
from .verdict import verdict_short

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:72rem;margin:2rem auto;
padding:0 1rem;color:#1f2328}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #d0d7de;padding:.45rem .6rem;
text-align:left}th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
.failed{color:#b42318;font-weight:600}.ok{color:#1a7f37;font-weight:600}.random{color:#9a6700;font-weight:600}
small{color:#57606a}
"""


@dataclass(frozen=True)
class ProfileLine:
    label: str
    page: str  # link relative to index.html
    params: str  # parameters file name
    error: str  # "" when the notebook ran through
    expected_cells: int
    rows: list  # BenchResult rows read from the profile's results file

    @cached_property
    def frame(self):
        """The rows as cells (aggregate.to_dataframe), built once: what the counts, speedups and verdict
        speak of."""
        return to_dataframe(self.rows)


def _cell_counts(line: ProfileLine) -> tuple[int, int, int]:
    ok = int((line.frame["status"] == "ok").sum())
    return ok, len(line.frame) - ok, max(line.expected_cells - len(line.frame), 0)


def _hardware(rows) -> str:
    names = sorted({row.env.get("device_name", "") for row in rows if row.env} - {""})
    return ", ".join(names) or "—"


def _weights(rows) -> str:
    used = sorted({row.weights for row in rows if row.weights})
    if not used:
        return "—"
    text = " + ".join(used)
    return f'<span class="random">{text}</span>' if "random" in used else text


def _speedups(frame) -> str:
    compiled = frame[(frame["status"] == "ok") & (frame["mode"] != "eager")]
    values = compiled["speedup"].dropna()
    values = values[values > 0]
    if values.empty:
        return "—"
    return f"median ×{values.median():.2f}, best ×{values.max():.2f}"


CHART_WIDTH_PX, BAR_PX = 180, 9  # the index's per-profile speedup chart


def speedup_svg(frame) -> str:
    """A small inline SVG: one bar per successful compiled cell, its speedup against a line at 1x
    (green: significantly faster, red: significantly slower, grey: not significant). Inline, so the
    index needs no image files and no network."""
    cells = frame[(frame["status"] == "ok") & (frame["mode"] != "eager") & (frame["speedup"] > 0)]
    if cells.empty:
        return "—"
    scale = CHART_WIDTH_PX / max(2.0, float(cells["speedup"].max()) * 1.05)  # px per 1x
    bars = []
    for i, (_, cell) in enumerate(cells.iterrows()):
        colour = "#9aa4ae" if not cell["significant"] else "#1a7f37" if cell["speedup"] > 1 else "#b42318"
        name = f"{cell['model']} bs={cell['batch_size']} {cell['mode']} {cell['variant']}: x{cell['speedup']:.2f}"
        bars.append(f'<rect x="0" y="{i * (BAR_PX + 2)}" width="{cell["speedup"] * scale:.1f}" height="{BAR_PX}" '
                    f'fill="{colour}"><title>{html.escape(name)}</title></rect>')
    height = len(cells) * (BAR_PX + 2)
    return (f'<svg class="speedups" width="{CHART_WIDTH_PX}" height="{height}" role="img" '
            f'aria-label="speedup per compiled cell">{"".join(bars)}'
            f'<line x1="{scale:.1f}" x2="{scale:.1f}" y1="0" y2="{height}" stroke="#1f2328" stroke-width="1">'
            f'<title>1x: as fast as eager</title></line></svg>')


def _row_html(line: ProfileLine) -> str:
    ok, failed, missing = _cell_counts(line)
    state = (f'<span class="failed">failed: {html.escape(line.error)}</span>' if line.error
             else '<span class="ok">complete</span>' if not failed and not missing
             else f'<span class="failed">{failed} failed, {missing} missing</span>')
    return (f'<tr><td><a href="{html.escape(line.page)}">{html.escape(line.label)}</a><br>'
            f"<small>{html.escape(line.params)}</small></td><td>{html.escape(_hardware(line.rows))}</td>"
            f"<td>{_weights(line.rows)}</td><td class=num>{ok}</td><td class=num>{failed}</td>"
            f"<td class=num>{missing}</td><td>{_speedups(line.frame)}<br>{speedup_svg(line.frame)}</td>"
            f"<td>{html.escape(verdict_short(line.frame))}</td>"
            f"<td>{state}</td></tr>")


def load_rows(results: Path) -> list:
    return read_results(results).rows if results.exists() else []


def write_index(lines: list[ProfileLine], path: Path, summary_page: str | None, summary_error: str = "") -> Path:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = "\n".join(_row_html(line) for line in lines)
    summary = ""
    if summary_page:
        flag = f' <span class="failed">(failed: {html.escape(summary_error)})</span>' if summary_error else ""
        summary = f'<p><a href="{html.escape(summary_page)}">Compare all runs side by side</a>{flag}</p>'
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>torch.compile benchmark reports</title>
<style>{_STYLE}</style></head><body>
<h1>torch.compile vs eager: benchmark reports</h1>
<p>Latency of Hugging Face Transformers vision models in eager mode and under <code>torch.compile</code>,
one page per hardware profile. Speedup = eager median / compiled median, each mode timed in processes of its own;
the bars show each compiled cell's speedup against a line at 1× (green: significantly faster, red: significantly
slower, grey: not significant; hover for the cell).
Rows built with <span class="random">random</span> weights have the checkpoint's architecture but not its weights.</p>
<table><thead><tr><th>Profile</th><th>Hardware</th><th>Weights</th><th>OK cells</th><th>Failed</th>
<th>Missing</th><th>Speedup</th><th>Verdict (see the page)</th><th>State</th></tr></thead><tbody>
{body}
</tbody></table>
{summary}
<p><small>Generated {stamp} by <code>python -m bench_utils report</code>.</small></p>
</body></html>
"""
    path.write_text(page, encoding="utf-8")
    return path
