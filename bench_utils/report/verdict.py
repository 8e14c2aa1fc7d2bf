"""The answer first: per model and batch size, the fastest accurate configuration, whether it is worth
it, and for what (batch, precision, device); in words. Reads the DataFrame of aggregate.to_dataframe
(the race, results/race.py) and the decision code (results/decision.py); computes nothing the cells do
not hold except the pay-back count (stats.breakeven_calls, against the fastest configuration that
compiles nothing: no_compile_alternative). No torch.

Every figure on a verdict line comes from the recommended configuration's cell (its compile cost shown
for every decision: for a gain too small it is the deciding fact); what a line shows and which caveats
ride on it, the others said once (page_caveats): docs/method.md, "What the page tells apart".
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

import pandas as pd

from ..config.bench_config import BenchConfig
from ..config.configurations import BASELINE, configuration
from ..config.modes import COMPILE_FORM
from ..config.registry import display_name
from ..results import decision as codes
from ..results.decision import MAX_ROUNDS_TO_DECIDE, decide
from ..results.race import CONTENDER, DROPPED, RUNNER_UP
from ..results.stats import FEW_ROUNDS, NOISY_SPREAD, breakeven_calls
from ..messages import counted
from ..paths import out_argument
from .display import (MISSING, model_text, number, plus_minus, rounded, span, status_text, times,
                      times_beside)
from .explain import why_sentence
from .next_step import Settling, next_step
from .header import weights_words
from .notes import compile_note_words, disturbance_caveat, disturbance_words, machine_was_busy, outcome_words
from .tables import RACE_FIGURES, check_frame, compiled_cold, cuda_graph_cells, first_row, ordered_models

COLUMNS = ["label", "model", "batch_size", "precision", "device", "verdict", "reason", "configuration", "race_speedup",
           "race_ci95_low", "race_ci95_high", "compile_s", "compile_warm_s", "compile_cold", "breakeven_calls",
           "breakeven_warm_calls", "latency", "answer", "cost", "runner_up", "others", "forms",
           "caveats", "why", "summary", "settle_rounds", "settle_s", "sweep_s", "rival", "rounds"]
NOISY_FACTOR = 2.0  # a cell is "noisy" beside the others when its spread is this many times the run's typical one
WORDS = {codes.COMPILE: "compile", codes.USE: "don't compile (faster without)", codes.NO_GAIN: "no worthwhile gain",
         codes.SLOWER: "don't compile (slower)", codes.CANT_TELL: "can't tell", codes.INACCURATE: "no accurate option",
         codes.NO_DATA: "no data"}


@dataclass(frozen=True)
class Rules:
    """What a verdict is decided against: the profile's margin and precision settings, BenchConfig's
    defaults unless a config says otherwise (Rules.of): written once, there."""

    worthwhile: float = BenchConfig.worthwhile
    target_halfwidth: float = BenchConfig.target_halfwidth
    budget_min: float = BenchConfig.budget_min
    params: str = ""  # the parameters file a page was measured with: its advice is a command on it
    out: str = ""  # the reports folder it was measured into, where not the default one
    max_repeats: int = BenchConfig.max_repeats  # rounds per cell the profile allows

    @classmethod
    def of(cls, cfg, params: str = "", results_path=None) -> "Rules":
        """The profile's rules; its advice measures into `results_path`'s reports folder (paths.out_argument)."""
        return cls(cfg.worthwhile, cfg.target_halfwidth, cfg.budget_min, params,
                   out_argument(results_path) if results_path is not None else "", cfg.max_repeats)

    def measuring_command(self, *flags: str) -> str:
        """The command that measures more of the profile, as typed in the checkout after `make report`:
        `report` on its parameters file (and reports folder), which resumes, with `flags` (a page made
        with --report-only, which measures nothing, must not say "the same command")."""
        words = [shlex.quote(self.params or "PARAMS.yaml"), *(["--out", shlex.quote(self.out)] if self.out else []),
                 *flags]
        return f'make report PARAMS="{" ".join(words)}"'


def _bounds(row, margin: float = math.nan) -> str:
    """"0.94–1.07×"; an end that would round onto the margin from the other side keeps its digits."""
    return span(row["race_ci95_low"], row["race_ci95_high"], margin)


def _interval(row, margin: float = math.nan) -> str:
    return f"{times(row['race_speedup'])} ({_bounds(row, margin)})"


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


def latency_words(rec) -> str:
    """What a caller waits, per call: eager float32's median over the rounds the choice ran, and the same
    at the choice's speedup ("36 ms → 17 ms"), so the two latencies and the speedup beside them are one
    figure (the choice's own median, a ratio of medians rather than the rounds' paired figure, is in the
    tables below)."""
    eager, speedup = rec.get("eager_ms_median"), rec.get("race_speedup")
    if eager is None or speedup is None or pd.isna(eager) or pd.isna(speedup) or not speedup > 0:
        return MISSING
    return f"{number(eager)} ms → {number(eager / speedup)} ms"


def _answer_sentence(outcome: str, reason: str, row, rules: Rules) -> str:
    """The answer in words: the decision's outcome with the chosen configuration's figure, or why there
    is none ("Can't tell", with what settles it)."""
    if row is None:
        return ""
    config = configuration(row["configuration"])
    what, interval = config.words, _interval(row, rules.worthwhile)
    if outcome == codes.COMPILE:
        return f"Compile — {what}: {times(row['race_speedup'])} faster ({_bounds(row)})"
    if outcome == codes.USE:
        return f"Don't compile — run {what}: {times(row['race_speedup'])} faster ({_bounds(row)}), nothing to compile"
    if outcome == codes.SLOWER:
        return f"Don't compile — slower: {interval} with {what}, the fastest configuration"
    if outcome == codes.NO_GAIN:
        gain = max(0.0, row["race_ci95_high"] - 1.0)
        at_most = (f"at most {gain:.0%}" if round(gain * 100) < round((rules.worthwhile - 1.0) * 100)
                   else f"less than {rules.worthwhile - 1.0:.0%}")  # 9.97% is not "at most 10%" of a 10% margin
        return (f"No worthwhile gain: {interval} with {what}: {at_most} faster, below the "
                f"{times(rules.worthwhile)} a compile must bring")
    return (f"Can't tell: {interval} with {what} straddles {times(rules.worthwhile)}: "
            f"{_cant_tell(reason, row, rules)}")


def _cant_tell(reason: str, row, rules: Rules) -> str:
    """Why the interval straddles the margin, and whether more rounds settle it (the run's one next step
    measures them: next_step.py)."""
    width = row.get("race_halfwidth")
    if reason == "busy":
        state = "was busy" if machine_was_busy(row) else "moved"
        settling = Settling.of(row, rules.worthwhile)
        more = ("; the next step measures more rounds: take it on a quiet machine" if settling.possible
                else "; run again on a quiet machine")
        return f"the machine {state} while timing ({disturbance_words(row)}){more}"
    if width is None or not math.isfinite(width):  # one block pair: no spread to halve
        return "its interval rests on one block pair; run again with more rounds (repeats) and blocks"
    least, pairs = row.get("race_least_pair"), row.get("race_pairs") or 0
    # the blocks say "faster" where the rounds' interval cannot yet: that first
    blocks = (f"faster in every one of its {pairs:.0f} block pairs (by {times(least)} at least), but over "
              f"{row['race_rounds']:.0f} rounds known to {plus_minus(width)} only; "
              if least and least > 1.0 and pairs >= 4 and row["race_ci95_low"] <= 1.0 else "")
    return blocks + _more_rounds(row, rules)


def _more_rounds(row, rules: Rules) -> str:
    """What settles a figure straddling the margin: the rounds its spread asks for (next_step.Settling),
    in minutes of this machine; the command is the run's next step."""
    settling = Settling.of(row, rules.worthwhile)
    if not settling.possible:
        point, spread = row.get("race_speedup"), row.get("race_round_sd")
        if point and spread and not (pd.isna(point) or pd.isna(spread)):
            # the distance to the margin and the spread together: 1.09x with rounds moving ~5% and 1.08x with
            # rounds moving ~15% both need more than MAX_ROUNDS_TO_DECIDE
            return (f"at {times_beside(point, rules.worthwhile)} it lies too close to {times(rules.worthwhile)} for "
                    f"rounds that move by {plus_minus(math.expm1(spread))} each to settle it within "
                    f"{MAX_ROUNDS_TO_DECIDE} rounds: set worthwhile to the gain that matters to you, or run on a "
                    "quieter machine")
        return ("its rounds spread too widely for more of them to settle it: run again on a quiet machine, or set "
                "worthwhile to the gain that matters to you")
    minutes = f" (about {max(1, round(settling.seconds / 60))} min)" if settling.seconds else ""
    return f"about {counted(round(settling.rounds), 'more round')} would settle it{minutes}: see the next step"


def _runner_up(rec, runner, rules: Rules) -> str:
    """The runner-up and how the choice compares with it, paired round by round (a dropped runner-up:
    over the first round, the one both measured, its interval as wide as a round moves)."""
    if rec is None or runner is None:
        return MISSING
    text = f"{configuration(runner['configuration']).words}: {_interval(runner)}"
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
                f"({span(1 / high, 1 / low)}), less than the {times(rules.worthwhile)} a compile must add: the "
                "choice compiles nothing")
    if 1 / rules.worthwhile <= low and high <= rules.worthwhile:
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


def _serving_forms_line(rows: pd.DataFrame) -> str:
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
        parts.append(f"{FORM_WORDS[form]}: {_interval(best)}{f' {how}' if how else ''}, {compile_cost_words(best)}")
    return "; ".join(parts)


def _also_raced_line(rows: pd.DataFrame, rec) -> str:
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
        plain = f"plain torch.compile (default mode) {_interval(default)}"
        plain_reason = why.get(default["race_outcome"])
        if plain_reason:
            by_reason[plain_reason] = []  # its reason's list comes first
        else:
            parts.append(plain)
        shown.add("default")
    for row in rows.itertuples():
        if row.race_outcome == CONTENDER and getattr(row, "race_trailing", False) and row.configuration not in shown:
            reason = f"{_interval(row._asdict())}, timed no more once the choice was faster over the rounds both ran"
            by_reason.setdefault(reason, []).append(configuration(row.configuration).words)
        elif row.race_outcome in why and row.configuration not in shown:
            reason = why[row.race_outcome] or (row.error if row.race_outcome in ("unsupported", "skipped")
                                               else row.status.upper())
            by_reason.setdefault(reason, []).append(configuration(row.configuration).words)
    for reason, names in by_reason.items():  # plain default's figure first, "and" before the names beside it
        named = " and ".join(filter(None, [plain if reason == plain_reason else "", ", ".join(names)]))
        parts.append(f"{named}: {reason}")
    return "; ".join(parts) or MISSING


def _rival(rows: pd.DataFrame, rec, runner) -> tuple[str, dict | None]:
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


def _faster_looking(rows: pd.DataFrame, rec, runner) -> str:
    """Why the choice is recommended over a configuration whose figure reads higher, in the same answer
    (a reader would otherwise see a tool that picked the slower one): _rival's reason in words."""
    why, rival = _rival(rows, rec, runner)
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
    """_rival's reason in a few words, for a table cell: "as fast as X by these rounds; the simpler"."""
    why, rival = _rival(rows, rec, runner)
    if rival is None:
        return ""
    words = configuration(rival["configuration"]).words
    if why == "untold":
        return f"as fast as {words} by these rounds; the simpler"
    return f"{words} reads higher on its own; this one led where both ran" if why == "paired" else \
        f"{words} reads higher on its own; this figure is lowered for its pick"


def _caveats(rec, typical_spread: float, few_rounds_apart: bool) -> list[str]:
    """What sets this model's answer apart from the page's other answers (`few_rounds_apart`: some
    figures of the page rest on FEW_ROUNDS rounds or more, so fewer sets a model apart)."""
    if rec is None:
        return []
    notes = []
    rounds = _rounds(rec)
    if few_rounds_apart and 0 < rounds < FEW_ROUNDS:
        notes.append(f"{rounds} round{'s' if rounds != 1 else ''} only: so few can give too narrow or too wide "
                     "an interval")
    if (rec.get("graph_breaks") or 0) > 0:
        notes.append(f"{int(rec['graph_breaks'])} graph break(s)")
    if rec.get("disturbed"):
        notes.append(disturbance_caveat(rec))
    spread = _spread(rec)
    if spread > NOISY_SPREAD and spread > NOISY_FACTOR * typical_spread:
        notes.append(f"noisy timings: calls spread ±{spread / 2:.0%}, {spread / typical_spread:.0f}× the page's typical")
    notes += [words for words in (compile_note_words(rec), outcome_words(rec)) if words]
    return notes


def _spread(row) -> float:
    """(p90 - p10) / median of a cell's calls."""
    median = row.get("latency_ms_median")
    if not median or pd.isna(median):
        return 0.0
    return (row["latency_ms_p90"] - row["latency_ms_p10"]) / median


def verdicts(df, rules: Rules = Rules()) -> pd.DataFrame:
    """One row per (label, model, batch size): the decision, the cell behind it, its cost, runner-up,
    the configurations out of the race, caveats and the answer in words."""
    check_frame(df)
    ok = df[df["status"] == "ok"]
    typical = float(pd.Series([_spread(r) for _, r in ok.iterrows()]).median()) if not ok.empty else 0.0
    few_apart = not _few_rounds_everywhere(df)
    records = []
    for label in sorted(set(df["label"])):
        run = df[df["label"] == label]
        groups = [(model, int(batch), run[(run["model"] == model) & (run["batch_size"] == batch)])
                  for model in ordered_models(run["model"])
                  for batch in sorted(set(run.loc[run["model"] == model, "batch_size"]))]
        for model, batch, rows in groups:
            records.append(_verdict_record(label, model, batch, rows, rules, typical, few_apart))
    return pd.DataFrame.from_records(records, columns=COLUMNS)


def _decision(rows: pd.DataFrame, rec, rules: Rules):
    """The group's decision (results/decision.py) for its recommended cell `rec` (None: none was)."""
    ran = rows[(rows["configuration"] != BASELINE) & (rows["status"] == "ok")]
    return decide(rec, rules.worthwhile, rules.target_halfwidth, any_accurate=ran.empty or rec is not None)


def _rounds(rec) -> int:
    rounds = rec.get("race_rounds")
    return int(rounds) if rounds is not None and not pd.isna(rounds) else 0


def _few_rounds_everywhere(df) -> bool:
    """Does every recommended figure of the page rest on fewer than FEW_ROUNDS rounds?"""
    recommended = df[df["race_outcome"] == "recommended"] if "race_outcome" in df else df.iloc[0:0]
    rounds = [_rounds(rec) for rec in recommended.to_dict("records")]
    return bool(rounds) and all(0 < n < FEW_ROUNDS for n in rounds)


def _verdict_record(label: str, model: str, batch: int, rows: pd.DataFrame, rules: Rules, typical: float,
                    few_apart: bool) -> dict:
    rec = first_row(rows, "race_outcome", "recommended")
    runner = first_row(rows, "configuration", rec["runner_up"]) if rec is not None and rec.get("runner_up") else None
    decision = _decision(rows, rec, rules)
    device = str(rows["device"].iloc[0]).upper()
    precision = configuration(rec["configuration"]).precision if rec else ""
    record = {"label": label, "model": model, "batch_size": batch, "precision": precision, "device": device,
              "verdict": decision.outcome,
              "reason": decision.reason, "runner_up": _runner_up(rec, runner, rules),
              "others": _also_raced_line(rows, rec), "forms": _serving_forms_line(rows),
              "caveats": "; ".join(_caveats(rec, typical, few_apart)), "why": why_sentence(rec) if rec else ""}
    name = f"{display_name(model)} (batch {batch}, {device})"
    if rec is None:
        failed = sorted({status_text(status) for status in rows.loc[rows["status"] != "ok", "status"]})
        text = ("No configuration kept eager's answer" if decision.outcome == codes.INACCURATE else
                f"No answer: the configurations were {', '.join(failed)}" if failed else "No answer: not measured")
        return record | {"answer": text, "cost": MISSING, "latency": MISSING, "summary": f"{name}: {text}"}
    cost = compile_cost_words(rec)
    pays, cold, warm = (payback_words(rec, no_compile_alternative(rows, rec)) if decision.outcome == codes.COMPILE
                        else ("", math.nan, math.nan))
    answer = " ".join(filter(None, [_answer_sentence(decision.outcome, decision.reason, rec, rules),
                                    _faster_looking(rows, rec, runner)]))
    # a busy machine's "Can't tell" too: more rounds, measured when it is quiet, settle it
    settling = Settling.of(rec, rules.worthwhile) if decision.outcome == codes.CANT_TELL else Settling(math.inf, 0.0)
    record |= {"configuration": rec["configuration"], **{column: rec[column] for column in RACE_FIGURES},
               "settle_rounds": settling.rounds, "settle_s": settling.seconds, "sweep_s": rec.get("sweep_s"),
               "rounds": _rounds(rec),
               "rival": rival_note(rows, rec, runner),
               "compile_s": rec["compile_s"], "compile_warm_s": rec["compile_warm_s"],
               "compile_cold": compiled_cold(rec), "breakeven_calls": cold,
               "breakeven_warm_calls": warm, "latency": latency_words(rec), "answer": answer,
               "cost": cost + (f"; {pays}" if pays else "")}
    latency = f"; {record['latency']} a call" if record["latency"] != MISSING else ""
    said = cost == MISSING or answer.endswith(cost)  # "..., nothing to compile" is said once
    return record | {"summary": f"{name}: {answer}" + ("" if said else f"; {cost}") +
                     (f"; {pays}" if pays else "") + latency}


LEGEND = ("Speedup: eager float32 time ÷ the configuration's (2× = twice as fast), the two timed in turns within "
          "each round and compared block by block, with its 95% interval over every round; the recommended one's is "
          "lowered by the most the round that chose it can have lifted it; between configurations the rounds cannot "
          "tell apart, the simpler is recommended, and its answer names the faster-looking one. The latencies beside "
          "an answer are eager's median over the rounds the choice ran and the same at the choice's speedup; each "
          "configuration's own median, in the tables, gives a ratio of medians, which is not the median of the blocks' "
          "ratios and can differ a little. The improvement (%) is the speedup's. Worth it when the whole interval is at "
          "or above the margin (worthwhile, "
          "{margin}); no worthwhile gain when all of it is below; can't tell when it straddles the margin. A configuration "
          "is a compile mode and its modifiers; the fastest one that keeps eager's answer is recommended. Pays back: "
          "calls until the time saved covers compiling (cold: empty compiler cache; warm: the cache filled), saved "
          "against eager float32 or, where one is surely faster (its interval above 1×) and keeps eager's answer, the "
          "fastest configuration that compiles nothing (eager in bfloat16 autocast): a speed had without compiling; "
          "the time saved is read from the speedups shown.")


SHORT_LEGEND = ("Speedup: eager float32 time ÷ the configuration's (2× = twice as fast), with its 95% interval over "
                "the rounds; the chosen latency is eager's at that speedup. Compile when the whole interval is at or "
                "above {margin}; no worthwhile gain when all of it is below; can't tell when it straddles {margin}. "
                "Compile cost: cold with an empty compiler cache, warm with it filled.")


def legend(rules: Rules = Rules()) -> str:
    return LEGEND.format(margin=times(rules.worthwhile))


def short_legend(rules: Rules = Rules()) -> str:
    """The legend a first screen has room for (legend: the whole of it)."""
    return SHORT_LEGEND.format(margin=times(rules.worthwhile))


def page_caveats(df, first_pass: tuple[int, int] | None = None, rules: Rules = Rules()) -> list[str]:
    """Caveats that hold for every model of the page: said once, under the verdict. `first_pass`: the
    profile's first-pass rounds left and in all (sweep/adaptive.first_pass_state), when known; what to do
    about them is the run's one next step (next_step.py)."""
    notes = []
    left, rounds = first_pass or (0, 0)
    if left:  # first: every figure below is of an unfinished run, and the cure is not a larger budget
        notes.append(f"The sweep stopped before its first pass ended: {left} of {rounds} rounds are still to measure, "
                     "so some figures rest on fewer rounds than the profile asks, and cells may be missing.")
    ok = df[df["status"] == "ok"]
    if not ok.empty and "random" in set(ok.get("weights", [])):
        notes.append(f"{weights_words(ok).capitalize()}: the latencies stand (same architecture and input shape), "
                     "the predictions and the accuracy checks of lower precisions do not.")
    compiled = ok[ok["configuration"] != BASELINE]
    graphs, pools = cuda_graph_cells(ok)
    if not graphs.empty:
        held = (f"{number(round(pools.min()))}–{number(round(pools.max()))} MiB here" if len(pools) > 1 else
                f"{number(round(pools.iloc[0]))} MiB here" if len(pools) else "memory")
        names = sorted(set(graphs["configuration"]))
        notes.append(f"{', '.join(names)} replay{'s' if len(names) == 1 else ''} CUDA graphs: their speed holds for the "
                     "input shape they recorded (a new batch size or image size records a new graph, and compiles "
                     "again); a call's outputs are overwritten by the next call (clone what you keep); the graphs' "
                     f"memory pool ({held}) stays reserved beside the model.")
    if not compiled.empty and not compiled["between_process"].fillna(False).astype(bool).any():
        notes.append("One process per cell: the intervals leave out the variation from one run to the next.")
    if _few_rounds_everywhere(df) and not left:
        notes.append(f"Every figure rests on fewer than {FEW_ROUNDS} rounds: an interval over so few can be too narrow or "
                     "too wide.")
    return notes


def verdict_table(df, rules: Rules = Rules()) -> pd.DataFrame:
    """The verdict as a page's first screen shows it: one row per model and batch size, for what, what a
    call takes eager and chosen, the answer, the compile cost, what to watch out for; the run's label only
    when several. The race behind each answer: race_table."""
    table = verdicts(df, rules)
    shown = pd.DataFrame({"Model": [model_text(m, with_checkpoint=True) for m in table["model"]],
                          "For": _holds_for(table), "Latency (eager → chosen)": table["latency"].fillna(MISSING),
                          "Answer": table["answer"], "Compile cost": table["cost"],
                          "Watch out": [c or MISSING for c in table["caveats"].fillna("")]})
    if table["forms"].fillna("").astype(bool).any():  # the profile raced forms built ahead of time
        shown.insert(4, "How to serve it", table["forms"].fillna("").replace("", MISSING))
    if table["label"].nunique() > 1:
        shown.insert(0, "Run", table["label"])
    return shown


def race_table(df, rules: Rules = Rules()) -> pd.DataFrame:
    """The race behind each answer of verdict_table: the runner-up and how the choice compares with it,
    the configurations out of the race and why, why the choice is faster."""
    table = verdicts(df, rules)
    shown = pd.DataFrame({"Model": [model_text(m) for m in table["model"]], "For": _holds_for(table),
                          "Runner-up": table["runner_up"], "Also raced": table["others"],
                          "Why": [w or MISSING for w in table["why"]]})
    if table["label"].nunique() > 1:
        shown.insert(0, "Run", table["label"])
    return shown


def _holds_for(table: pd.DataFrame) -> list[str]:
    """What each answer holds for: "batch 1, float32, cpu"."""
    return [", ".join(filter(None, (f"batch {b}", p, d)))
            for b, p, d in zip(table["batch_size"], table["precision"], table["device"])]


FAILED_STATUSES = ("oom", "error", "timeout", "crashed")  # a cell that --retry-failed measures again


def run_next_step(df, rules: Rules = Rules(), rounds_left: int = 0) -> str:
    """The run's one next step (next_step.py) from its DataFrame, as the page, the console and the index say it."""
    failed = int(df["status"].isin(FAILED_STATUSES).sum()) if "status" in df else 0
    return next_step(verdicts(df, rules), rules, rounds_left, failed) if len(df) else ""


def verdict_text(df, rules: Rules = Rules(), rounds_left: int = 0) -> str:
    """The verdict as lines of plain text, for the terminal after `report`, and the run's next step."""
    table = verdicts(df, rules)
    if table.empty:
        return "No measured cells yet: no verdict."
    step = run_next_step(df, rules, rounds_left)
    return "\n".join([f"  {row.summary}" for row in table.itertuples()] + ([f"  Next step: {step}"] if step else []))


def verdict_short(df, rules: Rules = Rules()) -> list[str]:
    """One line per model and batch size for the index page: the decision, the interval, the configuration
    as the page names it (Configuration.words) and the cost."""
    lines = []
    for row in verdicts(df, rules).itertuples():
        head = f"{display_name(row.model)}" + (f" (batch {row.batch_size})" if df["batch_size"].nunique() > 1 else "")
        if pd.isna(row.race_speedup):
            lines.append(f"{head}: {WORDS[row.verdict]}")
            continue
        bounds = span(row.race_ci95_low, row.race_ci95_high, rules.worthwhile)
        lines.append(f"{head}: {WORDS[row.verdict]}, {times(row.race_speedup)} ({bounds}) "
                     f"with {configuration(row.configuration).words}, {row.latency} a call; "
                     f"{compile_cost_words(row._asdict())}")
    return lines
