"""Display tables for the report notebooks, built from the DataFrame of ``aggregate.to_dataframe``. No torch.

Every function takes that one-row-per-cell DataFrame and returns a new DataFrame to show; the
notebooks only call these and display what comes back (through display.readable). Models are named by
their display name (registry.DISPLAY_NAMES) and listed in registry order; configurations eager first, then
by their mode (the mode table's order, config/modes.py) and name.
"""

from __future__ import annotations

import math

import pandas as pd

from ..config.configurations import BASELINE, configuration
from ..config.modes import MODES
from ..config.registry import MODEL_NAMES, display_name
from ..results.record import RECORD
from ..results.rows import NOT_FAILED
from .display import MISSING, number, status_mark, status_text
from .notes import beside_starts_words, compile_note_words, disturbance_words

STATS = ("mean", "median")
MODEL_INDEX_NAME = "Model"
_REQUIRED = ("label", "model", "batch_size", "configuration", "status")


def ordered_models(names) -> list[str]:
    """Distinct short names in registry order, names unknown to the registry last (alphabetically)."""
    names = set(names)
    return [n for n in MODEL_NAMES if n in names] + sorted(names - set(MODEL_NAMES))


def ordered_configurations(names) -> list[str]:
    """Distinct configurations: eager first, then by their mode's place in the mode table, then by name."""
    def rank(name: str) -> tuple:
        return (name != BASELINE, MODES.index(configuration(name).mode), name)

    return sorted(set(names), key=rank)


def first_row(rows: pd.DataFrame, column: str, value) -> dict | None:
    """The first row whose `column` is `value`, as a dict; None when none is."""
    found = rows[rows[column] == value]
    return found.iloc[0].to_dict() if not found.empty else None


def check_frame(df) -> None:
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df: expected the DataFrame of aggregate.to_dataframe, got {type(df).__name__}")
    absent = [c for c in _REQUIRED if c not in df.columns]
    if absent:
        raise ValueError(f"df: missing column(s) {', '.join(absent)}; build it with aggregate.to_dataframe")


def one_label(df, name: str = "df") -> None:
    """ValueError unless `df` (the argument `name`) holds one run's rows (one label)."""
    labels = sorted(set(df["label"]))
    if len(labels) > 1:
        raise ValueError(f"{name}: holds rows of several labels ({', '.join(labels)}); pass one run's rows")


def numeric_column(df, column: str) -> pd.Series:
    """A column as float (None -> NaN); all-None columns arrive as object dtype."""
    if column not in df.columns:
        return pd.Series(math.nan, index=df.index, dtype=float)
    return pd.to_numeric(df[column], errors="coerce").astype(float)


def sort_rows(frame: pd.DataFrame, by: list[str], orders: dict | None = None) -> pd.DataFrame:
    """`frame` sorted stably by the columns `by` in turn, index reset: "model" in registry order
    (ordered_models), a column of `orders` by each value's place in its sequence (a value not in it
    last), any other column by its values."""
    ranks = {column: {value: i for i, value in enumerate(order)}
             for column, order in ({"model": ordered_models(frame["model"])} | (orders or {})).items()}
    ranked = frame.sort_values(by, kind="stable", key=lambda c: c.map(ranks[c.name]) if c.name in ranks else c)
    return ranked.reset_index(drop=True)


def sort_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Cells by label, model, batch size, then configuration (ordered_configurations)."""
    return sort_rows(frame, ["label", "model", "batch_size", "configuration"],
                     {"configuration": ordered_configurations(frame["configuration"])})


def _cell_frame(df) -> pd.DataFrame:
    """The identifying columns shared by the long tables."""
    return pd.DataFrame({"label": df["label"], "model": df["model"],
                         "task_model": df["model"].map(display_name),
                         "batch_size": df["batch_size"].astype(int), "configuration": df["configuration"],
                         "status": df["status"]}, index=df.index)


def _compiled_cells(df) -> tuple:
    """The compiled cells of `df` (checked), whether each ended ok, and a table of their identifying
    columns with the eager and compiled medians (ms; NaN unless ok)."""
    check_frame(df)
    compiled = df[df["configuration"] != BASELINE]
    ok = compiled["status"] == "ok"
    table = _cell_frame(compiled)
    table["eager_ms_median"] = numeric_column(compiled, "eager_ms_median").where(ok)
    table["compiled_ms_median"] = numeric_column(compiled, "latency_ms_median").where(ok)
    return compiled, ok, table


def latency_cells(df, stat: str = "median") -> pd.DataFrame:
    """One row per (label, model, batch_size, configuration) with `latency_ms` (NaN unless status is ok).

    The eager row is the eager cell: the number every compiled cell's speedup is measured against
    (aggregate.py), unless eager was timed beside the configuration (eager_beside: main_table_caption).
    """
    check_frame(df)
    if stat not in STATS:
        raise ValueError(f"stat: {stat!r} is not allowed; allowed: {', '.join(STATS)}")
    cells = _cell_frame(df)
    cells["latency_ms"] = numeric_column(df, f"latency_ms_{stat}").where(df["status"] == "ok")
    return sort_cells(cells)


def latency_table(df, batch_size: int, stat: str = "mean") -> pd.DataFrame:
    """The guide's table for one batch size: Model x "eager (ms)", "<configuration> (ms)" ...

    Cells hold the latency to 3 significant figures, the status in capitals ("OOM") for failed cells
    and "—" for cells never measured.
    `df` must hold one run (one label); the guide reported the mean, hence the default `stat`.
    """
    if type(batch_size) is not int or batch_size < 1:
        raise ValueError(f"batch_size: {batch_size!r} is not allowed; allowed: an integer >= 1")
    cells = latency_cells(df, stat)
    one_label(cells)
    at_batch = cells[cells["batch_size"] == batch_size].set_index(["model", "configuration"])
    if at_batch.index.duplicated().any():
        raise ValueError("df: more than one row per model and configuration (mixed sizes or fullgraph?)")
    models = ordered_models(df["model"])
    modes = ordered_configurations(df["configuration"])
    columns = {f"{mode} (ms)": [_table_cell(at_batch, model, mode) for model in models] for mode in modes}
    return pd.DataFrame(columns, index=pd.Index([display_name(m) for m in models]), dtype=object)


OUTLIER_MARK = " ▲"  # after a mean that slow outlier calls pulled well above the median


def run_here(df: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The cells of configurations this machine ran, and one sentence naming those it could run for no
    model ("" when none): a chart or a latency table of bars and columns all saying UNSUPPORTED tells
    nothing the sentence does not (the verdict's "also raced" keeps them; the failures table lists
    every other status)."""
    status = df.groupby("configuration")["status"].agg(lambda s: set(s) == {"unsupported"})
    never = [name for name in ordered_configurations(df["configuration"]) if status.get(name, False)]
    if not never:
        return df, ""
    reasons = df[df["configuration"].isin(never)].groupby("configuration")["error"].first()
    by_reason: dict[str, list[str]] = {}
    for name in never:
        by_reason.setdefault(str(reasons.get(name) or status_text("unsupported")), []).append(name)
    said = "; ".join(f"{', '.join(names)} ({reason})" for reason, names in by_reason.items())
    return df[~df["configuration"].isin(never)], f"Not run on this machine: {said}."


def cuda_graph_cells(df) -> tuple[pd.DataFrame, pd.Series]:
    """The cells of `df` that recorded a CUDA graph, and their pools' reserved memory (MiB, known ones)."""
    if "cudagraphs_recorded" not in df.columns:
        return df.iloc[0:0], pd.Series(dtype=float)
    recorded = df[(df["configuration"] != BASELINE) & (df["cudagraphs_recorded"].fillna(0) > 0)]
    pools = recorded["cudagraph_pool_mb"].dropna() if "cudagraph_pool_mb" in recorded.columns else pd.Series(dtype=float)
    return recorded, pools


def guide_table(df, batch_size: int) -> pd.DataFrame:
    """The guide's table (mean latency, ms) with each mode's median beside its mean in the same cell,
    "mean / median" (a column each made the table twice a page wide: six configurations' winning
    columns off-screen at 1280 px); a mean pulled more than stats.OUTLIER_MEAN above its median by slow
    calls carries OUTLIER_MARK; a failed cell shows its status once."""
    means = latency_table(df, batch_size, stat="mean")
    medians = latency_table(df, batch_size, stat="median")
    flagged = df[(df["batch_size"] == batch_size) & df["mean_outliers"].fillna(False).astype(bool)]
    for model, mode in zip(flagged["model"], flagged["configuration"]):
        means.loc[display_name(model), f"{mode} (ms)"] += OUTLIER_MARK
    table = pd.DataFrame({MODEL_INDEX_NAME: means.index})  # a column: no second header row for the index
    for column in means.columns:
        table[column.replace(" (ms)", ": mean / median (ms)")] = [
            mean if mean == median else f"{mean} / {median}" for mean, median in zip(means[column], medians[column])]
    return table


def _table_cell(at_batch: pd.DataFrame, model: str, mode: str):
    if (model, mode) not in at_batch.index:
        return MISSING
    cell = at_batch.loc[(model, mode)]
    return number(cell["latency_ms"]) if cell["status"] == "ok" else status_mark(cell["status"])


RACE_FIGURES = ("race_speedup", "race_ci95_low", "race_ci95_high")


def _race_figures(compiled: pd.DataFrame, ok: pd.Series) -> dict:
    """The speedup a page shows for a configuration: its race figure (results/race.py: the
    recommendation's lowered for the round that chose it), with its interval and whether that interval
    excludes 1x (race_significant), as results/ computed them; none of them for a cell that was not
    measured (skipped, failed): its interval excludes nothing, and "no" would read as one that held 1x."""
    figures = {column: numeric_column(compiled, column).where(ok) for column in RACE_FIGURES}
    return figures | {"race_significant": _flag_where(compiled["race_significant"], ok)}


def _flag_where(flags: pd.Series, ok: pd.Series) -> pd.Series:
    """A yes/no column for the cells that were measured, None ("—" on a page) for the others."""
    return flags.fillna(False).astype(bool).astype(object).where(ok, None)


def improvement_table(df) -> pd.DataFrame:
    """Per compiled cell: the guide's percentage improvement and our speedup with its 95% CI.

    Every number is read from the DataFrame (aggregate.py computes them once): the eager median is
    the eager cell's; `race_significant` means the speedup CI excludes 1, `noisy` that the compiled
    (p90 - p10) / median exceeds stats.NOISY_SPREAD, `disturbed` that the machine was busy or the
    processes disagreed (`disturbed_why`, in words). Failed cells keep their row (status) with NaN numbers.
    """
    compiled, ok, table = _compiled_cells(df)
    # which machine and torch: the summary notebook filters a table of several runs by them
    table.insert(1, "hardware", compiled.get("hardware", ""))
    table.insert(2, "torch", compiled.get("torch", ""))
    table["improvement_pct"] = numeric_column(compiled, "improvement_pct").where(ok)
    table = table.assign(**_race_figures(compiled, ok))
    for column in ("noisy", "disturbed"):  # unknown ("—") for a cell not measured, as race_significant
        table[column] = _flag_where(compiled[column], ok)
    table["disturbed_why"] = [disturbance_words(record) for record in compiled.to_dict("records")]
    table["repeats"] = numeric_column(compiled, "repeats_ok")
    # next to each speedup, what may have limited it: dynamo's graph breaks and their reasons
    table["graph_breaks"] = numeric_column(compiled, "graph_breaks")
    table["break_reasons"] = _reasons(compiled)
    return sort_cells(table)


MAIN_COLUMNS = ["model", "batch_size", "configuration", "device", "status", "eager_ms_median", "compiled_ms_median",
                *RACE_FIGURES, "race_significant", "eager_ms_p90", "compiled_ms_p90", "eager_images_per_s",
                "images_per_s", "eager_held_mem_mb", "compiled_peak_mem_mb"]


def main_table(df) -> pd.DataFrame:
    """Per compiled cell, eager beside compiled: median and p90 latency (ms), the speedup with its 95%
    interval, throughput (images/s, from the medians) and peak memory (MiB, the record's held_mem_mb),
    eager's over the rounds the cell ran (results/aggregate.py). Failed cells keep their row."""
    compiled, ok, table = _compiled_cells(df)
    table = table.assign(**_race_figures(compiled, ok))
    table["eager_ms_p90"] = numeric_column(compiled, "eager_ms_p90").where(ok)  # over the rounds beside its median
    table["compiled_ms_p90"] = numeric_column(compiled, "latency_ms_p90").where(ok)
    for column in ("eager_images_per_s", "images_per_s"):
        table[column] = numeric_column(compiled, column).where(ok)
    table["eager_held_mem_mb"] = numeric_column(compiled, "eager_held_mem_mb").where(ok)  # over the rounds beside it
    table["compiled_peak_mem_mb"] = numeric_column(compiled, "held_mem_mb").where(ok)
    table["device"] = compiled["device"]  # what its peak memory holds (display.label)
    return sort_cells(table)[["label", "task_model"] + MAIN_COLUMNS]


def _device_columns(df) -> set[str]:
    """The declared columns (results/record.py) that apply to this run's devices."""
    devices = set(df["device"]) if "device" in df.columns else set()
    return {c.name for c in RECORD if not c.internal and (not c.device or c.device in devices)}


def cells_csv_frame(df) -> pd.DataFrame:
    """Every cell of the run (eager too) with its scalar columns, for the CSV next to a page; a CUDA-only
    column is left out of a CPU run's."""
    check_frame(df)
    keep = _device_columns(df)
    scalar = [c for c in df.columns if c in keep and c not in ("samples_s", "profile_top_ops", "eager_profile_top_ops")]
    return sort_cells(df[scalar].copy())


def cells_dictionary(df) -> pd.DataFrame:
    """cells.csv's data dictionary: each of its columns with its unit and meaning (the record's
    declarations)."""
    columns = list(cells_csv_frame(df).columns)
    declared = {c.name: c for c in RECORD}
    return pd.DataFrame({"column": columns, "unit": [declared[c].unit for c in columns],
                         "meaning": [declared[c].meaning for c in columns]})


def _reasons(compiled: pd.DataFrame, column: str = "break_reasons") -> list[str]:
    reasons = compiled.get(column, [None] * len(compiled))
    return [("; ".join(r) if isinstance(r, list) else "") for r in reasons]


COMPILE_CAPTION = "Compile time, graph breaks and agreement with eager"


MAIN_CAPTION = ("Eager against compiled, per cell (eager's figures over the rounds each configuration ran: a "
                "configuration the race dropped after its first round has eager's of that round; a CPU process's "
                "peak memory includes its compile)")


def eager_beside_cells(df) -> tuple[int, int]:
    """(compiled cells that timed eager beside them in their own processes, compiled cells measured): the
    rows' eager_beside, counted over the ok cells but eager's."""
    compiled = df[(df["status"] == "ok") & (df["configuration"] != "eager")]
    if "eager_beside" not in compiled.columns:
        return 0, len(compiled)
    return int(compiled["eager_beside"].fillna(False).astype(bool).sum()), len(compiled)


def main_table_caption(df) -> str:
    """main_table's caption, saying where its eager latencies were timed: in eager's own worker, or beside
    each configuration in its own processes (eager_beside_cells; eager's peak memory is its worker's
    either way), where they differ from the guide's table's eager column."""
    if not eager_beside_cells(df)[0]:
        return MAIN_CAPTION
    return ("Eager against compiled, per cell: eager's latencies here were timed beside each configuration, in its "
            "own processes between its blocks, over the rounds it ran (the guide's table above shows eager's own "
            "worker); eager's peak memory is its own worker's, and a CPU process's peak includes its compile")


def compile_table_caption(table: pd.DataFrame) -> str:
    """compile_table's caption, saying why a warm compile is missing where one is ("—" alone read as a
    failure): it is timed before a configuration's first round after the selection round as a leader
    of the race (on a CPU: sweep/adaptive.leaders), so one that never led then (or a run of one round)
    has none."""
    ok = table[table["status"] == "ok"]
    if ok.empty or ok["compile_warm_s"].notna().all():
        return COMPILE_CAPTION
    return (f"{COMPILE_CAPTION}. Warm compile —: not timed; it is timed after the selection round only, on a CPU "
            "once, before a configuration's first round in the lead (the fastest so far, or the fastest of its way "
            "of serving), on a GPU by a fresh worker at each model's smallest batch size (a warm compile does not "
            "depend on the batch size): one the race dropped, one that never led on a CPU, another batch size on a "
            "GPU, or a run of one round has none")


def compiled_cold(record) -> bool:
    """Was round 0's compile cold (results' compile_cold)? A record without the figure is taken as cold,
    as every compile_s was before the column."""
    value = record.get("compile_cold")
    return True if value is None or pd.isna(value) else bool(value)


def _cache_held_words(record) -> str:
    """Where round 0's compile hit the compiler cache (results' compile_cold false), in words: its
    "Cold compile" figure is a first compile from a filled cache ("" otherwise)."""
    if record.get("status") != "ok" or compiled_cold(record):
        return ""
    return "the compiler cache held it (a run before filled it): no cold compile here"


def compile_table(df) -> pd.DataFrame:
    """Per configuration but eager: compile time cold and warm, graph breaks, agreement with eager (the
    pay-back is the verdict's, for the configuration it recommends)."""
    compiled, ok, table = _compiled_cells(df)
    for column in ("compile_s", "compile_warm_s", "fx_cache_hits"):
        table[column] = numeric_column(compiled, column).where(ok)
    table["race_speedup"] = numeric_column(compiled, "race_speedup").where(ok)
    for column in ("graph_breaks", "recompiles", "max_abs_diff", "task_agreement", "peak_mem_mb"):
        table[column] = numeric_column(compiled, column)
    table["break_reasons"] = _reasons(compiled)
    table["recompile_reasons"] = _reasons(compiled, "recompile_reasons")
    table["accuracy_ok"] = compiled.get("accuracy_ok", None)
    table["compile_notes"] = ["; ".join(words for words in (compile_note_words(record), beside_starts_words(record),
                                                            _cache_held_words(record)) if words)
                              for record in compiled.to_dict("records")]
    order = ["label", "model", "task_model", "batch_size", "configuration", "status", "compile_s", "fx_cache_hits",
             "compile_warm_s", "eager_ms_median", "compiled_ms_median", "race_speedup", "graph_breaks", "recompiles",
             "break_reasons", "recompile_reasons", "compile_notes", "max_abs_diff", "accuracy_ok", "task_agreement",
             "peak_mem_mb"]
    return sort_cells(table[order])


def placement_table(df) -> pd.DataFrame:
    """Where each cell ran: host and device (several hosts when the sweep ran on a Ray cluster), and
    the wall time of the whole cell process, seconds."""
    check_frame(df)
    table = _cell_frame(df)
    for column in ("hostname", "hardware", "duration_s"):
        table[column] = df[column] if column in df.columns else None
    return sort_cells(table)


# a configuration that does not apply here is an answer, not a failure: run_here says it once; one left
# out to fit the budget (sweep/fit.py) is neither


def cell_states(df) -> tuple[int, int, int, int]:
    """(cells ok, cells whose configuration is not supported here, cells left out to fit the budget,
    cells that failed)."""
    status = df["status"]
    counts = [int((status == name).sum()) for name in ("ok", "unsupported", "skipped")]
    return (*counts, int((~status.isin(NOT_FAILED)).sum()))


def cell_states_text(df, sep: str = ", ") -> str:
    """"16 ok, 8 not supported here, 2 left out to fit the budget, 0 failed" (the middle parts only when
    there are such cells)."""
    ok, unsupported, skipped, failed = cell_states(df)
    parts = ([f"{ok} ok"] + ([f"{unsupported} not supported here"] if unsupported else [])
             + ([f"{skipped} left out to fit the budget"] if skipped else []) + [f"{failed} failed"])
    return sep.join(parts)


def failures_table(df) -> pd.DataFrame:
    """Every cell that failed (neither ok nor unsupported), with the status in capitals and the error text."""
    check_frame(df)
    failed = df[~df["status"].isin(NOT_FAILED)]
    table = _cell_frame(failed)
    table["status"] = [status_text(status) for status in failed["status"]]
    table["error"] = failed["error"] if "error" in failed else ""
    return sort_cells(table)


def missing_cells(df, expected_cells) -> pd.DataFrame:
    """The (model, batch_size, mode) cells of `expected_cells` (e.g. BenchConfig.cells()) with no row."""
    check_frame(df)
    expected = list(expected_cells)
    for cell in expected:
        if not isinstance(cell, (tuple, list)) or len(cell) != 3:
            raise ValueError(f"expected_cells: {cell!r} is not allowed; allowed: (model, batch_size, mode)")
    measured = set(zip(df["model"], df["batch_size"].astype(int), df["configuration"]))
    missing = [(m, int(b), mode) for m, b, mode in expected if (m, int(b), mode) not in measured]
    return pd.DataFrame({"model": [c[0] for c in missing],
                         "task_model": [display_name(c[0]) for c in missing],
                         "batch_size": pd.Series([c[1] for c in missing], dtype=int),
                         "configuration": [c[2] for c in missing]})
