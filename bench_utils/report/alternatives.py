"""What an answer names beside its choice, in words: the runner-up and how the two compare, the
configuration a user has without compiling, plain torch.compile and the configurations out of the race,
a rival whose figure reads higher and why the choice stands, and each way of serving the model raced
(torch.compile in the process, a file built ahead of time). No torch.
"""

from __future__ import annotations

import pandas as pd

from ..config.configurations import BASELINE, configuration
from ..config.modes import COMPILE_FORM
from ..results.race import CONTENDER, DROPPED, RUNNER_UP
from .display import MISSING, span, times
from .figure_words import compile_cost_words, interval_words
from .tables import first_row


ALTERNATIVE_OUTCOMES = (RUNNER_UP, CONTENDER, DROPPED)  # raced, kept eager's answer, has a figure


def no_compile_alternative(rows: pd.DataFrame, rec) -> dict | None:
    """The fastest configuration but eager float32 that compiles nothing and stayed in the race (kept
    eager's answer, measured: eager in bfloat16 autocast), when a compiled `rec` is recommended and its
    race interval lies above 1× (surely faster than eager float32): a user has its speed without
    compiling, so a compile pays back only on what it adds to it."""
    if rec is None or not configuration(rec["configuration"]).compiled:
        return None
    faster = [row for row in rows.to_dict("records") if row["configuration"] != BASELINE
              and not configuration(row["configuration"]).compiled and row.get("race_outcome") in ALTERNATIVE_OUTCOMES
              and (row.get("race_ci95_low") or 0.0) > 1.0]  # NaN or none: no interval, no alternative
    return max(faster, key=lambda row: row["race_speedup"], default=None)


def runner_up_words(rec, runner, worthwhile: float) -> str:
    """The runner-up and how the choice compares with it, paired round by round (a dropped runner-up:
    over the first round, the one both measured, its interval as wide as a round moves)."""
    if rec is None or runner is None:
        return MISSING
    text = f"{configuration(runner['configuration']).words}: {interval_words(runner)}"
    low, high = rec["versus_ci95_low"], rec["versus_ci95_high"]
    if pd.isna(low):
        return text
    gap = f"{times(rec['versus_runner_up'])} ({span(low, high)})"
    dropped = runner["race_outcome"] == "dropped"
    where = ", in the first round, which dropped it" if dropped else ""
    if rec.get("race_simpler") and low <= 1.0 <= high:  # results/race.simpler_first
        return f"{text}; the rounds cannot tell it from the choice ({gap}), the simpler to compile and keep"
    if rec.get("race_simpler"):  # a compile adding less than the margin over the choice, which compiles nothing
        return (f"{text}; faster than the choice by {times(1 / rec['versus_runner_up'])} "
                f"({span(1 / high, 1 / low)}), less than the {times(worthwhile)} a compile must add: the "
                "choice compiles nothing")
    if 1 / worthwhile <= low and high <= worthwhile:
        return f"{text}; within the margin of the choice ({gap}{where})"
    if low > 1.0:
        return f"{text}; the choice is faster ({gap}{where})"
    if dropped:  # the round's own block pairs dropped it, but a round moves by more than the gap
        return f"{text}; dropped after the first round, where the choice was ahead by {gap}: not sure across rounds"
    return f"{text}; can't tell which of the two is faster ({gap})"


FORM_WORDS = {COMPILE_FORM: "torch.compile", "cache-artifacts": "torch.compile's cache artifacts",
              "precompile": "torch.compiler.precompile", "aot-inductor": "AOTInductor", "onnxruntime": "ONNX Runtime"}


def _by_form(rows: pd.DataFrame) -> dict[str, list[dict]]:
    """The compiled configurations' cells of a group by way of serving (FORM_WORDS' order)."""
    forms: dict[str, list[dict]] = {}
    for row in rows.to_dict("records"):
        config = configuration(row["configuration"])
        if config.compiled:
            forms.setdefault(config.form, []).append(row)
    return dict(sorted(forms.items(), key=lambda item: list(FORM_WORDS).index(item[0])))


def _accurate(members: list[dict]) -> list[dict]:
    """The cells measured ok that kept eager's answer and have a figure."""
    return [row for row in members if row["status"] == "ok" and row.get("accuracy_ok") is True
            and not pd.isna(row["race_speedup"])]


def serving_form_choices(rows: pd.DataFrame) -> list[str]:
    """Per way of serving a group raced beside torch.compile (a file built ahead of time), its fastest
    accurate configuration; [] where the profile raced none."""
    forms = _by_form(rows)
    if not any(form != COMPILE_FORM for form in forms):
        return []
    return [max(accurate, key=lambda row: row["race_speedup"])["configuration"]
            for accurate in map(_accurate, forms.values()) if accurate]


def serving_forms_line(rows: pd.DataFrame) -> str:
    """The deployment question in one line, where the profile raced a form compiled ahead of time: per
    way to serve the model (torch.compile in the process, each file built ahead of time), its fastest
    accurate configuration's figure and what it costs to start; a form that could not run it, why (the
    exporter's or the runtime's first line)."""
    forms = _by_form(rows)
    if not any(form != COMPILE_FORM for form in forms):
        return ""
    parts = []
    for form, members in forms.items():
        accurate = _accurate(members)
        if not accurate:
            failed = next((row for row in members if row["status"] not in ("ok", "skipped")), None)
            shown = failed or next((row for row in members if row["status"] == "skipped"), members[0])
            why = (str(shown.get("error") or "").strip().splitlines() or [shown["status"]])[0]
            if failed is None and shown["status"] == "skipped":  # the budget left it out: it was not tried
                parts.append(f"{FORM_WORDS[form]}: not raced ({why})")  # the sweep's own sentence, whole
            else:
                # an error's first line, cut: a compiler's can run to thousands of characters
                parts.append(f"{FORM_WORDS[form]}: cannot serve it ({why[:160] or 'changes the answer'})")
            continue
        best = max(accurate, key=lambda row: row["race_speedup"])
        config = configuration(best["configuration"])
        # torch.compile: as which configuration; a built file: its modifiers ("with freezing"), if any
        how = (f"as {config.words}" if form == COMPILE_FORM else
               " ".join(m.words for m in config.modifiers if not m.form))  # the form's own modifier is its name
        parts.append(f"{FORM_WORDS[form]}: {interval_words(best)}{f' {how}' if how else ''}, {compile_cost_words(best)}")
    return "; ".join(parts)


def also_raced_line(rows: pd.DataFrame, rec) -> str:
    """Plain torch.compile's figure beside the choice, and the configurations out of the race, why, each named
    as the page names a configuration (Configuration.words), never by its code."""
    parts = []
    why = {"dropped": "dropped after the first round, slower than the choice there", "inaccurate": "changes the answer",
           "unsupported": None, "skipped": None, "failed": None}
    runner_up = rec.get("runner_up") if rec is not None else None
    shown = {runner_up} if runner_up else set()  # the runner-up has a column of its own
    by_reason: dict[str, list[str]] = {}  # configurations out for the same reason are named together
    plain, plain_reason = None, None  # plain default's figure (the guide's setting), and why it left if it did
    default = first_row(rows, "configuration", "default")
    if rec is not None and rec["configuration"] != "default" and runner_up != "default" and default is not None and \
            not pd.isna(default["race_speedup"]):
        plain = f"plain torch.compile (default mode) {interval_words(default)}"
        plain_reason = why.get(default["race_outcome"])
        if plain_reason:
            by_reason[plain_reason] = []  # its reason's list comes first
        else:
            parts.append(plain)
        shown.add("default")
    for row in rows.itertuples():
        if row.race_outcome == CONTENDER and getattr(row, "race_trailing", False) and row.configuration not in shown:
            reason = f"{interval_words(row._asdict())}, timed no more once the choice was faster over the rounds both ran"
            by_reason.setdefault(reason, []).append(configuration(row.configuration).words)
        elif row.race_outcome in why and row.configuration not in shown:
            reason = why[row.race_outcome] or (row.error if row.race_outcome in ("unsupported", "skipped")
                                               else row.status.upper())
            by_reason.setdefault(reason, []).append(configuration(row.configuration).words)
    for reason, names in by_reason.items():  # plain default's figure first, "and" before the names beside it
        named = " and ".join(filter(None, [plain if reason == plain_reason else "", ", ".join(names)]))
        parts.append(f"{named}: {reason}")
    return "; ".join(parts) or MISSING


def higher_reading(rows: pd.DataFrame, rec, runner) -> tuple[str, dict | None]:
    """The configuration whose figure reads higher than the choice's, and why the choice stands: "untold"
    (the rounds cannot tell the two apart and the choice is the simpler: results/race.simpler_first),
    "paired" (over the rounds both ran the choice was faster, its own figure lowered for the luck that
    picked it), "lowered" (no paired figure with it: the choice's figure is lowered); ("", None) where none
    reads higher."""
    if rec is None or pd.isna(rec.get("race_speedup")):
        return "", None
    higher = [row for row in rows.to_dict("records") if row["configuration"] != rec["configuration"]
              and row.get("race_outcome") in ALTERNATIVE_OUTCOMES and not pd.isna(row.get("race_speedup"))
              and row["race_speedup"] > rec["race_speedup"]]
    if not higher:
        return "", None
    rival = max(higher, key=lambda row: row["race_speedup"])
    low, high = rec.get("versus_ci95_low"), rec.get("versus_ci95_high")
    if runner is None or rival["configuration"] != runner["configuration"] or pd.isna(low):
        return "lowered", rival
    return ("untold" if low <= 1.0 <= high else "paired"), rival


def faster_looking(rows: pd.DataFrame, rec, runner) -> str:
    """Why the choice is recommended over a configuration whose figure reads higher, in the same answer
    (a reader would otherwise see a tool that picked the slower one): higher_reading's reason in words."""
    why, rival = higher_reading(rows, rec, runner)
    if rival is None:
        return ""
    named = f"{configuration(rival['configuration']).words} reads {times(rival['race_speedup'])}"
    if why == "lowered":
        return f"({named} over its own rounds: the choice's figure is lowered for the luck that picked it.)"
    paired = (f"this choice runs at {times(rec['versus_runner_up'])} ({span(rec['versus_ci95_low'], rec['versus_ci95_high'])}) "
              "its speed")
    if why == "untold":
        return f"({named}, but the rounds cannot tell the two apart: {paired}; the simpler is recommended.)"
    return (f"({named} on its own, but {paired} where both ran; the choice's figure is lowered for the luck that "
            "picked it.)")


def rival_note(rows: pd.DataFrame, rec, runner) -> str:
    """higher_reading's reason in a few words, for a table cell: "as fast as X by these rounds; the simpler"."""
    why, rival = higher_reading(rows, rec, runner)
    if rival is None:
        return ""
    words = configuration(rival["configuration"]).words
    if why == "untold":
        return f"as fast as {words} by these rounds; the simpler"
    return f"{words} reads higher on its own; this one led where both ran" if why == "paired" else \
        f"{words} reads higher on its own; this figure is lowered for its pick"
