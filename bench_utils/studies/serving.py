"""The serving study: one model, eager or compiled once with one `dynamic` setting, fed a server's
sequence of batch sizes (`serving_batch_sizes`), then timed in its steady state per batch size.

Measurement (a worker process, torch imported on use), under torch.inference_mode():
1. build the model and the inputs of every distinct batch size (input creation is never timed);
2. reset dynamo, compile once: "static" = torch.compile(dynamic=False), "dynamic" = dynamic=True,
   "auto" = dynamic=None (static first, symbolic after a shape changes); "eager" compiles nothing;
3. the sequence: each request one call, timed with everything it triggers; dynamo's graph count before
   and after says whether it compiled, its failed guards say why;
4. steady state: per distinct batch size, warm up until steady and time (the sweep's schedule).
A static compile past torch._dynamo.config.recompile_limit graphs of one frame does not fail: dynamo
runs later new shapes eagerly, silently; the row's `recompile_limit_hit` says so.

On the page, two totals per (model, setting): `sequence_s`, the sequence served once from a cold start
(each request's wall time, compiles included: what a new server's first requests cost), and
`steady_sequence_ms`, the same requests once warm at the steady median of each batch size; `speedup` is
eager's steady total over a setting's.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ..measure.compile_stats import graphs_compiled
from ..results.aggregate import DISTURBED_PCT
from ..results.rows import Row, model_fields
from ..results.stats import breakeven_calls, summarize
from .base import BaseStudy

SETTINGS = ("eager", "static", "dynamic", "auto")  # eager, then torch.compile(dynamic=False/True/None)
DYNAMIC_ARGUMENT = {"static": False, "dynamic": True, "auto": None}
MIN_GAIN = 0.05  # a compiled setting must serve the steady sequence this much faster than eager (x 1.05)
_COMPILE_ID = re.compile(r"^\[?\d+/\d+\]?:\s*")  # "0/1: " in front of a guard failure: which compile
_SOURCE_COMMENT = "  # "  # a symbolic-shape guard's text: "2 <= x.size()[0] <= 15  # user code ... (why)"


@dataclass(frozen=True)
class ServingResult(Row):
    """One process of the study: one model under one setting fed the sequence, then its steady state."""

    label: str
    model: str
    checkpoint: str
    task: str
    size: str
    configuration: str  # the profile's first compiled configuration ("eager" for the eager setting)
    setting: str  # one of SETTINGS
    device: str
    settings: str  # BenchConfig.settings_fingerprint()
    status: str
    error: str = ""
    weights: str = ""
    weights_note: str = ""
    sequence: list[int] = field(default_factory=list)  # the batch size of each request, in order
    step_ms: list[float] = field(default_factory=list)  # each request's wall time, ms (compiling included)
    step_compiled: list[bool] = field(default_factory=list)  # did this request compile a graph?
    compiles: int | None = None  # graphs compiled over the sequence (the first one included)
    recompile_reasons: list[str] = field(default_factory=list)  # dynamo's failed guards, first lines
    recompile_limit_hit: bool = False  # dynamo stopped compiling a frame: later new shapes ran eagerly
    steady_compiles: int = 0  # graphs compiled in the steady state (then its latencies include compiling)
    compile_total_s: float | None = None  # wall time of the requests that compiled, seconds
    steady_ms: dict = field(default_factory=dict)  # str(batch size) -> median ms after the sequence
    steady_samples_s: dict = field(default_factory=dict)  # str(batch size) -> raw samples, seconds
    steady_others_cpu_pct: dict = field(default_factory=dict)  # str(batch size) -> CPU others used, %
    env: dict = field(default_factory=dict)
    started_at: str = ""
    duration_s: float | None = None

    @property
    def key(self) -> tuple:
        return (self.model, self.size, self.configuration, self.setting)


# --- the measurement, in a worker process ---

def _failed_guards() -> list[str]:
    """Dynamo's guard failures so far (why it compiled again): the failed check alone, without the
    compile id in front nor the source comment after it (a first line can run to 500 characters)."""
    from torch._dynamo.utils import guard_failures

    firsts = [reason.strip().splitlines()[0] for reasons in guard_failures.values() for reason in reasons
              if reason.strip()]
    return list(dict.fromkeys(_COMPILE_ID.sub("", first).split(_SOURCE_COMMENT)[0].strip() for first in firsts))


def _serve_sequence(run, sequence: list[int], device: str, fields: dict) -> None:
    """Each request of `sequence` once, in order, into `fields` as it goes (a failure keeps the
    requests before it): its wall time (ms) and whether it compiled a graph."""
    from ..measure.timing import time_once

    fields.update(step_ms=[], step_compiled=[])
    for batch_size in sequence:
        graphs_before = graphs_compiled()
        fields["step_ms"].append(time_once(partial(run, batch_size), device) * 1000.0)  # s -> ms
        fields["step_compiled"].append(graphs_compiled() > graphs_before)
    compiling_ms = [ms for ms, compiled in zip(fields["step_ms"], fields["step_compiled"]) if compiled]
    fields.update(compiles=graphs_compiled(), compile_total_s=sum(compiling_ms) / 1000.0)


def _steady_state(run, batch_sizes: list[int], cfg, device: str, fields: dict) -> None:
    """Per distinct batch size, in order of first request: warm up until steady, then time; the median
    in ms and the raw samples in seconds, keyed by str(batch size) (JSON keys). The sequence saw every
    size, so nothing should compile here; `steady_compiles` counts what did."""
    from ..measure import machine_load, schedule
    from ..measure.timing import time_calls, warm_until_steady

    fields.update(steady_ms={}, steady_samples_s={}, steady_others_cpu_pct={})
    graphs_before = graphs_compiled()
    for batch_size in batch_sizes:
        call = partial(run, batch_size)
        warm_until_steady(call, device, cfg.warmup, schedule.warmup_window_s(cfg.min_time_s), cfg.max_warmup_s)
        before = machine_load.snapshot()
        samples = time_calls(call, device, cfg.iterations, cfg.min_time_s)
        load = machine_load.between(before, machine_load.snapshot())
        fields["steady_ms"][str(batch_size)] = summarize(samples).median_ms
        fields["steady_samples_s"][str(batch_size)] = samples
        if load is not None:  # others' CPU share while timing this size (None off Linux)
            fields["steady_others_cpu_pct"][str(batch_size)] = load.others_cpu_pct
    fields["steady_compiles"] = graphs_compiled() - graphs_before


def _measure(cfg, model_name: str, setting: str, device: str, fields: dict) -> None:
    import torch

    from ..config.configurations import configuration
    from ..measure.cell import load_for_process, process_inputs
    from ..measure.settings import compile_model, inductor_context, precision_context, with_layout
    from ..measure.compile_stats import clear_graph_stats, hit_recompile_limit

    config = configuration("eager") if setting == "eager" else cfg.compiled_configuration()
    spec, loaded = load_for_process(cfg, model_name, device, fields)
    batch_sizes = list(dict.fromkeys(cfg.serving_batch_sizes))  # distinct, in order of first request
    inputs = {batch_size: with_layout(config, loaded.model, process_inputs(cfg, spec, batch_size, device))
              for batch_size in batch_sizes}
    model = loaded.model
    torch._dynamo.reset()  # nothing compiled before (in this process) is reused
    clear_graph_stats()
    if setting != "eager":
        model = compile_model(model, config, cfg.fullgraph, DYNAMIC_ARGUMENT[setting])
    run = lambda batch_size: model(**inputs[batch_size])  # noqa: E731
    try:
        with torch.inference_mode(), precision_context(config, device), inductor_context(config):
            _serve_sequence(run, list(cfg.serving_batch_sizes), device, fields)
            _steady_state(run, batch_sizes, cfg, device, fields)
    finally:
        fields.update(recompile_reasons=_failed_guards(), recompile_limit_hit=hit_recompile_limit())


# --- the page ---

def batch_sizes(frame: pd.DataFrame) -> list[int]:
    """The batch sizes with a steady-state column, ascending."""
    return sorted(int(c.removeprefix("steady_ms_bs")) for c in frame.columns if c.startswith("steady_ms_bs"))


def _record(row: ServingResult) -> dict:
    """A row's numbers (NaN for a failed row): graphs compiled, requests after the first that compiled,
    compile time, both sequence totals, the steady median per batch size, the busiest moment of others."""
    ok = row.status == "ok"
    steady = [row.steady_ms.get(str(b), math.nan) for b in row.sequence] if ok else [math.nan]
    record = {"label": row.label, "model": row.model, "setting": row.setting, "status": row.status,
              "error": row.error, "sequence": list(row.sequence), "step_ms": list(row.step_ms),
              "step_compiled": list(row.step_compiled), "recompile_reasons": list(row.recompile_reasons),
              "limit_hit": row.recompile_limit_hit, "steady_compiles": row.steady_compiles,
              "compiles": row.compiles if ok and row.compiles is not None else math.nan,
              "recompiles": sum(row.step_compiled[1:]) if ok else math.nan,
              "compile_total_s": row.compile_total_s if ok and row.compile_total_s is not None else math.nan,
              "sequence_s": sum(row.step_ms) / 1000.0 if ok and row.step_ms else math.nan,  # ms -> s
              "steady_sequence_ms": float(sum(steady)),
              "others_cpu_pct": max(row.steady_others_cpu_pct.values(), default=math.nan)}
    for batch_size in sorted({int(b) for b in row.steady_ms}):
        record[f"steady_ms_bs{batch_size}"] = row.steady_ms[str(batch_size)] if ok else math.nan
    return record


def serving_frame(rows) -> pd.DataFrame:
    """One row per (model, setting): compiles, recompiles, compile_total_s, the two sequence totals,
    steady_ms_bs<N> per batch size, each one's speedup over the eager setting of the same model
    (speedup, speedup_bs<N>) and payback_passes (passes of the sequence that pay the compile time
    back). Failed rows keep their status with NaN numbers. Models in registry order, then SETTINGS."""
    from ..report.tables import sort_rows

    frame = pd.DataFrame.from_records([_record(row) for row in rows])
    if frame.empty:
        return frame
    if frame.duplicated(["model", "setting"]).any():
        raise ValueError("rows: more than one row per model and setting (several labels, sizes or dtypes?)")
    eager = frame[frame["setting"] == "eager"].set_index("model")
    baseline = lambda column: frame["model"].map(eager[column])  # noqa: E731 - each row's eager value (NaN: none)
    frame["speedup"] = baseline("steady_sequence_ms") / frame["steady_sequence_ms"]
    for batch_size in batch_sizes(frame):
        frame[f"speedup_bs{batch_size}"] = baseline(f"steady_ms_bs{batch_size}") / frame[f"steady_ms_bs{batch_size}"]
    frame["payback_passes"] = [
        breakeven_calls(c, e, s) if setting != "eager" and not np.isnan([c, e, s]).any() else math.nan
        for c, e, s, setting in zip(frame["compile_total_s"], baseline("steady_sequence_ms"),
                                    frame["steady_sequence_ms"], frame["setting"])]
    return sort_rows(frame, ["model", "setting"], {"setting": SETTINGS})


def serving_table(frame: pd.DataFrame) -> pd.DataFrame:
    """For display: per model and setting, compiles, recompiles, compile time, both sequence totals,
    steady ms per batch size and the speedup over eager; failed settings show their status."""
    from ..report.display import number
    from ..config.registry import display_name

    if frame.empty:
        return pd.DataFrame()
    columns = {"compiles": "Graphs compiled", "recompiles": "Recompiles", "compile_total_s": "Compile total (s)",
               "sequence_s": "Cold sequence (s)", "steady_sequence_ms": "Steady sequence (ms)",
               **{f"steady_ms_bs{b}": f"Batch {b} (ms)" for b in batch_sizes(frame)}, "speedup": "Speedup (×)"}
    table = pd.DataFrame({"Model": [display_name(m) for m in frame["model"]], "Setting": list(frame["setting"])})
    for column, title in columns.items():
        integer = column in ("compiles", "recompiles")
        table[title] = [number(v, integer=integer) if s == "ok" else s.upper()
                        for v, s in zip(frame[column].astype(float), frame["status"])]
    table["Why it recompiled"] = [_recompile_words(row) for row in frame.itertuples()]
    return table


def _recompile_words(row) -> str:
    """Dynamo's failed guards, and the two things a serving row's numbers may hide, in words."""
    from ..report.display import MISSING

    words = list(row.recompile_reasons)
    if row.limit_hit:
        words.append("recompile limit hit: dynamo ran later new shapes eagerly, without compiling")
    if row.steady_compiles:
        words.append(f"{row.steady_compiles} graph(s) compiled in the steady state: its latencies include compiling")
    return "; ".join(words) or MISSING


def _timeline(ax, rows: pd.DataFrame, colors: dict) -> None:
    """Wall time per request in sequence order (log y), one line per setting; circled where it compiled."""
    for row in rows.itertuples():
        if not row.step_ms:
            continue
        x = np.arange(1, len(row.step_ms) + 1)
        ms, compiled = np.asarray(row.step_ms, float), np.asarray(row.step_compiled, bool)
        ax.plot(x, ms, marker=".", color=colors.get(row.setting), label=row.setting)
        ax.scatter(x[compiled], ms[compiled], s=80, facecolors="none", edgecolors=colors.get(row.setting),
                   linewidths=1.5)
    sequence = max(rows["sequence"], key=len)
    ax.set_xticks(np.arange(1, len(sequence) + 1), [str(b) for b in sequence])
    ax.set_yscale("log")
    ax.set_xlabel("request (its batch size), in order")
    ax.set_ylabel("wall time per request (ms, log)")
    ax.set_title("Requests in order (circled: compiled)")
    ax.legend(title="setting", fontsize=8)


def serving_chart(frame: pd.DataFrame, model: str):
    """One model's study: its request timeline (left) and steady latency per batch size (right)."""
    import seaborn as sns

    from ..report.grouped_bars import Bars, empty_figure, figure, grouped_barh, legend, status_notes
    from ..config.registry import display_name

    rows = frame[frame["model"] == model] if not frame.empty else frame
    if rows.empty:
        return empty_figure(f"{model}: no serving rows")
    colors = dict(zip(SETTINGS, sns.color_palette("colorblind", len(SETTINGS))))
    sizes = batch_sizes(rows)
    fig, axes = figure(12, max(3.5, 1.2 + 0.22 * len(sizes) * len(rows)), ncols=2)
    _timeline(axes[0, 0], rows, colors)
    series = [Bars(row.setting, np.array([getattr(row, f"steady_ms_bs{b}") for b in sizes], float),
                   colors.get(row.setting), status_notes([row.status] * len(sizes))) for row in rows.itertuples()]
    grouped_barh(axes[0, 1], [f"bs {b}" for b in sizes], series)
    axes[0, 1].set_xlabel("steady-state median latency (ms)")
    axes[0, 1].set_title("Steady state per batch size")
    legend(axes[0, 1], series, "setting")
    fig.suptitle(f"Serving: {display_name(model)}")
    return fig


def _choose(rows: pd.DataFrame) -> tuple[pd.Series | None, pd.DataFrame]:
    """(the setting to use, None for eager; the compiled settings that qualified): the verdict's rule, of
    the settings at least MIN_GAIN faster than eager once warm that hit no recompile limit, the lowest
    cold sequence among those within MIN_GAIN of the fastest."""
    compiled = rows[(rows["setting"] != "eager") & (rows["status"] == "ok")]
    qualified = compiled[(compiled["speedup"] >= 1 + MIN_GAIN) & ~compiled["limit_hit"].astype(bool)]
    if qualified.empty:
        return None, qualified
    near_fastest = qualified[qualified["speedup"] * (1 + MIN_GAIN) >= qualified["speedup"].max()]
    return near_fastest.loc[near_fastest["sequence_s"].idxmin()], qualified


def _why(best: pd.Series, qualified: pd.DataFrame, rows: pd.DataFrame) -> str:
    from ..report.display import number, times

    fastest = qualified.loc[qualified["speedup"].idxmax()]
    per_size = ", ".join(f"batch {b} {times(best[f'speedup_bs{b}'])}" for b in batch_sizes(rows))
    speed = f"{times(best['speedup'])} eager's speed once warm over the sequence ({per_size})"
    if fastest["setting"] != best["setting"]:
        speed += f", within {MIN_GAIN:.0%} of the fastest ({fastest['setting']} {times(fastest['speedup'])})"
    others = "; ".join(f"{r.setting} {number(r.sequence_s)} s, {int(r.compiles)} graph(s)"
                       for r in qualified.itertuples() if r.setting != best["setting"])
    start = f"cold sequence {number(best['sequence_s'])} s with {int(best['compiles'])} graph(s)" + (
        f" ({others})" if others else "")
    pays = "never" if math.isinf(best["payback_passes"]) else f"after {number(best['payback_passes'], integer=True)} passes"
    text = f"{speed}; {start}; its compiles pay back {pays} of the sequence."
    if best["setting"] == "static":
        text += (" Static shapes compile once per new batch size: past dynamo's recompile_limit (8 by default) "
                 "new sizes run eagerly.")
    return text


class Serving(BaseStudy):
    name = "serving"
    row = ServingResult
    file_name = "serving.jsonl"
    option_name, options = "setting", SETTINGS
    no_rows = "No serving rows yet: no verdict."
    heading = "Variable batch sizes: dynamic shapes"

    def jobs(self, cfg) -> list[tuple[str, int, str]]:
        if not cfg.serving_batch_sizes:
            return []
        return [(model, cfg.serving_batch_sizes[0], setting) for model in cfg.models for setting in SETTINGS]

    def identity(self, cfg, model: str, option: str, device: str) -> dict:
        return model_fields(cfg, model, device) | dict(
            configuration="eager" if option == "eager" else cfg.compiled_configuration().name, setting=option,
            sequence=list(cfg.serving_batch_sizes))

    def measure(self, cfg, model: str, option: str, results_path: Path) -> ServingResult:
        self.check_option(option)
        if not cfg.serving_batch_sizes:
            raise ValueError("cfg.serving_batch_sizes: [] is not allowed; allowed: a sequence of batch sizes")
        return super().measure(cfg, model, option, results_path)

    def work(self, cfg, model: str, option: str, results_path, device: str, fields: dict) -> None:
        _measure(cfg, model, option, device, fields)

    def frame(self, results_path: Path, cells) -> pd.DataFrame:
        return serving_frame(self.read(results_path))

    def model_verdict(self, rows: pd.DataFrame) -> str:
        """Which setting to use for variable batch sizes, and why (_choose; docs/method.md, "Dynamic shapes"):
        a server runs long, so settings within MIN_GAIN of the fastest are equally good; past the recompile
        limit new sizes run eagerly, no answer for a server with many sizes."""
        from ..report.display import times
        from ..config.registry import display_name

        name = display_name(rows["model"].iloc[0])
        failed = ", ".join(f"{s} {st.upper()}" for s, st in zip(rows["setting"], rows["status"]) if st != "ok")
        tail = f" Failed: {failed}." if failed else ""
        busy = rows["others_cpu_pct"].max()
        if busy > DISTURBED_PCT:  # one process per setting: a busy moment is not averaged away
            tail += (f" Caveat: other programs used up to {busy:.0f}% of the CPU while timing; measure again on a "
                     "quiet machine.")
        if rows[(rows["setting"] == "eager") & (rows["status"] == "ok")].empty:
            return f"**{name}: no verdict**: no eager baseline to compare with.{tail}"
        best, qualified = _choose(rows)
        if best is None:
            compiled = rows[(rows["setting"] != "eager") & rows["speedup"].notna()]
            top = compiled.loc[compiled["speedup"].idxmax()] if not compiled.empty else None
            why = f" (best: {top['setting']} {times(top['speedup'])})" if top is not None else ""
            return (f"**{name}: use eager**: no compiled setting serves the sequence at least "
                    f"{MIN_GAIN:.0%} faster once warm without hitting the recompile limit{why}.{tail}")
        return f"**{name}: use {best['setting']}**: {_why(best, qualified, rows)}{tail}"

    def shown(self, frame: pd.DataFrame):
        yield serving_table(frame)
        for model in frame["model"].unique():
            yield serving_chart(frame, model)


STUDY = Serving()
