"""How long will a profile take, and where does the time go? An estimate per round before anything
runs (`python -m bench_utils plan PARAMS.yaml`). No torch, but where an "auto" profile asks it for a GPU.

A round (rounds.py) times `blocks` blocks per mode in turn with `settle_s` at each handoff, then the
profiler's pass in round 1 (`profile`, jobs.profiled); every `rounds_per_process` rounds it first
prepares fresh workers, one at a time (rounds.py; start: fork and model load; compile: cold in a cell's
round 0, warm, from the cache, after; warm-up), the rounds between reuse them (rounds.py): on a CPU each
round in a process forked from them, which warms up again (measure/forked.py), the leaders' first of
them after their templates' warm compiles in another fork (one per way of serving). Per call, the
latency is, in this order: what the results file measured for the cell, the guide's published mean for
the label's GPU, else unknown (timing is then counted at its minimum, min_time_s, and the estimate is a
lower bound). Compile times come from the results file where it measured the cell's; else on a GPU from
the mode table scaled per model (compile_estimate.py), a range whose ends `plan` prints beside the
point; on a CPU from what this project measured. The estimate is for planning; the rows say what it
took.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..config.configurations import BASELINE, configuration
from ..config.cpu_precisions import cpu_lacks
from ..config.modes import MODE_BY_NAME
from ..messages import counted
from ..results.race import SELECTION_ROUNDS
from .compile_estimate import cpu_compile_scale, gpu_compile_s
from .jobs import (Round, done_keys, first_rounds, later_round_configurations, pair_start, profiled,
                   read_cell_rows, retryable_failures, round_pending)
from .workers import uses_cuda

# Each constant below is calibrated in the measurement log, benchmarks/README.md#plan-constants, where its
# runs are named; the comments say what it stands for.
# A worker's start, seconds: a fork from the preloaded server (CPU) or a spawn that imports torch
# (CUDA: sweep/workers.py), then the model's build or load and .to(device) (CUDA: a context per process).
START_S = {"cpu": 1.5, "cuda": 6.0}
# ... of it, seconds: what a spare does ahead (workers.Spares: the interpreter and its imports); the rest
# (model build, CUDA context) comes after its task arrives
SPARE_START_S = 5.0
# what a tiny config's compile costs against a full-size model's: a tenth on a CPU; on a GPU as much
# (Triton's kernel compiles, not the model's size, take the time)
TINY_SHARE = {"cpu": 0.1, "cuda": 1.0}
# Inductor's C++ backend compiling a full-size model of the default report on a 2-core CPU, seconds (cold,
# warm) in default mode; the mode table's constants are for GPUs. Times the modifiers' compile_cost and, for
# another model, compile_estimate.cpu_compile_scale (Mask2Former's compile is 5x theirs). CPUs of one
# size differ 2-4x: "low" the fastest compiling CPU measured, "high" the slowest, "point" between.
CPU_COMPILE_S = {"low": (14.0, 2.7), "point": (35.0, 4.5), "high": (55.0, 5.5)}
# the profiler's pass of one process (a few calls and the trace), seconds, where the results file has none
# (rows' profile_s): measured on a CPU, not yet on a GPU
PROFILE_S = 5.0
TIMEOUT_MARGIN = 1.5  # flag a worker whose estimate is above timeout_s / this
PARTS = ("start", "cold compile", "warm compile", "start-up", "warm-up", "timing", "settle", "profiler")


@dataclass
class RoundEstimate:
    round: Round
    seconds: dict = field(default_factory=dict)  # part (PARTS) -> seconds of wall time
    latency_known: bool = True  # every mode's per-call latency was known (measured or published)
    worker_s: dict = field(default_factory=dict)  # mode -> one worker's own wall time, seconds

    @property
    def total(self) -> float:
        return sum(self.seconds.values())


def guide_latency_ms(gpu: str, model: str, batch_size: int, mode: str) -> float | None:
    """The guide's published mean (ms) for a cell on `gpu` (A100, V100, T4), eager or compiled (its
    default-mode tables stand in for every compile mode); None where it published none."""
    from ..results.reference import STUDY_FOR_MODE, load_reference

    table = load_reference()
    rows = table[(table["study"] == STUDY_FOR_MODE["default"]) & (table["gpu"] == gpu)
                 & (table["model"] == model) & (table["batch_size"] == batch_size)]
    if rows.empty:
        return None
    value = float(rows["eager_ms" if mode == "eager" else "compiled_ms"].iloc[0])
    return None if math.isnan(value) else value


def guide_gpu(label: str) -> str | None:
    """The guide GPU a label names ("A100 (nightly)" -> "A100"), else None."""
    from ..results.reference import GPUS

    return next((gpu for gpu in GPUS if gpu.lower() in label.lower()), None)


@dataclass(frozen=True)
class Measured:
    """What a results file already says of a cell: per-call latency (ms), cold and warm compile and the
    profiler's pass (seconds)."""

    latency_ms: float | None = None
    cold_s: float | None = None
    warm_s: float | None = None
    profile_s: float | None = None
    first_answer_s: float | None = None  # a new process's start (measure/startup.py)


def measured(rows: list) -> dict[tuple, Measured]:
    """(model, batch size, mode) -> Measured, from the ok rows of a results file."""
    found: dict[tuple, list] = {}
    for row in rows:
        if row.status == "ok":
            found.setdefault((row.model, row.batch_size, row.configuration), []).append(row)
    out = {}
    for key, group in found.items():
        # a later fresh worker's compile (GPU), or a template's compile again in a fork (CPU)
        warm = [r.compile_s for r in group if r.repeat > 0 and r.compile_s] + [
            r.compile_warm_s for r in group if r.compile_warm_s]
        cold = [r.compile_s for r in group if r.repeat == 0 and r.compile_s]
        profiled_s = [r.profile_s for r in group if r.profile_s]
        started = [r.first_answer_s for r in group if r.first_answer_s]
        out[key] = Measured(statistics.median(r.latency_ms_median for r in group),
                            cold[0] if cold else None, statistics.median(warm) if warm else None,
                            statistics.median(profiled_s) if profiled_s else None,
                            started[0] if started else None)
    return out


def _compile_s(cfg: BenchConfig, model: str, name: str, cold: bool, known: Measured | None, device: str,
               bound: str = "point") -> float:
    """Seconds of one compile of configuration `name`: measured, else estimated (`bound`: "low",
    "point" or "high" of a GPU model's range, or of the CPUs measured), times what the configuration's
    modifiers add (compile_cost)."""
    config = configuration(name)
    if not config.compiled:
        return 0.0
    seconds = (known.cold_s if cold else known.warm_s) if known else None
    if seconds is not None:
        return seconds
    mode = MODE_BY_NAME[config.mode]
    if device == "cpu" and not cold and config.start_share is not None:  # a new process with an empty cache: the
        return config.start_share * _compile_s(cfg, model, name, True, known, device, bound)  # kernels' C++ again
    if config.packaged and (not cold or not mode.inductor):  # a load and a first answer (warm), or an export
        return mode.cold_compile_s if cold else mode.warm_compile_s  # outside Inductor: its constants
    share = (TINY_SHARE[device] if cfg.size == "tiny" else 1.0) * config.compile_cost
    if device == "cpu":  # the constants are the default report's models': a larger one compiles longer
        return CPU_COMPILE_S[bound][0 if cold else 1] * share * (cpu_compile_scale(model) if cfg.size == "full" else 1.0)
    return getattr(gpu_compile_s(model, config.mode, cold), bound) * share


def _latency_ms(round_: Round, mode: str, known: dict, gpu: str | None) -> float | None:
    """A configuration's latency per call in `round_`'s cell, ms: the results file's, else the guide's on
    `gpu`, else unknown (None)."""
    cell = known.get((round_.model, round_.batch_size, mode))
    if cell:
        return cell.latency_ms
    return guide_latency_ms(gpu, round_.model, round_.batch_size, configuration(mode).mode) if gpu else None


def round_estimate(cfg: BenchConfig, round_: Round, device: str, known: dict, gpu: str | None,
                   bound: str = "point") -> RoundEstimate:
    """The wall time of one round, by part: preparation (one at a time: every worker counts; side by
    side the slowest would), then every mode's blocks in turn."""
    estimate = RoundEstimate(round_)
    # the turns pass from worker to worker this often (ABBA: a worker's second block of a turn follows
    # its first); each handoff is a settle and an untimed call of the worker whose turn begins
    names = round_.configurations
    handoffs = cfg.blocks * len(names) - (cfg.blocks - 1) if len(names) > 1 else 1
    untimed_calls = math.ceil(handoffs / len(names))  # per worker
    cold = round_.repeat == 0
    fresh = pair_start(cfg, round_.repeat, round_.batch_size) == round_.repeat  # else its workers are prepared
    for mode in names:
        cell = known.get((round_.model, round_.batch_size, mode))
        latency = _latency_ms(round_, mode, known, gpu)
        estimate.latency_known &= latency is not None
        call_s = (latency or 0.0) / 1000.0
        parts = {}
        warmup_s = _warmup_s(cfg, call_s)
        beside = cfg.times_eager_beside(device) and configuration(mode).eager_beside
        eager_s = 0.0
        if beside:  # eager's blocks beside each of its own (eager_in_process): eager's latency, as its own worker's
            eager_ms = _latency_ms(round_, BASELINE, known, gpu)
            estimate.latency_known &= eager_ms is not None
            eager_s = (eager_ms or 0.0) / 1000.0
        if fresh:
            compile_s = _compile_s(cfg, round_.model, mode, cold, cell, device, bound)
            parts = {"start": START_S[device], "cold compile" if cold else "warm compile": compile_s,
                     "warm-up": warmup_s + (_warmup_s(cfg, eager_s) if beside else 0.0)}  # eager's beside it too
            if cold and device == "cpu" and cfg.startup:  # every configuration's start in a new process
                parts["start-up"] = _start_up_s(cfg, round_.model, mode, cell, bound)
        elif (device == "cpu" and round_.repeat == pair_start(cfg, round_.repeat, round_.batch_size) + 1
              and round_.times_warm_compile(mode) and configuration(mode).compiled and not cfg.startup):
            # a leader's template's first kept round: a new process's start first (measure/worker.py)
            parts["warm compile"] = _compile_s(cfg, round_.model, mode, False, cell, device, bound)
        if device == "cpu":  # every round in a process forked from the prepared one, which warms up again
            parts["warm-up"] = parts.get("warm-up", 0.0) + warmup_s
        timing_s = cfg.blocks * max(cfg.block_calls() * call_s, cfg.block_s()) + untimed_calls * call_s
        if beside:  # each of eager's blocks after an untimed call of each (a switch of callable)
            timing_s += cfg.blocks * (max(cfg.block_calls() * eager_s, cfg.block_s()) + eager_s + call_s)
        estimate.seconds["timing"] = estimate.seconds.get("timing", 0.0) + timing_s
        for part, seconds in parts.items():  # fresh workers prepare one at a time (rounds.py): each counts
            estimate.seconds[part] = estimate.seconds.get(part, 0.0) + seconds
        estimate.worker_s[mode] = sum(parts.values()) + timing_s
    estimate.seconds["settle"] = handoffs * cfg.settle_s
    passes = [name for name in names if profiled(cfg, round_.batch_size, round_.repeat, name)]
    if passes:
        estimate.seconds["profiler"] = sum(_profile_pass_s(known, (round_.model, round_.batch_size, name))
                                           for name in passes)
    return estimate


def _start_up_s(cfg: BenchConfig, model: str, name: str, known: Measured | None, bound: str) -> float:
    """Seconds of a new process's start of configuration `name` on a CPU (measure/startup.py): the
    results file's where it measured one, else the model's build (where the form runs its code, as a
    worker's start: START_S) and its warm compile or load (_compile_s)."""
    if known is not None and known.first_answer_s is not None:
        return known.first_answer_s
    config = configuration(name)
    build = START_S["cpu"] if config.needs_model else 0.0
    return build + _compile_s(cfg, model, name, False, None, "cpu", bound)


def _profile_pass_s(known: dict, key: tuple) -> float:
    """Seconds of one profiler's pass: the results file's for the cell (rows' profile_s), else the median of
    its other passes (mostly the profiler's own start and trace: a machine's figure), else PROFILE_S."""
    if getattr(known.get(key), "profile_s", None):
        return known[key].profile_s
    others = [cell.profile_s for cell in known.values() if cell.profile_s]
    return statistics.median(others) if others else PROFILE_S


def _warmup_s(cfg: BenchConfig, call_s: float) -> float:
    """A fresh worker's warm-up of a callable taking `call_s` a call: `warmup` calls, two windows at least
    (a window is a block: cell.block_window_s; two agreeing windows are steady), max_warmup_s at most."""
    return min(max(cfg.warmup * call_s, 2 * max(cfg.block_s(), 0.05)), cfg.max_warmup_s)


def planned_device(cfg: BenchConfig) -> str:
    """"cpu" or "cuda": where the profile's workers will run ("auto" asks torch, as they will)."""
    return "cuda" if uses_cuda(cfg.device) else "cpu"


def estimate(cfg: BenchConfig, results_path=None, race: str = "worst",
             bound: str = "point") -> tuple[list[RoundEstimate], int]:
    """(estimates of the rounds still to run, rounds the results file already holds). The race decides
    which configurations later rounds hold: `race` "worst", every one in every round (none clearly
    slower); "best", after the selection round only eager and one. Configurations that cannot run on
    the device cost nothing (their worker says so at once). `bound`: which end of the compile-time
    ranges ("low", "point", "high": per model on a GPU, per CPU measured on a CPU)."""
    rows = read_cell_rows(cfg, Path(results_path)) if results_path else []
    done = done_keys(rows)
    device = planned_device(cfg)
    gpu = guide_gpu(cfg.label) if device == "cuda" else None
    known = measured(rows)
    lacks = cpu_lacks() if device == "cpu" else set()  # read once, not per configuration
    runnable = tuple(name for name in cfg.configurations if device in configuration(name).devices
                     and not set(configuration(name).needs) & lacks)
    leader = next((name for name in runnable if name != BASELINE), None)
    # later rounds: the warm compile of one configuration per way of serving (adaptive.leaders)
    first_of_form = tuple({configuration(name).form: name for name in reversed(runnable) if name != BASELINE}.values())
    todo = []
    for round_ in first_rounds(cfg):
        if round_pending(cfg, round_, done):
            later = round_.repeat >= SELECTION_ROUNDS
            best = race == "best" and later and leader
            names = (later_round_configurations(cfg, (leader,) if best else runnable) if later and len(runnable) > 1
                     else runnable)
            todo.append(dataclasses.replace(round_, configurations=names, leaders=(leader,) if best else first_of_form))
    estimates = [round_estimate(cfg, round_, device, known, gpu, bound) for round_ in todo]
    if device == "cuda":
        with_spares(cfg, estimates)
    return estimates, len(first_rounds(cfg)) - len(todo)


def with_spares(cfg: BenchConfig, estimates: list[RoundEstimate]) -> None:
    """A GPU's fresh rounds with spares (workers.Spares, sweep/rounds.py): a fresh round that compiles
    starts as many spares as the profile has configurations beside its first compile, imported together
    in SPARE_START_S each; the runner waits for them before it times, so what their imports outlast
    of the round's compiles and the compiled workers' warm-ups counts as its start. The next fresh
    round's workers are those spares: each costs what is left of a start (START_S less SPARE_START_S).
    The first fresh round starts its own."""
    ready = 0  # spares imported when the next fresh round opens
    for e in estimates:
        if "start" not in e.seconds:
            continue
        taken = min(ready, len(e.worker_s))
        e.seconds["start"] -= taken * SPARE_START_S
        ready -= taken
        compiled = e.seconds.get("cold compile", 0.0) + e.seconds.get("warm compile", 0.0)
        if compiled:
            compiling = sum(configuration(name).compiled for name in e.worker_s)
            beside = compiled + e.seconds.get("warm-up", 0.0) * compiling / len(e.worker_s)
            started = len(cfg.configurations) - ready
            e.seconds["start"] += max(0.0, started * SPARE_START_S - beside)
            ready = len(cfg.configurations)


def too_long(cfg: BenchConfig, estimates: list[RoundEstimate]) -> list[tuple[RoundEstimate, str, float]]:
    """Workers whose estimate comes within TIMEOUT_MARGIN of timeout_s: raise it, or they may time out."""
    return [(e, mode, seconds) for e in estimates for mode, seconds in e.worker_s.items()
            if seconds * TIMEOUT_MARGIN > cfg.timeout_s]


def _leave_order(cfg: BenchConfig, estimates: list[RoundEstimate]) -> tuple[list[str], dict[str, float]]:
    """The configurations the fit (fit.py) could leave out of the models after the first, in the order it
    would for configurations no race has ranked yet (the most elaborate first, then the dearest here), each
    way of serving keeping one (none with one model, or with one compiled configuration per way of
    serving); and each configuration's seconds in those later models."""
    first = cfg.models[0]
    later_s: dict[str, float] = {}
    for e in estimates:
        if e.round.model != first:
            for name, seconds in e.worker_s.items():
                later_s[name] = later_s.get(name, 0.0) + seconds
    order = sorted((name for name in later_s if configuration(name).compiled),
                   key=lambda name: (-configuration(name).elaborate, -later_s[name]))
    best_of_form = {configuration(name).form: name for name in order}  # worst first: the last of a form stays
    return [name for name in order if best_of_form[configuration(name).form] != name], later_s


def fit_cut(cfg: BenchConfig, estimates: list[RoundEstimate]) -> tuple[list[str], float]:
    """What the fit (fit.py) would leave out of the later models' races at this estimate, and the sweep's
    estimate then, seconds: configurations leave in _leave_order until the rest fits budget_min. At run
    time the first model's race ranks them (fit.best_ranks), so which ones leave is its to say; how many is
    this estimate's."""
    order, later_s = _leave_order(cfg, estimates)
    total, cut = sum(e.total for e in estimates), []
    while total > cfg.budget_min * 60.0 and order:
        name = order.pop(0)
        cut.append(name)
        total -= later_s[name]
    return cut, total


def _past_budget_text(cfg: BenchConfig, estimates: list[RoundEstimate], total: float) -> str:
    """What the sweep does with a first pass that fills budget_min, for plan's line: the fit's cut (fit_cut)
    in words, or, where nothing can leave (one model, or each way of serving down to its one compiled
    configuration: the A100 matrix's eager and default), that the pass runs as planned, past the budget by
    how much at this estimate, with no extra rounds."""
    roomy = f"--budget-min {math.ceil((total + 180) / 30) / 2:g} (this estimate and 3 minutes of extra rounds)"
    if not _leave_order(cfg, estimates)[0]:
        kept = [name for name in cfg.configurations if any(name in e.worker_s for e in estimates)]
        kept_text = " and ".join(filter(None, [", ".join(kept[:-1]), kept[-1]]))  # "eager, default and reduce-overhead"
        over = total - cfg.budget_min * 60.0
        ends = (f"so the first pass ends about {_duration(over)} past the budget" if over >= 30 else
                "so it runs as planned")  # within plan's rounding of the budget
        return (f": nothing can leave it (each model keeps {kept_text}: the fit takes a way of serving down to "
                f"its best configuration, no further, and spares the first model), {ends}, with no extra rounds; "
                f"{roomy} gives it extra rounds")
    priced = (": after the first model's round the sweep prices the rest at this machine's costs and leaves out "
              "what the budget cannot hold (docs/method.md)")
    cut, cut_total = fit_cut(cfg, estimates)
    if not cut:  # within the budget at this estimate: a slower machine's measured costs may still make it cut
        return f"{priced}; {roomy} races every configuration"
    fits = "" if cut_total <= cfg.budget_min * 60.0 else ", still past the budget"
    compiled = len({name for e in estimates for name in e.worker_s if configuration(name).compiled})  # runnable here
    return (f"{priced}: at this estimate it leaves {len(cut)} of the {compiled} compiled configurations out of "
            f"the {len(cfg.models) - 1} models after {cfg.models[0]} (here {', '.join(cut)}; the first model's "
            f"race decides which), about {_duration(cut_total)} in all{fits}; {roomy} races every configuration")


def _suggestions(cfg: BenchConfig, estimates: list[RoundEstimate], parts: dict) -> list[str]:
    """What to trim, biggest saving first; `parts`: seconds per part, every one of PARTS."""
    tips = []
    by_batch: dict[int, float] = {}  # one pass: a profile may hold thousands of batch sizes
    for e in estimates:
        by_batch[e.round.batch_size] = by_batch.get(e.round.batch_size, 0.0) + e.total
    if len(by_batch) > 1:
        batch, seconds = max(by_batch.items(), key=lambda item: item[1])
        tips.append((seconds, f"drop batch size {batch} (about {_duration(seconds)})"))
    for name in cfg.configurations[1:]:
        seconds = sum(e.worker_s.get(name, 0.0) for e in estimates)
        if seconds >= 1 and len(cfg.configurations) > 2:
            tips.append((seconds, f"drop configuration {name} (about {_duration(seconds)} of compiling and timing)"))
    if cfg.repeats > 2 and parts["timing"] + parts["warm compile"] > 0:
        share = (parts["timing"] + parts["warm compile"] + parts["start"]) / cfg.repeats
        tips.append((share, f"repeats: {cfg.repeats - 1} instead of {cfg.repeats} (about {_duration(share)})"))
    if parts["profiler"] >= 1:  # the guide's tables need no profiler; the page then cannot say why a model got faster
        tips.append((parts["profiler"], f"profiler: false (about {_duration(parts['profiler'])}; "
                                        "the page then does not explain the speedups)"))
    return [text for _, text in sorted(tips, key=lambda tip: -tip[0])]


@dataclass
class PlanFigures:
    """A profile's estimate, computed once for both of plan's texts (plan_summary, plan_text), seconds."""

    estimates: list
    done: int  # rounds the results file holds already
    total: float  # the first pass, every configuration racing
    best: float  # ... if the first round leaves all but one contender
    low: float  # total at the fastest CPU's (or GPU's shortest) compile times
    high: float  # ... and the slowest
    budgeted: bool  # extra rounds for precision within budget_min
    fills_budget: bool  # the first pass alone takes about the whole budget
    cut: list  # configurations the fit would leave out of the later models (fit_cut)
    cut_total: float  # the first pass then
    lower: bool  # some per-call latencies unknown: timing counted at min_time_s

    @classmethod
    def of(cls, cfg: BenchConfig, results_path=None) -> "PlanFigures":
        estimates, done = estimate(cfg, results_path)
        total = sum(e.total for e in estimates)
        best_case = estimate(cfg, results_path, race="best")[0]  # later rounds of eager and one contender
        low, high = (sum(e.total for e in estimate(cfg, results_path, bound=bound)[0]) for bound in ("low", "high"))
        budgeted = cfg.target_halfwidth > 0 and cfg.budget_min > 0
        # the fit (fit.py) cuts, or what is left holds no extra round: the sweep adds one only where its price
        # fits (adaptive.py), and a later round's is what a tiny profile's costs (a few seconds), not a minute
        one_more = min((e.total for e in best_case if e.round.repeat >= SELECTION_ROUNDS),
                       default=60.0)  # no later round left to price (repeats 1, or a resume in round 0): a minute
        fills = budgeted and cfg.budget_min * 60 - total < one_more
        cut, cut_total = fit_cut(cfg, estimates) if fills else ([], total)
        return cls(estimates, done, total, sum(e.total for e in best_case), low, high, budgeted, fills, cut,
                   cut_total, any(not e.latency_known for e in estimates))


def plan_summary(cfg: BenchConfig, source: str, results_path=None) -> str:
    """The plan in at most six lines, what `report` prints before measuring: what runs, one estimate with
    its range, what the budget leaves out to fit and how to race everything, a warning, where the rest is."""
    figures = PlanFigures.of(cfg, results_path)
    held = f"; {figures.done} of its rounds already measured" if figures.done else ""
    here = {name for e in figures.estimates for name in e.worker_s}  # a precision this CPU lacks costs nothing
    absent = len(cfg.configurations) - len(here) if figures.estimates else 0
    elsewhere = f" ({absent} not on this machine)" if absent > 0 else ""
    lines = [f"{source}: {cfg.label}: {counted(len(cfg.models), 'model')} x "
             f"{counted(len(cfg.configurations) - max(absent, 0), 'configuration')}{elsewhere} x batch "
             f"{', '.join(map(str, cfg.batch_sizes))}, {counted(cfg.repeats, 'round')} at least{held}"]
    if not figures.estimates:
        lines.append("  nothing left of its first pass to measure")
        return "\n".join(lines + [f"  details: python -m bench_utils plan {source} --detail"])
    expected = figures.cut_total if figures.cut else figures.total
    scale = expected / figures.total if figures.total else 1.0
    machines = ("from the fastest to the slowest CPU measured" if planned_device(cfg) == "cpu"
                else "as GPU compile times range")
    spread = (f" ({_duration(figures.low * scale)} to {_duration(figures.high * scale)} {machines})"
              if _duration(figures.high) != _duration(figures.low) else "")
    if figures.budgeted and not figures.fills_budget:
        lines.append(f"  estimated {_duration(figures.total)}{spread}, then extra rounds for precision up to "
                     f"budget_min, {cfg.budget_min:g} min")
    else:
        lines.append(f"  estimated {_duration(expected)}{spread}")
    if figures.cut:
        roomy = math.ceil((figures.total + 180) / 30) / 2
        lines.append(f"  to fit budget_min ({cfg.budget_min:g} min), the first model's round decides which "
                     f"{counted(len(figures.cut), 'configuration')} the later models leave out (named on the page); "
                     f"racing every one: about {_duration(figures.total)}, --budget-min {roomy:g}")
    if figures.total > 3600:  # past an hour `report` stops: the largest trim first
        parts = {part: sum(e.seconds.get(part, 0.0) for e in figures.estimates) for part in PARTS}
        tips = _suggestions(cfg, figures.estimates, parts)
        if tips:
            lines.append(f"  over an hour; to trim: {tips[0]}")
    late = too_long(cfg, figures.estimates)
    if late:
        lines.append(f"  warning: {counted(len(late), 'worker')} may run past timeout_s ({cfg.timeout_s:g} s): raise it")
    lines.append(f"  details: python -m bench_utils plan {source} --detail")
    return "\n".join(lines)


def plan_text(cfg: BenchConfig, source: str, results_path=None) -> str:
    """What `plan --detail` prints: rounds (and how many the results file holds), the estimated time of the
    rest, where it goes, per model, the workers at risk of timing out, and what to trim past an hour."""
    figures = PlanFigures.of(cfg, results_path)
    estimates, done, total, best = figures.estimates, figures.done, figures.total, figures.best
    held = f"; {done} already measured in {results_path}" if done else ""
    counts = " x ".join(f"{n} {word}{'' if n == 1 else 's'}" for n, word in
                        ((len(cfg.models), "model"), (len(cfg.batch_sizes), "batch size"), (cfg.repeats, "repeat")))
    rounds = len(first_rounds(cfg))
    lines = [f"{source}: {cfg.label}: {rounds} round{'' if rounds == 1 else 's'} ({counts}; a worker per "
             f"configuration in each){held}"]
    if not estimates:
        more = (f"; extra rounds for precision (target +-{cfg.target_halfwidth:.0%}) while the sweep's time, the "
                f"file's included, stays within budget_min {cfg.budget_min:g}"
                if cfg.target_halfwidth > 0 and cfg.budget_min > 0 else ": nothing left to measure")
        lines.append(f"  every round of the first pass is in {results_path}{more}; to measure afresh, give "
                     "another --results file (or move that one away)")
        failed = retryable_failures(cfg, read_cell_rows(cfg, Path(results_path)))
        if failed:  # a re-run skips them like the rest
            lines.append(f"  {counted(failed, 'measuring process', 'measuring processes')} in it did not end ok: python -m bench_utils run {source} "
                         f"--results {results_path} --retry-failed measures them again")
        return "\n".join(lines)
    on_cpu = planned_device(cfg) == "cpu"
    ranges = "the CPUs measured, fastest to slowest compiling" if on_cpu else "GPU compile times as ranges"
    spread = (f" ({_duration(figures.low)} to {_duration(figures.high)} with {ranges})"
              if _duration(figures.high) != _duration(figures.low) else "")
    race = (f" if every configuration stays in the race, {_duration(best)} if the first round leaves one"
            if best < total else "")
    # the figure the sweep is built to comes first (the default CPU report: not "20 min" for a 9-minute run)
    fitted = f"about {_duration(figures.cut_total)} as the budget fits it (the fit's cut, below); " if figures.cut else ""
    race = race or (" racing every configuration" if figures.cut else "")
    lines.append(f"  estimated {fitted}{_duration(total)}{spread}{race}"
                 + (" (per-call latencies unknown for some cells: their timing counted at min_time_s, its least)"
                    if figures.lower else ""))
    if on_cpu and any(configuration(name).compiled for name in cfg.configurations):
        (cold_low, warm_low), (cold, warm), (cold_high, warm_high) = (CPU_COMPILE_S[bound] for bound in
                                                                       ("low", "point", "high"))
        lines.append(f"  compile times: the results file's where it measured them, else {cold:g} s cold and {warm:g} s "
                     f"warm a full-size model of the default report's size (the fastest CPU measured: {cold_low:g} s "
                     f"and {warm_low:g} s; the slowest: {cold_high:g} s and {warm_high:g} s), a larger model in "
                     f"proportion to what it compiles (Mask2Former {cpu_compile_scale('mask2former'):.0f}x)")
    parts = {part: sum(e.seconds.get(part, 0.0) for e in estimates) for part in PARTS}
    lines.append("  where it goes: " + ", ".join(f"{part} {_duration(seconds)}" for part, seconds in parts.items()
                                                  if seconds >= 0.5))
    if figures.budgeted:
        if not figures.fills_budget:
            lines.append(f"  then extra rounds for precision (target +-{cfg.target_halfwidth:.0%}) for up to "
                         f"{_duration(cfg.budget_min * 60 - total)} more (budget_min {cfg.budget_min:g})")
        else:  # the first pass alone fills the budget: say so before it is spent, not after
            lines.append(f"  the first pass alone takes about the whole budget (budget_min {cfg.budget_min:g}) at "
                         f"this estimate{_past_budget_text(cfg, estimates, total)}")
    by_model: dict[str, float] = {}
    for e in estimates:
        by_model[e.round.model] = by_model.get(e.round.model, 0.0) + e.total
    for model in cfg.models:
        if by_model.get(model):
            lines.append(f"    {model:<20} {_duration(by_model[model])}")
    for e, mode, seconds in too_long(cfg, estimates):
        lines.append(f"  warning: {e.round.name} {mode}: about {_duration(seconds)}, close to or above "
                     f"timeout_s={cfg.timeout_s:g} s; raise timeout_s")
    tips = _suggestions(cfg, estimates, parts)
    if tips:
        lines.append(("  over an hour; " if total > 3600 else "  ") + "to trim: " + "; ".join(tips))
    if any("max-autotune" in name for name in cfg.configurations):
        lines.append("  max-autotune benchmarks kernels while compiling: its cold compiles dominate (see above)")
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
