"""The start-up answer for a service, in words: per model, a table of every way a new replica can start
(its time to a first answer in a new process, its steady latency, what it ships, the calls after which
it pays back against eager started the same way) and one sentence saying which form is at full speed
soonest; then the code that applies each form. The numbers are results/startup.py's. No torch.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from ..config.configurations import configuration
from ..config.registry import display_name
from ..results.startup import soonest, start_rows, timed
from .apply_code import code_text
from .display import MISSING, model_text, number, rounded, status_text
from .page_html import escape

HEADING = "Start-up: what a new process pays before its first answer"
INTRO = ("Each form started in a new process that nothing had warmed (forked before anything was built or "
         "compiled), from its start to its first correct answer: the model built where the form runs its code, "
         "the form compiled or loaded, its first call (docs/method.md, \"Start-up\"). Steady latency: the cell's "
         "median. Pays back: calls after which a replica of the form has answered as many as eager's, both "
         "started at the same moment.")
STARTED = {"cold": "from an empty compiler cache", "warm": "from its own filled compiler cache"}


def form_words(name: str, start: str) -> str:
    """A start as the table names it: "eager float32", "compile (default mode), from an empty compiler
    cache", "an AOTInductor package"."""
    config = configuration(name)
    if start == "eager":
        return "eager float32 (no compile)"
    return f"{config.words}, {STARTED[start]}" if start in STARTED else config.words


def ships_words(row) -> str:
    """What a new process needs beyond the model's code and weights."""
    if row["start"] in ("eager", "cold"):
        return "nothing more"
    if row["start"] == "warm":
        return "its compiler cache, on the machine"
    size = row.get("ships_bytes")
    built = row.get("built_s")
    text = f"{number(size / 1e6)}\u00a0MB" if size is not None and not pd.isna(size) else MISSING  # no break before a unit
    return text + (f", built once in {rounded(built)}\u00a0s" if built is not None and not pd.isna(built) else "")


def calls_to_pay_back_words(calls: float) -> str:
    if calls is None or pd.isna(calls):
        return MISSING
    if math.isinf(calls):
        return "never: not faster a call"
    return "from its first call" if calls == 0 else f"after {rounded(calls)} calls"


def reason(error, limit: int = 160) -> str:
    """A failed start's error for a table cell: its first line without the source location the row keeps
    ("[evidence.py:147]"), cut at `limit` characters with an ellipsis."""
    line = re.sub(r"\s*\[[\w./-]+\.py:\d+\]$", "", (str(error).strip().splitlines() or [""])[0])
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


def startup_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One model's starts (results/startup.start_rows) as the page shows them."""
    first = [number(r.first_answer_s) + " s" if r.status == "ok" else f"{status_text(r.status)}: {reason(r.error)}"
             for r in rows.itertuples()]
    return pd.DataFrame({"Form": [form_words(r.configuration, r.start) for r in rows.itertuples()],
                         "First answer in a new process": first,
                         "Steady latency": [f"{number(v)} ms" if not pd.isna(v) else MISSING for v in rows["latency_ms"]],
                         "Ships": [ships_words(r) for r in rows.to_dict("records")],
                         "Pays back against eager (calls)": [calls_to_pay_back_words(v) for v in rows["payback_calls"]]})


def startup_sentence(model: str, rows: pd.DataFrame) -> str:
    """Which form is at full speed soonest for a new replica, and when each pays back against eager."""
    best = soonest(rows)
    eager = rows[rows["start"] == "eager"]
    name = display_name(model)
    if best is None:
        return f"{name}: no form was faster a call than eager float32 in these rounds: a replica starts soonest eager."
    head = (f"{name}: a new replica is at full speed soonest as {form_words(best['configuration'], best['start'])}: "
            f"its first answer after {number(best['first_answer_s'])} s, then {number(best['latency_ms'])} ms a call")
    if len(eager) and not pd.isna(eager["first_answer_s"].iloc[0]):
        head += (f" (eager float32: {number(eager['first_answer_s'].iloc[0])} s, then "
                 f"{number(eager['latency_ms'].iloc[0])} ms)")
    paid = [f"{form_words(r.configuration, r.start)} {calls_to_pay_back_words(r.payback_calls)}" for r in rows.itertuples()
            if r.start != "eager" and r.status == "ok" and not pd.isna(r.payback_calls)]
    return head + (f"; against eager started the same way, {'; '.join(paid)}." if paid else ".")


def code_html(rows: pd.DataFrame) -> str:
    """The code that applies each form (report/apply_code.py), a regional one's over the stacks its rows name."""
    shown = dict.fromkeys(zip(rows["configuration"], rows["regions_at"].fillna("")))
    blocks = [f"<p>{escape(configuration(name).words)}{escape(f' ({where})' if where else '')}:</p>"
              f"<pre>{escape(code_text(name, regions_at=where))}</pre>" for name, where in shown]
    return f"<details><summary>The code of each form</summary>{''.join(blocks)}</details>"


def startup_html(df: pd.DataFrame) -> str:
    """The page's start-up section, "" where the run timed no new process's start."""
    if not timed(df):
        return ""
    rows = start_rows(df)
    parts = [f"<h2>{escape(HEADING)}</h2>", f"<p>{escape(INTRO)}</p>"]
    for (label, model, batch), group in rows.groupby(["label", "model", "batch_size"], sort=False):
        several = rows["label"].nunique() > 1 or rows["batch_size"].nunique() > 1
        title = model_text(model, with_checkpoint=True) + (f", batch {batch}" if several else "")
        title += f" ({label})" if rows["label"].nunique() > 1 else ""
        table = startup_table(group).to_html(index=False, escape=True, border=0, classes="bench-startup", na_rep=MISSING)
        parts += [f"<h3>{escape(title)}</h3>", f'<p class="bench-startup-answer">{escape(startup_sentence(model, group))}</p>',
                  table]
    return "".join(parts) + code_html(rows)
