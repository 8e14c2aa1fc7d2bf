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
from ..config.registry import display_name
from ..results import decision as codes
from ..results.decision import MAX_ROUNDS_TO_DECIDE, decide
from ..results.stats import FEW_ROUNDS, NOISY_SPREAD
from ..messages import counted
from ..paths import out_argument
from .display import (MISSING, model_text, number, plus_minus, span, status_text, times,
                      times_beside)
from .alternatives import (also_raced_line, faster_looking, no_compile_alternative, rival_note,
                           runner_up_words, serving_forms_line)
from .explain import why_sentence
from .figure_words import bounds_words, compile_cost_words, interval_words, latency_words, payback_words
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


def _answer_sentence(outcome: str, reason: str, row, rules: Rules) -> str:
    """The answer in words: the decision's outcome with the chosen configuration's figure, or why there
    is none ("Can't tell", with what settles it)."""
    if row is None:
        return ""
    config = configuration(row["configuration"])
    what, interval = config.words, interval_words(row, rules.worthwhile)
    if outcome == codes.COMPILE:
        return f"Compile — {what}: {times(row['race_speedup'])} faster ({bounds_words(row)})"
    if outcome == codes.USE:
        return f"Don't compile — run {what}: {times(row['race_speedup'])} faster ({bounds_words(row)}), nothing to compile"
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
              "reason": decision.reason, "runner_up": runner_up_words(rec, runner, rules.worthwhile),
              "others": also_raced_line(rows, rec), "forms": serving_forms_line(rows),
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
                                    faster_looking(rows, rec, runner)]))
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
