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
    if target_halfwidth and width is not None and width > target_halfwidth:
        return Decision(CANT_TELL, "budget")
    if recommended.get("disturbed"):
        return Decision(CANT_TELL, "busy")
    return Decision(CANT_TELL, "close")
