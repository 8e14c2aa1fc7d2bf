"""A cell's figures in words: its speedup with its interval ("1.88× (1.80–1.96×)"), what a caller waits
a call, what compiling costs and after how many calls it pays back. The numbers are the cell's
(results/); the pay-back count is stats.breakeven_calls. No torch.
"""

from __future__ import annotations

import math

import pandas as pd

from ..config.configurations import configuration
from ..results.stats import breakeven_calls
from .display import MISSING, number, rounded, span, times
from .tables import compiled_cold


def bounds_words(row, margin: float = math.nan) -> str:
    """"0.94–1.07×"; an end that would round onto the margin from the other side keeps its digits."""
    return span(row["race_ci95_low"], row["race_ci95_high"], margin)


def interval_words(row, margin: float = math.nan) -> str:
    return f"{times(row['race_speedup'])} ({bounds_words(row, margin)})"


def compile_cost_words(row) -> str:
    """"33 s cold, 4.6 s warm": the cold compile is one sample (two figures), the warm one a median; a
    package's "22 s to build, 0.55 s to start" (its build, then a new process's load and first answer)."""
    config = configuration(row["configuration"])
    if not config.compiled:
        return "nothing to compile"
    if pd.isna(row.get("compile_s")):
        return MISSING
    shipped = config.packaged or config.artifacts  # a new process starts from a file built ahead of time
    cold, warm = ("to build", "to start") if shipped else ("cold", "warm")
    if not shipped and not compiled_cold(row):  # the cache held it: no cold compile was measured
        cold = "from a filled compiler cache (no cold compile here)"
    text = f"{rounded(row['compile_s'])} s {cold}"
    return text + (f", {number(row['compile_warm_s'])} s {warm}" if not pd.isna(row.get("compile_warm_s")) else "")


def payback_words(row, over=None) -> tuple[str, float, float]:
    """("pays back after 190 calls (27 with a warm cache), saving 70 ms a call over eager", cold calls,
    warm calls). The time a call saves is read from the shown speedups, which share one eager time:
    eager float32's median × (1/`over`'s speedup − 1/the row's), `over` the no_compile_alternative
    (named, with its own speedup) or eager itself (1×)."""
    eager = row["eager_ms_median"]
    fast = eager / row["race_speedup"]
    before = eager / (over["race_speedup"] if over is not None else 1.0)
    # a first compile that read a filled cache is no cold figure: the pay-back is then the warm one's alone
    cold_known = not pd.isna(row.get("compile_s")) and (configuration(row["configuration"]).packaged
                                                         or compiled_cold(row))
    cold = breakeven_calls(row["compile_s"], before, fast) if cold_known else math.nan
    warm = breakeven_calls(row["compile_warm_s"], before, fast) if not pd.isna(row.get("compile_warm_s")) else math.nan
    if math.isnan(cold) and math.isnan(warm):
        return "", cold, warm
    against = ("eager" if over is None else f"{configuration(over['configuration']).words}, "
               f"{times(over['race_speedup'])} without a compile")
    if math.isinf(warm if math.isnan(cold) else cold):  # a dropped alternative's figure is its first round's
        return f"no pay-back: by these figures not faster than {against}", cold, warm
    config = configuration(row["configuration"])
    started = ("starting from the built package" if config.packaged else "starting from its cache artifacts"
               if config.artifacts else "with a warm cache")
    saving = f"saving {rounded(before - fast)} ms a call over {against}"
    if math.isnan(cold):
        return f"pays back after {rounded(warm)} calls {started}, {saving}", cold, warm
    warm_text = f" ({rounded(warm)} {started})" if not math.isnan(warm) else ""
    return f"pays back after {rounded(cold)} calls{warm_text}, {saving}", cold, warm


def latency_words(rec) -> str:
    """What a caller waits, per call: eager float32's median over the rounds the choice ran, and the same
    at the choice's speedup ("36 ms → 17 ms"), so the two latencies and the speedup beside them are one
    figure (the choice's own median, a ratio of medians rather than the rounds' paired figure, is in the
    tables below)."""
    eager, speedup = rec.get("eager_ms_median"), rec.get("race_speedup")
    if eager is None or speedup is None or pd.isna(eager) or pd.isna(speedup) or not speedup > 0:
        return MISSING
    return f"{number(eager)} ms → {number(eager / speedup)} ms"
