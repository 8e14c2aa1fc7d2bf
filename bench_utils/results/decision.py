"""Is it worth it? A model's recommended configuration (results/race.py) against the margin the user
declared (`worthwhile`: the smallest speedup worth a compile), as a code. report/verdict.py says it.
No torch.

The question is one-sided, so the 95% interval is read against the margin, not against 1; when each
code below applies: docs/method.md, "The decision". The sweep stops on precision, never on this
decision (stopping when an interval first clears the margin would bias it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..config.configurations import configuration
from .stats import rounds_for_halfwidth

COMPILE, USE, NO_GAIN, SLOWER, CANT_TELL, INACCURATE, NO_DATA = (
    "compile", "use", "no_gain", "slower", "cant_tell", "inaccurate", "no_data")


@dataclass(frozen=True)
class Decision:
    outcome: str  # one of the codes above
    reason: str = ""  # cant_tell: "budget", "busy" or "close"


def decide(recommended: dict | None, worthwhile: float, target_halfwidth: float, any_accurate: bool = True) -> Decision:
    """The decision for a group whose race recommends `recommended` (its cell record or DataFrame row
    as a dict; None: no configuration could be recommended, `any_accurate` False when some ran but none
    kept eager's answer)."""
    if recommended is None:
        return Decision(NO_DATA if any_accurate else INACCURATE)
    low, high = recommended["race_ci95_low"], recommended["race_ci95_high"]
    if low is None or math.isnan(low):
        return Decision(NO_DATA)
    if low >= worthwhile:
        return Decision(COMPILE if configuration(recommended["configuration"]).compiled else USE)
    if high < 1.0:
        return Decision(SLOWER)
    if high < worthwhile:
        return Decision(NO_GAIN)
    width = recommended.get("race_halfwidth")
    if recommended.get("disturbed"):  # said first: more rounds on a disturbed machine settle nothing
        return Decision(CANT_TELL, "busy")
    if target_halfwidth and width is not None and width > target_halfwidth:
        return Decision(CANT_TELL, "budget")
    return Decision(CANT_TELL, "close")


MAX_ROUNDS_TO_DECIDE = 100  # rounds of a cell at most; past them the gain is within the machine's noise of the margin


def rounds_to_decide(record: dict, worthwhile: float) -> float:
    """How many more rounds the recommended configuration's race figure needs for its interval to leave
    the margin, if its rounds kept the spread they have (a projection, as sweep/adaptive.py prices a
    round): the least N rounds whose 95% t-interval (stats.rounds_for_halfwidth, s the record's
    race_round_sd) is narrower than the distance from its point to `worthwhile`, less the rounds it has
    (race_rounds). inf when its point lies on the margin, N would pass MAX_ROUNDS_TO_DECIDE, or there is
    no spread to go by (fewer than two rounds)."""
    point, spread, have = record.get("race_speedup"), record.get("race_round_sd"), record.get("race_rounds") or 0
    if not (point and point > 0 and spread is not None and math.isfinite(spread) and have >= 2):
        return math.inf
    needed = rounds_for_halfwidth(spread, abs(math.log(point) - math.log(worthwhile)), MAX_ROUNDS_TO_DECIDE)
    return max(needed - have, 0.0)
