"""The top of a run's page, in the order a reader needs it: the header (run, machine, software, date,
weights), the verdict table in words with its legend, the caveats that hold for every model, and
links to the cells as CSV and to the method. Built from plain text (header.py, verdict.py); page_html.escape
is where that text becomes HTML. No torch.
"""

from __future__ import annotations

import base64
import io

import pandas as pd

from .display import alt_text
from .header import PageHeader, page_header
from .verdict import Rules, legend, page_caveats, race_table, short_legend, verdict_table
from .page_html import escape  # the one place text becomes HTML

CELLS_CSV = "cells.csv"  # written next to each page, linked from its top
CELLS_DICTIONARY = "cells-columns.csv"  # cells.csv's data dictionary: each column's unit and meaning
METHOD_LINK = "../method.html"  # docs/method.md rendered next to reports/index.html by `report`
INDEX_LINK = "../index.html"  # every profile's page and the summary sit one folder below the index


def header_html(header: PageHeader) -> str:
    facts = " · ".join(f"<span>{escape(fact)}</span>" for fact in header.facts[1:])
    return (f'<header class="bench-header"><h1>{escape(header.label)}: torch.compile against eager</h1>'
            f'<p class="bench-facts">{facts}</p></header>')


def verdict_html(df, studies: list[str], rules: Rules, first_pass: tuple[int, int] | None = None) -> str:
    """The verdict table (pandas escapes its cells), a short legend, the page-wide caveats (`first_pass`:
    the first-pass rounds left and in all, verdict.page_caveats) and `studies`' verdict lines (plain
    text, one per study); the race behind each answer and the whole legend folded below, there for
    whoever asks."""
    table = verdict_table(df, rules)
    if table.empty:
        return "<h2>Should you compile?</h2><p>No measured cells yet: no verdict.</p>"
    body = table.to_html(index=False, escape=True, border=0, classes="bench-verdict", na_rep="—")
    notes = [f'<p class="bench-legend">{escape(short_legend(rules))}</p>']
    notes += [f'<p class="bench-caveat">⚠ {escape(caveat)}</p>' for caveat in page_caveats(df, first_pass, rules)]
    notes += [f"<p>{escape(line)}</p>" for line in studies]
    race = race_table(df, rules).to_html(index=False, escape=True, border=0, classes="bench-race", na_rep="—")
    folded = ("<details><summary>The race behind each answer: the runner-up, the others, why the choice is faster"
              f"</summary>{race}</details><details><summary>How the answers are read</summary>"
              f'<p class="bench-legend-full">{escape(legend(rules))}</p></details>')
    return "<h2>Should you compile?</h2>" + body + "".join(notes) + folded


def links_html(reproduce: str) -> str:
    """The cells as CSV with their dictionary, the method, and how to measure this page again."""
    again = f' · Reproduce: <code>{escape(reproduce)}</code>' if reproduce else ""
    return (f'<p class="bench-links"><a href="{escape(INDEX_LINK)}">← All reports</a> · Every cell as a spreadsheet: <a href="{escape(CELLS_CSV)}" download>'
            f'{escape(CELLS_CSV)}</a> (its columns: <a href="{escape(CELLS_DICTIONARY)}" download>'
            f'{escape(CELLS_DICTIONARY)}</a>) · How it is measured and decided: <a href="{escape(METHOD_LINK)}">'
            f"method</a>{again}</p>")


def reproduce_line(df, params: str) -> str:
    """How to measure this page again: the compile-bench commit that measured it and the command."""
    versions = sorted({str(v) for v in df.get("compile_bench", []) if v and not pd.isna(v)})
    checkout = f"compile-bench {' / '.join(versions)}: " if versions else ""
    return f"{checkout}python -m bench_utils report {params}".strip()


def top_of_page(df, label: str = "", studies: list[str] = (), rules: Rules = Rules(), params: str = "",
                first_pass: tuple[int, int] | None = None) -> str:
    """Header, verdict, legend, caveats and links: the first screen of a run's page, as HTML (`rules`:
    the profile's margin and precision; `params`: its parameters file, for the reproduce line;
    `first_pass`: its first-pass rounds left and in all, sweep/adaptive.first_pass_state)."""
    return (header_html(page_header(df, label)) + verdict_html(df, studies, rules, first_pass)
            + links_html(reproduce_line(df, params) if params else ""))


def answer_html(df, label: str = "", rules: Rules = Rules(), first_pass: tuple[int, int] | None = None) -> str:
    """The first screen of a run's page without its links (they point at files beside a page): the answer a
    notebook shows (bench_utils.race)."""
    return header_html(page_header(df, label)) + verdict_html(df, [], rules, first_pass)


def folded_figures(figures: list, summary: str) -> str:
    """Figures as small multiples (a grid of PNGs, two wide: their labels stay readable at 1280 px)
    inside a closed <details>: there for whoever asks, not in the way of the rest of the page."""
    images = []
    for fig in figures:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=96, bbox_inches="tight")
        data = base64.b64encode(buffer.getvalue()).decode("ascii")
        images.append(f'<img alt="{escape(alt_text(fig))}" style="width:100%" src="data:image/png;base64,{data}">')
    grid = ('<div style="display:grid;grid-template-columns:repeat(2,1fr);gap:8px">'
            + "".join(images) + "</div>")
    return f"<details><summary>{escape(summary)}</summary>{grid}</details>"
