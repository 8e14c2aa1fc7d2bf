"""The race between a model's configurations: which one to recommend, and its figure with the luck
that picked it taken out. Numbers and codes only (report/ says them). No torch.

Per cell group (model, batch size), every configuration is measured against eager float32 in the
same rounds (ABBA blocks, worker pairs). The race:
1. Round 0 is the selection round. A configuration that did not run (`unsupported` here, `failed`) or
   whose output left its tolerance against eager float32 (`inaccurate`) is out. Of the others the
   leader is the one with the highest round-0 speedup; a configuration whose round-0 interval lies
   entirely below the leader's is `dropped` (clearly slower). The rest are the contenders: the sweep
   measures only them (and eager) in later rounds.
2. The leader is the recommendation. Every contender's figure (speedup and interval against eager) is
   over all its rounds; the leader's carries a stated correction for the winner's curse (the best of
   several noisy estimates overstates its own): its point and low end are lowered by the most the
   selection round can have lifted them, E_k * s * sqrt(S) / n on the log scale (k candidates picked
   from, E_k the expected largest of k standard normals, s the spread of one round's log speedup, S
   selection rounds among its n rounds: docs/method.md). With one candidate there is nothing to pick
   and nothing to correct. A dropped configuration's figure is its selection round's, its interval at
   least as wide as one of the leader's rounds moves (stats.round_halfwidth; one round's block pairs
   see only their own stretch).
3. The runner-up is the next contender by its figure (when the selection round dropped every rival,
   the fastest dropped one, which keeps its `dropped` code); the recommendation's speedup over it is
   the paired ratio of the two over the rounds both measured (both were timed against the same eager
   blocks), with the same correction for the selection (the leader was the larger of the two in round 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..config.configurations import BASELINE
from .stats import (SpeedupEstimate, expected_maximum, lowered, relative_halfwidth, round_clusters,
                    round_halfwidth, round_log_speedup, speedup_over_rounds, widened)

SELECTION_ROUNDS = 1  # rounds 0 .. SELECTION_ROUNDS - 1 pick the leader; the later ones confirm it
# codes a configuration's race outcome can have
RECOMMENDED, RUNNER_UP, CONTENDER, DROPPED, INACCURATE, UNSUPPORTED, FAILED = (
    "recommended", "runner_up", "contender", "dropped", "inaccurate", "unsupported", "failed")


@dataclass
class Entry:
    """A configuration in a group's race: its cell record, its outcome code and its figure against eager."""

    record: dict
    outcome: str
    estimate: SpeedupEstimate | None = None  # over every round (a dropped one: its selection round)
    rounds: list = field(default_factory=list)  # the rounds of that figure
    selection_bias: float = 0.0  # log scale: how far the leader's point and low end were lowered

    @property
    def halfwidth(self) -> float:
        return relative_halfwidth(self.estimate) if self.estimate else math.inf


@dataclass
class Race:
    entries: dict[str, Entry]  # configuration -> its entry (eager left out)
    leader: str | None = None  # the recommendation; None when no configuration could be one
    runner_up: str | None = None
    versus: SpeedupEstimate | None = None  # the leader's speed over the runner-up's, paired by round

    @property
    def contenders(self) -> list[str]:
        return [name for name, e in self.entries.items() if e.outcome in (RECOMMENDED, RUNNER_UP, CONTENDER)]


def _subset(record: dict, rounds: list[int]) -> SpeedupEstimate | None:
    """The speedup over `rounds` of a cell's paired rounds (aggregate.py keeps each round's block-pair
    log ratios and worker pair); None when none of them was paired."""
    kept = [i for i, r in enumerate(record.get("round_ids") or []) if r in rounds]
    if not kept:
        return None
    pairs, workers = record["round_pairs"], record["round_workers"]
    return speedup_over_rounds([pairs[i] for i in kept], [workers[i] for i in kept])


def _eligible(record: dict) -> str:
    """"" when the configuration can be recommended, else its outcome code."""
    if record["status"] == UNSUPPORTED:
        return UNSUPPORTED
    if record["status"] != "ok" or not record.get("round_ids"):
        return FAILED
    if record.get("accuracy_ok") is False:
        return INACCURATE
    return ""


def race(records: list[dict]) -> Race:
    """The race of one cell group's configurations (their cell records, aggregate.cells; eager's
    included or not)."""
    candidates = [r for r in records if r["configuration"] != BASELINE and r.get("round_ids") is not None]
    entries = {r["configuration"]: Entry(r, _eligible(r) or CONTENDER) for r in candidates}
    eligible = [r for r in candidates if entries[r["configuration"]].outcome == CONTENDER]
    if not eligible:
        return Race(entries)
    selection = list(range(SELECTION_ROUNDS))
    first = {r["configuration"]: _subset(r, selection) for r in eligible}
    first = {name: est for name, est in first.items() if est is not None}
    if not first:  # no selection round paired (rows resumed oddly): the best over every round leads
        first = {r["configuration"]: _subset(r, r["round_ids"]) for r in eligible}
        selection = sorted({i for r in eligible for i in r["round_ids"]})
    leader = max(first, key=lambda name: first[name].speedup)
    for name, estimate in first.items():
        if name != leader and estimate.ci95_high < first[leader].ci95_low:
            entries[name].outcome = DROPPED
    contenders = [r for r in eligible if entries[r["configuration"]].outcome == CONTENDER]
    for record in eligible:
        rounds = list(record["round_ids"])
        if entries[record["configuration"]].outcome == DROPPED:
            rounds = [r for r in rounds if r < SELECTION_ROUNDS] or rounds
        entries[record["configuration"]].estimate = _subset(record, rounds)
        entries[record["configuration"]].rounds = rounds
    lead = entries[leader]
    lead.outcome = RECOMMENDED
    # a dropped configuration's figure rests on the selection round: its interval at least as wide as one
    # round of the leader moves from round to round (re-runs held one-round intervals' figures far less often)
    dropped = any(entry.outcome == DROPPED for entry in entries.values())  # the sweep re-races after every round
    one_round = _one_round_halfwidth(lead.record, lead.rounds) if dropped else 0.0
    for entry in entries.values():
        if entry.outcome == DROPPED and entry.estimate is not None and len(entry.rounds) == 1:
            entry.estimate = widened(entry.estimate, one_round)
    curse = expected_maximum(len(first))  # 0 with one candidate: nothing was picked
    if lead.estimate is not None and curse:
        lead.selection_bias = curse * _round_spread(_round_logs(lead.record, lead.rounds)) * _selection_weight(
            lead.rounds, selection)
        lead.estimate = lowered(lead.estimate, lead.selection_bias)
    others = [r for r in contenders if r["configuration"] != leader and entries[r["configuration"]].estimate is not None]
    result = Race(entries, leader)
    if not others:  # every rival was dropped: the fastest of them is the one to beat, on the round they shared
        others = [r for r in eligible if entries[r["configuration"]].outcome == DROPPED
                  and entries[r["configuration"]].estimate is not None]
    if others:
        runner = max(others, key=lambda r: entries[r["configuration"]].estimate.speedup)
        if entries[runner["configuration"]].outcome == CONTENDER:  # a dropped one stays dropped: no rounds chase it
            entries[runner["configuration"]].outcome = RUNNER_UP
        result.runner_up = runner["configuration"]
        # the leader was the largest of k in round 0, so their difference there is lifted by at most
        # E_k * k / (k - 1) standard errors of one configuration's own noise (s_d / sqrt 2)
        result.versus = _versus(lead.record, runner, lead.rounds,
                                curse * len(first) / max(len(first) - 1, 1) / math.sqrt(2.0), selection)
        if result.versus is not None and entries[runner["configuration"]].outcome == DROPPED:
            result.versus = widened(result.versus, one_round)  # over round 0 alone, as wide as a round moves
    return result


def _one_round_halfwidth(record: dict, rounds: list[int]) -> float:
    """How far one round of `record` moves around its mean, log scale (stats.round_halfwidth over the
    rounds of `rounds` it paired, clustered by worker pair)."""
    kept = [i for i, r in enumerate(record["round_ids"]) if r in rounds]
    logs, labels = round_clusters([record["round_pairs"][i] for i in kept], [record["round_workers"][i] for i in kept])
    return round_halfwidth(logs, labels)


def _round_logs(record: dict, rounds: list[int]) -> list[np.ndarray]:
    """The block-pair log ratios of each of `rounds` the record paired."""
    return [np.asarray(p, dtype=float) for r, p in zip(record["round_ids"], record["round_pairs"]) if r in rounds]


def _round_spread(rounds: list[np.ndarray]) -> float:
    """The standard deviation of one round's log speedup: over the rounds when there are two or more,
    else the standard error of the one round's block pairs (0 when it cannot be told: one pair)."""
    logs = [round_log_speedup(pairs) for pairs in rounds if pairs.size]
    if len(logs) >= 2:
        return float(np.std(logs, ddof=1))
    pairs = rounds[0] if rounds else np.empty(0)
    return float(np.std(pairs, ddof=1) / math.sqrt(pairs.size)) if pairs.size >= 2 else 0.0


def _selection_weight(rounds: list[int], picked_on: list[int]) -> float:
    """sqrt(S) / n: how much of a selection bias of one standard deviation (of a round) reaches the
    mean of `rounds`, S of them the rounds the leader was picked on (their mean's error is s / sqrt(S))."""
    chosen = sum(1 for r in rounds if r in picked_on)
    return math.sqrt(chosen) / len(rounds) if rounds else 0.0


def _versus(leader: dict, other: dict, rounds: list[int], curse: float = 0.0,
            picked_on: list[int] = ()) -> SpeedupEstimate | None:
    """The leader's speedup over `other`: per round, the difference of their block pairs' log ratios
    against the same eager blocks (the eager time cancels), over `rounds` both measured; lowered by
    `curse` standard deviations of one round's difference, weighted as the selection rounds are."""
    index = {r: i for i, r in enumerate(other.get("round_ids") or [])}
    pairs, workers, used = [], [], []
    for i, r in enumerate(leader["round_ids"]):
        if r in rounds and r in index:
            a, b = np.asarray(leader["round_pairs"][i]), np.asarray(other["round_pairs"][index[r]])
            n = min(a.size, b.size)
            if n:
                pairs.append(a[:n] - b[:n])
                workers.append((leader["round_workers"][i], other["round_workers"][index[r]]))
                used.append(r)
    if not pairs:
        return None
    estimate = speedup_over_rounds(pairs, workers)
    return lowered(estimate, curse * _round_spread(pairs) * _selection_weight(used, picked_on)) if curse else estimate


def races(records: list[dict]) -> dict[tuple, Race]:
    """Every cell group's race: (label, settings, hardware, torch, model, size, batch size) -> Race."""
    groups: dict[tuple, list] = {}
    for record in records:
        key = (record["label"], record["settings"], record["hardware"], record["torch"], record["model"],
               record["size"], record["batch_size"])
        groups.setdefault(key, []).append(record)
    return {key: race(group) for key, group in groups.items()}
