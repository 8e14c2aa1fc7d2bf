"""One next step per run: the single thing to do after reading its answers, the same words on the
console, the page and the index (each calls `next_step` on the same results and rules). In order: finish
a first pass that stopped early; settle the answers more rounds can settle ("Can't tell" with a
projection of the rounds it needs: decision.rounds_to_decide); measure failed processes again. Nothing
to do: no step. The command works as printed in the checkout after `make report` (its PARAMS are passed
to `python -m bench_utils report`, which resumes: the rounds measured are kept). No torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..config.registry import display_name
from ..results import decision as codes
from ..results.decision import rounds_to_decide
from ..results.sweep_time import rerun_budget_min
from ..messages import counted


@dataclass(frozen=True)
class Settling:
    """What settles a "Can't tell": the rounds its spread asks for and their seconds (inf rounds: more
    rounds cannot, the figure lies within the machine's noise of the margin)."""

    rounds: float
    seconds: float

    @classmethod
    def of(cls, rec, worthwhile: float) -> "Settling":
        rounds = rounds_to_decide(rec, worthwhile)
        round_s = rec.get("round_s")
        known = math.isfinite(rounds) and round_s and not pd.isna(round_s)
        return cls(rounds, rounds * round_s if known else 0.0)

    @property
    def possible(self) -> bool:
        return math.isfinite(self.rounds)


def next_step(answers: pd.DataFrame, rules, rounds_left: int = 0, failed: int = 0) -> str:
    """The run's next step in words ("" when there is none): one command that finishes a first pass that
    stopped early, settles the answers more rounds can settle and measures failed cells again, whichever
    of these the run needs. `answers`: verdict.verdicts' table (its settling columns); `rounds_left`:
    first-pass rounds still to measure; `failed`: cells whose processes did not end ok."""
    undecided = answers[(answers["verdict"] == codes.CANT_TELL) & answers["settle_rounds"].map(math.isfinite)]
    what, flags, before = [], [], ""
    if rounds_left:
        what.append(f"finish the run ({counted(rounds_left, 'round')} of its first pass still to measure)")
    if len(undecided):
        settle, flags, before = _settle(undecided, rules)
        what.append(settle)
    if failed:  # a rerun skips a failed process unless told
        what.append(f"measure the {counted(failed, 'failed cell')} again (after a timeout, raise timeout_s first)")
        flags.append("--retry-failed")
    if not what:
        return ""
    sentence = "; ".join(what)
    return f"{sentence[0].upper()}{sentence[1:]}: {before}{rules.measuring_command(*flags)}"


def _settle(undecided: pd.DataFrame, rules) -> tuple[str, list[str], str]:
    """Settling every answer more rounds can settle, in one sweep: (what it does, the command's flags,
    what to change first). Its budget is the clock so far and every undecided model's rounds
    (sweep_time.rerun_budget_min); a profile that adds no rounds beyond repeats needs them raised."""
    seconds = float(undecided["settle_s"].sum())
    spent = max([s for s in undecided["sweep_s"] if s and not pd.isna(s)], default=0.0)
    rounds = int(undecided["settle_rounds"].max())  # each model's rounds run beside the others'
    models = " and ".join(dict.fromkeys(display_name(m) for m in undecided["model"]))
    minutes = f", about {max(1, round(seconds / 60))} min" if seconds else ""
    what = f"settle {models} (about {counted(rounds, 'more round')}{minutes})"
    params = rules.params or "the parameters file"
    if not rules.target_halfwidth:  # a larger budget buys no round: the sweep runs `repeats` and stops
        return what, [], f"raise repeats by {rounds} in {params}, then "
    needed = int((undecided["rounds"] + undecided["settle_rounds"]).max())
    before = f"raise max_repeats to {needed} in {params}, then " if needed > rules.max_repeats else ""
    return what, [f"--budget-min {rerun_budget_min(spent, seconds):g}"], before
