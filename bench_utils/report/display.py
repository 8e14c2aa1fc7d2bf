"""How numbers and names read on a page: the one display layer of the report. No torch.

Tables are built with DataFrame column names (tables.py, verdict.py); just before a page shows one, it
goes through `readable`: column names become labels in words with their unit, numbers keep 3
significant figures, counts are integers, a missing value is "—", an infinite one "never". Models are
named by the registry's display name (registry.DISPLAY_NAMES) and listed in registry order. Everything
here is plain text: the page's escaping turns it into HTML.

A table then appears on a page through `show_table`: an interactive itables table whose key columns
(KEY_COLUMNS, named here in one place per table) fit a 1280 px window, with a "Columns" button that
reveals the rest (DataTables' column-visibility button, in the library itables embeds offline).
"""

from __future__ import annotations

import html
import math
import numbers
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from ..config.registry import MODELS, display_name
from ..files import write_file
from ..results.record import RECORD

MISSING = "—"  # a value the run never measured
NEVER = "never"  # an infinite count: a compiled model that is not faster never pays back
SIGNIFICANT_DIGITS = 3

# DataFrame column -> label on a page, with the unit: the record's declared labels (results/record.py),
# then the columns the report's own tables make
COLUMN_LABELS = {column.name: column.label for column in RECORD if column.label} | {
    "task_model": "Model", "display_name": "Model", "compiled_ms_median": "Compiled median (ms)",
    "compiled_ms_p90": "Compiled p90 (ms)",
    "compiled_peak_mem_mb": "Compiled peak memory (MiB)",
    "disturbed_why": "Why disturbed", "breakeven_calls": "Pays back after (calls, cold)",
    "breakeven_warm_calls": "Pays back after (calls, warm)", "why": "Why", "verdict": "Answer",
    "setting": "Setting"}
# what a peak-memory column holds, per device (results/aggregate.held_memory_mb): a CPU process's
# peak resident memory over its life (ru_maxrss: its compile included); a GPU's reserved peak while
# timing, CUDA-graph pools in it
HELD_MEMORY = {"cpu": "process peak", "cuda": "GPU reserved"}  # a CPU's includes the compile: the table's caption says so
HELD_MEMORY_COLUMNS = {"eager_held_mem_mb", "compiled_peak_mem_mb"}
# columns holding counts: shown as integers whatever their dtype
COUNT_COLUMNS = {"batch_size", "repeats", "repeats_ok", "fx_cache_hits", "graph_breaks", "recompiles",
                 "breakeven_calls", "breakeven_warm_calls"}
# columns in per cent (the record's unit "%"): one decimal, every row alike, where 3 significant figures
# would write an improvement of 43.7 beside one of −0.0865 (a tenth of a per cent is already finer than
# any run here resolves)
PERCENT_COLUMNS = {column.name for column in RECORD if column.unit == "%"}
PERCENT_DECIMALS = 1


def number(value, integer: bool = False) -> str:
    """A number as a page shows it: 3 significant figures (thousands grouped), an integer when
    `integer`, "—" when missing, "never" when infinite, "yes"/"no" for a truth value."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return MISSING
    if isinstance(value, (bool,)) or type(value).__name__ == "bool_":
        return "yes" if value else "no"
    if not isinstance(value, numbers.Number):
        return str(value)
    if isinstance(value, numbers.Integral):  # a count stored as an integer stays one
        integer = True
    value = float(value)
    if math.isinf(value):
        return NEVER if value > 0 else "−never"
    if integer or value == 0:
        return f"{round(value):,}".replace("-", "−")
    if abs(value) < 0.01:  # e.g. a largest output difference: no run of zeros (at most 4 decimals)
        return f"{value:.{SIGNIFICANT_DIGITS - 1}e}".replace("-", "−")
    magnitude = math.floor(math.log10(abs(value)))
    decimals = SIGNIFICANT_DIGITS - 1 - magnitude
    rounded = round(value, decimals)
    if rounded and math.floor(math.log10(abs(rounded))) > magnitude:  # 9.9997 rounds up to 10.0, not 10.00
        decimals -= 1
        rounded = round(value, decimals)
    return f"{rounded:,.{max(decimals, 0)}f}".replace("-", "−")


def percent(value) -> str:
    """A per-cent column's value: PERCENT_DECIMALS decimals ("43.7", "−4.1", "0.0", never "−0.0"); what
    is no finite number reads as `number` writes it ("—", "never")."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        return number(value)
    shown = f"{float(value):,.{PERCENT_DECIMALS}f}"
    return shown.removeprefix("-") if not shown.strip("-0.,") else shown.replace("-", "−")


def signed_percent(value, integer: bool = False) -> str:
    """A change in per cent as a page writes it, by `number`: "−14.6%", "+4.22%", "±0%" where it rounds
    to none (never "−0%" or "+0%"), "—" when missing."""
    text = number(value, integer=integer)
    if text == MISSING:
        return text
    if not text.strip("−0.,"):
        return "±0%"
    return f"{'' if text.startswith('−') else '+'}{text}%"


def rounded(value, figures: int = 2) -> str:
    """A figure from one sample (a cold compile, a pay-back count) to the figures it supports: 33.3 s
    and 24.4 s from two runs differ by a third, so "33" and "24", and 193 calls "190"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if math.isinf(value):
        return NEVER
    if value == 0:
        return "0"
    decimals = figures - 1 - math.floor(math.log10(abs(value)))
    return f"{round(value, decimals):,.{max(decimals, 0)}f}".replace("-", "−")


def plus_minus(halfwidth: float) -> str:
    """A relative half-width as read on a page: "±6%", "more than ±100%"."""
    if halfwidth is None or math.isnan(halfwidth):
        return MISSING
    return "more than ±100%" if halfwidth > 1 else f"±{halfwidth:.0%}"


def span(low: float, high: float, margin: float = math.nan) -> str:
    """An interval of speedups as read on a page: "0.95–1.07×", "<0.01–>100×" for one gone wild; an end
    that would round onto `margin` from the other side keeps its digits (times_beside)."""
    return f"{times_beside(low, margin).removesuffix('×')}–{times_beside(high, margin)}"


def times_beside(value: float, margin: float) -> str:
    """`value` as times() writes it, with as many more digits as it takes not to read as `margin`
    when it is not the margin: an interval's end just below 1.10× reads "1.0997×", not "1.10×"."""
    text = times(value)
    if text == MISSING or value == margin or text != times(margin):
        return text
    for digits in range(4, 8):
        text = f"{value:.{digits}g}"
        if text != f"{margin:.{digits}g}":
            return f"{text}×"
    return times(value)


def times(value: float) -> str:
    """A speedup as read on a page ("2.05×"); beyond 100× either way it is a measurement gone wrong
    (a disturbed run's interval), not a figure to read: "<0.01×", ">100×"."""
    if value is None or math.isnan(value):
        return MISSING
    if value < 0.01:
        return "<0.01×"
    if value > 100:
        return ">100×"
    return f"{number(value)}×"


# A cell's status (results/rows.STATUSES) in words, the one rule for tables, sentences and chart notes;
# a failure reads in capitals ("OOM"), as the guide marks its cells
STATUS_WORDS = {"ok": "ok", "unsupported": "not supported here", "skipped": "skipped"}


def status_text(status) -> str:
    """"ok", "not supported here", "skipped", or a failure in capitals ("OOM", "TIMEOUT"); "—" for none."""
    if not isinstance(status, str) or not status:
        return MISSING
    return STATUS_WORDS.get(status, status.upper())


def status_mark(status) -> str:
    """A cell not timed as a chart's bar note and the guide-style tables mark it, status_text in capitals
    ("OOM", "NOT SUPPORTED HERE", "SKIPPED"), as the guide marks its OOM cells."""
    return status_text(status).upper()


def cell_text(value, column: str = "") -> str:
    """One table cell as text: a status in words (status_text), lists joined, numbers by `number`,
    empty text as "—"."""
    if column == "status":
        return status_text(value)
    if isinstance(value, (list, tuple)):
        return "; ".join(map(str, value)) or MISSING
    if isinstance(value, str):
        return value or MISSING
    if column in PERCENT_COLUMNS:
        return percent(value)
    return number(value, integer=column in COUNT_COLUMNS)


def model_text(name: str, with_checkpoint: bool = False) -> str:
    """A model as named on every page: its display name, optionally with the checkpoint it stands for."""
    shown = display_name(name)
    spec = MODELS.get(name)
    return f"{shown} ({spec.checkpoint})" if with_checkpoint and spec else shown


def label(column: str, devices=()) -> str:
    """A column's label on a page; a column without one is shown in words, never in snake_case. A peak
    memory says what it holds on the table's `devices` (both kinds when none is known)."""
    text = COLUMN_LABELS.get(column, column.replace("_", " ").capitalize())
    if column not in HELD_MEMORY_COLUMNS:
        return text
    known = [device for device in HELD_MEMORY if device in devices] or list(HELD_MEMORY)
    held = "; ".join(f"{device.upper()}: {HELD_MEMORY[device]}" for device in known) if len(known) > 1 \
        else HELD_MEMORY[known[0]]
    return f"{text.removesuffix(')')}; {held})"


def page_columns(columns) -> list[str]:
    """The columns a page shows: a table holding the display name (task_model) does not repeat the short
    name (model)."""
    columns = list(columns)
    return [c for c in columns if not (c == "model" and "task_model" in columns)]


TRACE_COLUMN, TRACE_FOLDER = "trace", "traces"  # a profiled cell's trace file, in the page's folder's traces/


def trace_link(name: str) -> str:
    """A trace file as a link the page opens (the file lies in traces/ beside the page), or "—"."""
    if not name:
        return MISSING
    return f'<a href="{TRACE_FOLDER}/{quote(name)}" download>{html.escape(name)}</a>'


def readable(frame: pd.DataFrame, columns: list[str] | None = None, as_html: bool = False) -> pd.DataFrame:
    """`frame` (or its `columns`) ready for a page: model short names as display names, every value as
    text (`cell_text`), column labels in words with units (`label`, for the frame's devices). The index
    is dropped. `as_html`: every cell escaped as HTML and a trace file as its link (trace_link)."""
    columns = [c for c in (columns or list(frame.columns)) if c in frame.columns]
    devices = set(frame["device"]) if "device" in frame.columns else set()
    shown = pd.DataFrame(index=range(len(frame)))
    for column in columns:
        values = frame[column].tolist()
        if column == "model":
            values = [model_text(v) for v in values]
        if as_html and column == TRACE_COLUMN:
            shown[label(column, devices)] = [trace_link(v if isinstance(v, str) else "") for v in values]
        else:
            text = [cell_text(v, column) for v in values]
            shown[label(column, devices)] = [html.escape(t) for t in text] if as_html else text
    return shown


def write_csv(frame: pd.DataFrame, path) -> None:
    """The cells behind a page as CSV, for a spreadsheet: the DataFrame's column names (units in the
    names), numbers unrounded, each model with its checkpoint id."""
    out = frame.copy()
    if "model" in out.columns and "checkpoint" not in out.columns:
        out.insert(out.columns.get_loc("model") + 1, "checkpoint",
                   [MODELS[m].checkpoint if m in MODELS else "" for m in out["model"]])
    write_file(Path(path), out.map(defused).to_csv(index=False), Path(path).parent)  # no link followed, 0644


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads a cell starting so as a formula


def defused(value):
    """A text cell a spreadsheet would run as a formula ("=HYPERLINK(...)" from a label or an error
    text), prefixed with an apostrophe so it is shown as text (OWASP's advice on CSV injection)."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


# the labels of the columns of names a reader scans down, kept on one line in every table (page_html.table
# for a styled one, table_options for an interactive one): a model's ("ResNet-" over "50") and a run's
# ("CPU" over "full-" over "size" in a narrow first column)
ONE_LINE_LABELS = ("Run", "Model")

# table -> the columns shown at first; the others are one click away
KEY_COLUMNS = {
    "main": ["task_model", "batch_size", "configuration", "eager_ms_median", "compiled_ms_median", "race_speedup",
             "race_ci95_low", "race_ci95_high", "eager_images_per_s", "images_per_s",
             "eager_held_mem_mb", "compiled_peak_mem_mb"],
    # the status beside the figures: a row of "—" says why (skipped by the budget, OOM, not supported here)
    "improvement_all": ["label", "task_model", "batch_size", "configuration", "status", "improvement_pct",
                        "race_speedup", "race_ci95_low", "race_ci95_high", "race_significant"],
    "compile": ["task_model", "batch_size", "configuration", "status", "compile_s", "compile_warm_s", "race_speedup",
                "graph_breaks", "recompiles", "accuracy_ok", "task_agreement"],
    "why": ["model", "batch_size", "configuration", "race_speedup", "why"],
    "placement": ["task_model", "batch_size", "configuration", "status", "hostname", "duration_s"],
    "failures": ["task_model", "batch_size", "configuration", "status", "error"],
    "missing": ["task_model", "batch_size", "configuration"],
    "guide": [],  # the guide's tables: a column per configuration, every one shown (hidden_columns)
}


def hidden_columns(columns, keys) -> list[int]:
    """Positions of the columns not in `keys` (all shown when `keys` names none of them)."""
    columns = list(columns)
    hidden = [i for i, name in enumerate(columns) if name not in keys]
    return [] if len(hidden) == len(columns) else hidden


def table_options(frame, table: str, caption: str, **options) -> dict:
    """itables.show options: the caption, the table's key columns visible and a Columns button when some
    are hidden; long text cells wrap (no "nowrap" class on the table) so the shown columns fit the page,
    but a model's or run's name (ONE_LINE_LABELS) does not."""
    if table not in KEY_COLUMNS:
        raise ValueError(f"table: {table!r} is not allowed; allowed: {', '.join(KEY_COLUMNS)}")
    hidden = hidden_columns(frame.columns, KEY_COLUMNS[table])
    one_line = [i for i, column in enumerate(frame.columns) if label(column) in ONE_LINE_LABELS]
    chosen = {"caption": caption, "classes": "display compact", "autoWidth": False, "showIndex": False}
    definitions = [{"visible": False, "targets": hidden}] if hidden else []
    if one_line:  # DataTables' own class for a column that does not wrap
        definitions.append({"className": "dt-nowrap", "targets": one_line})
    if definitions:
        chosen["columnDefs"] = definitions
    if hidden:
        chosen["buttons"] = [{"extend": "colvis", "text": f"Columns ({len(hidden)} more)"}]
    return chosen | options


def show_table(frame, table: str, caption: str, **options) -> None:
    """Show `frame` on the page as `table` (a KEY_COLUMNS name) with table_options, in words
    (readable: labels with units, 3 significant figures)."""
    from itables import show

    columns = page_columns(frame.columns)
    links = TRACE_COLUMN in columns  # a trace file is a link: the cells are HTML, each escaped
    shown = readable(frame, columns, as_html=links)
    show(shown, **table_options(frame[columns], table, caption, **options) | ({"allow_html": True} if links else {}))


def alt_text(fig) -> str:
    """A figure's description for a page's readers who do not see it: its titles and axis labels."""
    parts = [fig._suptitle.get_text()] if getattr(fig, "_suptitle", None) else []
    for ax in fig.axes:
        parts += [text for text in (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) if text]
        parts += [text.get_text() for text in ax.texts if text.get_text()][:1]  # "no successful cells"
    return "; ".join(dict.fromkeys(parts)) or "chart"


def show_figure(fig) -> None:
    """Show a matplotlib figure on the page with its alt text (the report's template writes it)."""
    from IPython.display import display

    display(fig, metadata={"image/png": {"alt": alt_text(fig)}})
