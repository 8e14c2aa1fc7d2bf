"""The top of a run's page, in the order a reader needs it: the header (run, machine, software, date,
weights), the verdict table in words with its legend, the caveats that hold for every model, and
links to the cells as CSV and to the method. Built from plain text (header.py, verdict.py); page_html.escape
is where that text becomes HTML. No torch.
"""

from __future__ import annotations

import base64
import io

import pandas as pd

from ..config.configurations import configuration
from ..config.registry import display_name
from ..results import decision as codes
from .apply_code import code_text
from .display import alt_text
from .glossary import linked_terms
from .header import PageHeader, page_header
from .alternatives import serving_form_choices
from .verdict import Rules, legend, page_caveats, race_table, run_next_step, short_legend, verdict_table, verdicts
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
    """The verdict table (pandas escapes its cells), a short legend (its jargon linked to the method's
    glossary), the page-wide caveats (`first_pass`:
    the first-pass rounds left and in all, verdict.page_caveats) and `studies`' verdict lines (plain
    text, one per study); the race behind each answer and the whole legend folded below, there for
    whoever asks."""
    table = verdict_table(df, rules)
    if table.empty:
        return "<h2>Should you compile?</h2><p>No measured cells yet: no verdict.</p>"
    body = table.to_html(index=False, escape=True, border=0, classes="bench-verdict", na_rep="—")
    step = run_next_step(df, rules, (first_pass or (0, 0))[0])
    notes = [f'<p class="bench-next"><strong>Next step:</strong> {escape(step)}</p>'] if step else []
    notes += [f'<p class="bench-legend">{linked_terms(escape(short_legend(rules)), METHOD_LINK)}</p>']
    notes += [f'<p class="bench-caveat">⚠ {escape(caveat)}</p>' for caveat in page_caveats(df, first_pass, rules)]
    notes += [f"<p>{escape(line)}</p>" for line in studies]
    notes.append(code_html(df, rules))
    race = race_table(df, rules).to_html(index=False, escape=True, border=0, classes="bench-race", na_rep="—")
    folded = ("<details><summary>The race behind each answer: the runner-up, the others, why the choice is faster"
              f"</summary>{race}</details><details><summary>How the answers are read</summary>"
              f'<p class="bench-legend-full">{linked_terms(escape(legend(rules)), METHOD_LINK)}</p></details>')
    return "<h2>Should you compile?</h2>" + body + "".join(notes) + folded


ACTIONABLE = (codes.COMPILE, codes.USE)  # answers that say to run a configuration: their code is shown


def code_html(df, rules: Rules) -> str:
    """The code that applies each answer to run a configuration (report/apply_code.py), one block per
    configuration with the models it answers for, then, folded, each serving form's best where the
    profile raced forms built ahead of time; "" when no answer says to run one."""
    answers: dict[tuple[str, str], list[str]] = {}
    forms: dict[tuple[str, str], list[str]] = {}
    for row in verdicts(df, rules).itertuples():
        device = str(row.device).lower()
        if row.verdict in ACTIONABLE:
            answers.setdefault((row.configuration, device), []).append(display_name(row.model))
        group = df[(df["label"] == row.label) & (df["model"] == row.model) & (df["batch_size"] == row.batch_size)]
        for name in serving_form_choices(group):
            forms.setdefault((name, device), []).append(display_name(row.model))
    if not answers and not forms:
        return ""
    blocks = "".join(_code_block(name, device, models) for (name, device), models in answers.items())
    if forms:
        blocks += ("<details><summary>The code of each way to serve it</summary>"
                   + "".join(_code_block(name, device, models) for (name, device), models in forms.items())
                   + "</details>")
    return f'<div class="bench-code"><h3>The code that applies it</h3>{blocks}</div>'


def _code_block(name: str, device: str, models: list[str]) -> str:
    head = f"{', '.join(dict.fromkeys(models))}: {configuration(name).words}"
    return f"<p>{escape(head)}</p><pre><code>{escape(code_text(name, device))}</code></pre>"


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
