"""The race between a model's configurations: which one to recommend, and its figure with the luck
that picked it taken out. Numbers and codes only (report/ says them). No torch.

Per cell group (model, batch size): round 0 selects the leader and drops the clearly slower; the
leader's figure over all its rounds is lowered by the most the pick can have lifted it, E_k * s * sqrt(S)
/ n on the log scale; a dropped configuration keeps its selection round's figure, at least as wide as
one of the leader's rounds moves and as the run's selection rounds stand from their later rounds; the
runner-up is compared with the leader round by round. Why and how: docs/method.md, "The race".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..config.bench_config import BenchConfig
from ..config.configurations import BASELINE, configuration
from .stats import (SpeedupEstimate, expected_maximum, first_round_halfwidth, lowered, round_clusters,
                    round_halfwidth, round_log_speedup, speedup_over_rounds, widened)

SELECTION_ROUNDS = 1  # rounds 0 .. SELECTION_ROUNDS - 1 pick the leader; the later ones confirm it
# configurations of a run timed in its selection round and in two later rounds at least, below which the run's
# selection rounds are not told how far they stand from later ones (one such deviation times t with 1 degree
# of freedom, 12.7, would say more about t than about the machine)
FIRST_ROUND_CONFIGURATIONS = 3
# codes a configuration's race outcome can have
RECOMMENDED, RUNNER_UP, CONTENDER, DROPPED, INACCURATE, UNSUPPORTED, SKIPPED, FAILED = (
    "recommended", "runner_up", "contender", "dropped", "inaccurate", "unsupported", "skipped", "failed")


@dataclass
class Entry:
    """A configuration in a group's race: its cell record, its outcome code and its figure against eager."""

    record: dict
    outcome: str
    estimate: SpeedupEstimate | None = None  # over every round (a dropped one: its selection round)
    rounds: list = field(default_factory=list)  # the rounds of that figure
    selection_bias: float = 0.0  # log scale: how far the leader's point and low end were lowered
    trailing: bool = False  # a contender the leader beats over the rounds both ran: no round chases it more


@dataclass
class Race:
    entries: dict[str, Entry]  # configuration -> its entry (eager left out)
    leader: str | None = None  # the recommendation; None when no configuration could be one
    runner_up: str | None = None
    simpler: bool = False  # the recommendation is the simpler of two the rounds cannot tell apart (simpler_first)
    versus: SpeedupEstimate | None = None  # the leader's speed over the runner-up's, paired by round


def _paired(record: dict, rounds: list[int]) -> tuple[list, list]:
    """The block-pair log ratios and the worker pair of each of `rounds` the cell paired (aggregate.py
    keeps them per round)."""
    kept = [i for i, r in enumerate(record.get("round_ids") or []) if r in rounds]
    return [record["round_pairs"][i] for i in kept], [record["round_workers"][i] for i in kept]


def _subset(record: dict, rounds: list[int]) -> SpeedupEstimate | None:
    """The speedup over `rounds` of a cell's paired rounds; None when none of them was paired."""
    pairs, workers = _paired(record, rounds)
    return speedup_over_rounds(pairs, workers) if pairs else None


def _eligible(record: dict) -> str:
    """"" when the configuration can be recommended, else its outcome code."""
    if record["status"] in (UNSUPPORTED, SKIPPED):
        return record["status"]
    if record["status"] != "ok" or not record.get("round_ids"):
        return FAILED
    if record.get("accuracy_ok") is False:
        return INACCURATE
    return ""


def race(records: list[dict], first_round_half: float = 0.0, leader: str | None = None) -> Race:
    """The race of one cell group's configurations (their cell records, aggregate.cells; eager's
    included or not). `first_round_half`: how far a selection round's figure stands from later rounds'
    over the run (log scale, first_round_spread), the least half-width a dropped configuration's figure has.
    The selection round's fastest leads, unless the rounds after it overtake it: a runner-up faster than
    the leader beyond doubt, paired round by round over every round both ran (one disturbed block can
    make a selection round's order wrong), leads instead (`leader`: the one that does)."""
    candidates = [r for r in records if r["configuration"] != BASELINE and r.get("round_ids") is not None]
    entries = {r["configuration"]: Entry(r, _eligible(r) or CONTENDER) for r in candidates}
    eligible = {name: entry for name, entry in entries.items() if entry.outcome == CONTENDER}
    if not eligible:
        return Race(entries)
    selection = list(range(SELECTION_ROUNDS))
    first = {name: _subset(entry.record, selection) for name, entry in eligible.items()}
    first = {name: est for name, est in first.items() if est is not None}
    if not first:  # no selection round paired (rows resumed oddly): the best over every round leads
        first = {name: _subset(entry.record, entry.record["round_ids"]) for name, entry in eligible.items()}
        selection = sorted({i for entry in eligible.values() for i in entry.record["round_ids"]})
    picked = leader in first  # a leader given: the one that overtook (never overtaken in turn)
    leader = leader if picked else max(first, key=lambda name: first[name].speedup)
    for name, estimate in first.items():
        if name != leader and estimate.ci95_high < first[leader].ci95_low:
            entries[name].outcome = DROPPED
    contenders = [name for name, entry in eligible.items() if entry.outcome == CONTENDER and name != leader]
    for entry in eligible.values():
        entry.rounds = list(entry.record["round_ids"])
        if entry.outcome == DROPPED:
            entry.rounds = [r for r in entry.rounds if r < SELECTION_ROUNDS] or entry.rounds
        entry.estimate = _subset(entry.record, entry.rounds)
    lead = entries[leader]
    lead.outcome = RECOMMENDED
    # a dropped configuration's figure rests on the selection round: its interval at least as wide as one
    # round of the leader moves from round to round, and as the run's selection rounds stand from their
    # later rounds (re-runs held one-round intervals' figures far less often)
    dropped = any(entry.outcome == DROPPED for entry in entries.values())  # the sweep re-races after every round
    one_round = max(_one_round_halfwidth(lead.record, lead.rounds), first_round_half) if dropped else 0.0
    for entry in entries.values():
        if entry.outcome == DROPPED and entry.estimate is not None and len(entry.rounds) == 1:
            entry.estimate = widened(entry.estimate, one_round)
    curse = expected_maximum(len(first))  # 0 with one candidate: nothing was picked
    if lead.estimate is not None and curse:
        lead.selection_bias = curse * _round_spread(_round_logs(lead.record, lead.rounds)) * _selection_weight(
            lead.rounds, selection)
        lead.estimate = lowered(lead.estimate, lead.selection_bias)
    others = [name for name in contenders if entries[name].estimate is not None]
    result = Race(entries, leader)
    if not others:  # every rival was dropped: the fastest of them is the one to beat, on the round they shared
        others = [name for name, entry in eligible.items()
                  if entry.outcome == DROPPED and entry.estimate is not None]
    if others:
        result.runner_up = max(others, key=lambda name: entries[name].estimate.speedup)
        runner = entries[result.runner_up]
        if runner.outcome == CONTENDER:  # a dropped one stays dropped: no rounds chase it
            runner.outcome = RUNNER_UP
        # the leader was the largest of k in round 0, so their difference there is lifted by at most
        # E_k * k / (k - 1) standard errors of one configuration's own noise (s_d / sqrt 2)
        result.versus = _versus(lead.record, runner.record, lead.rounds,
                                curse * len(first) / max(len(first) - 1, 1) / math.sqrt(2.0), selection)
        if result.versus is not None and runner.outcome == DROPPED:
            result.versus = widened(result.versus, one_round)  # over round 0 alone, as wide as a round moves
    for name in contenders:  # behind the leader beyond doubt: it can neither win nor be the runner-up's rival
        entry = entries[name]
        if entry.outcome == CONTENDER and len(entry.rounds) > SELECTION_ROUNDS:
            behind = _versus(lead.record, entry.record, lead.rounds, 0.0, selection)
            entry.trailing = behind is not None and behind.ci95_low > 1.0
    if not picked and overtaken(result):
        return race(records, first_round_half, leader=result.runner_up)
    return simpler_first(result)


def overtaken(result: Race) -> bool:
    """Did the rounds after the selection round show the runner-up faster than the leader beyond doubt
    (their paired interval below 1x, over the rounds both ran, more than the selection round)?"""
    if result.runner_up is None or result.versus is None:
        return False
    runner = result.entries[result.runner_up]
    return runner.outcome == RUNNER_UP and len(runner.rounds) > SELECTION_ROUNDS and result.versus.ci95_high < 1.0


def simplicity(record: dict) -> tuple:
    """How much a configuration asks of a user, least first: nothing to compile, then plain torch.compile,
    then a mode other than default and each modifier (freezing, autocast, layout), then its cold compile's
    seconds (results/aggregate.py's record: compile_s)."""
    config = configuration(record["configuration"])
    compile_s = record.get("compile_s")
    return (config.compiled, config.elaborate,
            compile_s if compile_s is not None and compile_s == compile_s else math.inf)


# a compile must add at least this over what runs without one: the verdict's default margin (a race is
# decided without the profile's settings)
EQUIVALENT = BenchConfig.worthwhile


def simpler_first(result: Race) -> Race:
    """Recommend the simplest (`simplicity`) of the configurations the rounds cannot tell from the leader:
    each contender that ran beside it in every round, whose speed over the leader, paired round by
    round, has an interval holding 1x. The leader's lead over it is within the noise, so nothing
    measured says it is faster, and the simpler costs less to compile and to keep; the page says they
    are as fast (within the interval shown). So too a contender that compiles nothing, when the compiled
    leader is less than EQUIVALENT faster than it by their paired figure (the point, not the low end:
    with three rounds the low end lies below the margin for a compile 20% ahead in every round), since a
    compile must add the margin over what runs without one. The choice's figure is its own over every
    round, never lowered for a pick it did not win."""
    if result.leader is None:
        return result
    lead = result.entries[result.leader]
    rivals = {}  # name -> the leader's speed over it, paired by round
    for name, entry in result.entries.items():
        if name == result.leader or entry.outcome not in (CONTENDER, RUNNER_UP) or entry.estimate is None:
            continue
        versus = (result.versus if name == result.runner_up else
                  _versus(lead.record, entry.record, lead.rounds, 0.0, list(range(SELECTION_ROUNDS))))
        if versus is None:
            continue
        told_apart = not versus.ci95_low <= 1.0 <= versus.ci95_high
        adds_too_little = (configuration(lead.record["configuration"]).compiled
                           and not configuration(entry.record["configuration"]).compiled
                           and versus.speedup < EQUIVALENT)
        if not told_apart or adds_too_little:
            rivals[name] = versus
    simplest = min(rivals, key=lambda name: simplicity(result.entries[name].record), default=None)
    if simplest is None or simplicity(result.entries[simplest].record) >= simplicity(lead.record):
        return result
    versus, chosen = rivals[simplest], result.entries[simplest]
    for entry in result.entries.values():
        if entry.outcome == RUNNER_UP:
            entry.outcome = CONTENDER
    lead.outcome, chosen.outcome = RUNNER_UP, RECOMMENDED
    return Race(result.entries, leader=simplest, runner_up=result.leader, simpler=True,
                versus=SpeedupEstimate(1 / versus.speedup, 1 / versus.ci95_high, 1 / versus.ci95_low,
                                       versus.between_process))


def _one_round_halfwidth(record: dict, rounds: list[int]) -> float:
    """How far one round of `record` moves around its mean, log scale (stats.round_halfwidth over the
    rounds of `rounds` it paired, clustered by worker pair)."""
    return round_halfwidth(*round_clusters(*_paired(record, rounds)))


def _round_logs(record: dict, rounds: list[int]) -> list[np.ndarray]:
    """The block-pair log ratios of each of `rounds` the record paired."""
    return [np.asarray(pairs, dtype=float) for pairs in _paired(record, rounds)[0]]


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


def _versus(leader: dict, other: dict, rounds: list[int], curse: float,
            picked_on: list[int]) -> SpeedupEstimate | None:
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


def first_round_spread(records: list[dict]) -> float:
    """How far one run's selection round stands from where its later rounds put a configuration (log
    scale, stats.first_round_halfwidth): over the configurations of `records` (the run's cells) that ran
    the selection round and two later rounds at least, FIRST_ROUND_CONFIGURATIONS of them or more; else 0.
    Every group of a run shares its machine. The leaders count too, their deviation lifted by the pick
    (E_k * s): the floor errs wide by that much. Why: on a quiet machine a leader's rounds can agree to a
    fraction of a per cent, so its dropped rivals' one-round intervals came out too narrow to hold a re-run's
    figures, while the selection round itself stood some per cent from the later rounds
    (benchmarks/README.md#xeon167-default-report; docs/method.md, "Across re-runs")."""
    deviations = []
    for record in records:
        if record["configuration"] == BASELINE or record.get("status") != "ok":
            continue
        ids = list(record.get("round_ids") or [])
        paired = [(r, round_log_speedup(pairs)) for r, pairs in zip(ids, _round_logs(record, ids)) if pairs.size]
        selection = [log for r, log in paired if r < SELECTION_ROUNDS]
        later = [log for r, log in paired if r >= SELECTION_ROUNDS]
        if selection and len(later) >= 2:
            deviations.append(float(np.mean(selection) - np.mean(later)))
    return first_round_halfwidth(deviations) if len(deviations) >= FIRST_ROUND_CONFIGURATIONS else 0.0


def races(records: list[dict]) -> dict[tuple, Race]:
    """Every cell group's race: (label, settings, hardware, torch, model, size, batch size) -> Race."""
    runs: dict[tuple, list] = {}
    groups: dict[tuple, list] = {}
    for record in records:
        run = (record["label"], record["settings"], record["hardware"], record["torch"])
        runs.setdefault(run, []).append(record)
        groups.setdefault((*run, record["model"], record["size"], record["batch_size"]), []).append(record)
    spread = {run: first_round_spread(members) for run, members in runs.items()}
    return {key: race(group, spread[key[:4]]) for key, group in groups.items()}
