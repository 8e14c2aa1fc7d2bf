"""How a table appears on a report page: an interactive itables table whose key columns fit a 1280 px
window, with a "Columns" button that reveals the rest (DataTables' column-visibility button, in the
library itables embeds offline), every value in words (display.py). The tables themselves are built in tables.py and friends; the key
columns of each are named here, in one place.
"""

from __future__ import annotations

# table -> the columns shown at first; the others are one click away
KEY_COLUMNS = {
    "main": ["task_model", "batch_size", "mode", "eager_ms_median", "compiled_ms_median", "speedup",
             "compiled_ms_p90", "eager_images_per_s", "compiled_images_per_s", "eager_peak_mem_mb",
             "compiled_peak_mem_mb"],
    "improvement": ["task_model", "batch_size", "mode", "status", "eager_ms_median", "compiled_ms_median",
                    "improvement_pct", "speedup", "speedup_ci95_low", "speedup_ci95_high", "significant"],
    "improvement_all": ["label", "task_model", "batch_size", "mode", "improvement_pct", "speedup",
                        "speedup_ci95_low", "speedup_ci95_high", "significant"],
    "compile": ["task_model", "batch_size", "mode", "status", "compile_s", "compile_warm_s", "speedup",
                "breakeven_calls", "graph_breaks", "recompiles", "accuracy_ok", "task_agreement"],
    "why": ["model", "batch_size", "mode", "speedup", "why"],
    "placement": ["task_model", "batch_size", "mode", "status", "hostname", "duration_s"],
    "failures": ["task_model", "batch_size", "mode", "status", "error"],
    "best": ["hardware", "task_model", "batch_size", "float32_eager_ms", "best_eager", "best_eager_ms",
             "best_compiled", "best_compiled_ms"],
    "reference": ["label", "model", "batch_size", "mode", "gpu", "speedup", "ref_speedup", "improvement_pct",
                  "ref_improvement_pct", "ref_status"],
}


def hidden_columns(columns, keys) -> list[int]:
    """Positions of the columns not in `keys` (all shown when `keys` names none of them)."""
    columns = list(columns)
    hidden = [i for i, name in enumerate(columns) if name not in keys]
    return [] if len(hidden) == len(columns) else hidden


def table_options(frame, table: str, caption: str, **options) -> dict:
    """itables.show options: the caption, the table's key columns visible and a Columns button when some
    are hidden; long text cells wrap (no "nowrap" class) so the shown columns fit the page."""
    if table not in KEY_COLUMNS:
        raise ValueError(f"table: {table!r} is not allowed; allowed: {', '.join(KEY_COLUMNS)}")
    hidden = hidden_columns(frame.columns, KEY_COLUMNS[table])
    chosen = {"caption": caption, "classes": "display compact", "autoWidth": False, "showIndex": False}
    if hidden:
        chosen |= {"columnDefs": [{"visible": False, "targets": hidden}],
                   "buttons": [{"extend": "colvis", "text": f"Columns ({len(hidden)} more)"}]}
    return chosen | options


def show_table(frame, table: str, caption: str, **options) -> None:
    """Show `frame` on the page as `table` (a KEY_COLUMNS name) with table_options, in words
    (display.readable: labels with units, 3 significant figures)."""
    from itables import show

    from .display import page_columns, readable

    columns = page_columns(frame.columns)
    shown = readable(frame, columns)
    show(shown, **table_options(frame[columns], table, caption, **options))
