"""The serving study, one process: one model compiled once with one `dynamic` setting (or eager), fed
a server's sequence of batch sizes, then timed in its steady state per batch size.

Order of work, all under torch.inference_mode():
1. build the model and the inputs of every distinct batch size (input creation is never timed);
2. reset dynamo, compile once: "static" = torch.compile(dynamic=False), "dynamic" = dynamic=True,
   "auto" = dynamic=None (static first, symbolic after a shape changes); "eager" compiles nothing;
3. the sequence: each request is one call, timed with everything it triggers (time_once); dynamo's
   graph count before and after says whether it compiled, its failed guards say why;
4. steady state: per distinct batch size, warm up until steady and time (the sweep's schedule).

A static compile past torch._dynamo.config.recompile_limit graphs of one frame does not fail: dynamo
runs later new shapes eagerly, silently; the row says so in its recompile_reasons (RECOMPILE_LIMIT_NOTE).
"""

from __future__ import annotations

import re
from functools import partial

import torch

from ..config.bench_config import BenchConfig
from ..results.stats import summarize
from ..results.study_results import RECOMPILE_LIMIT_NOTE, SERVING_SETTINGS, ServingResult, serving_fields
from . import environment, machine_load, schedule
from .cell import load_for_process, measured_row, precision_context, process_inputs
from .compile_stats import clear_graph_stats, hit_recompile_limit
from .timing import time_calls, time_once, warm_until_steady

DYNAMIC_ARGUMENT = {"static": False, "dynamic": True, "auto": None}  # setting -> torch.compile(dynamic=...)
STEADY_COMPILED_NOTE = "the steady state compiled {graphs} more graph(s): its latencies include compiling"
_COMPILE_ID = re.compile(r"^\[?\d+/\d+\]?:\s*")  # "0/1: " in front of a guard failure: which compile
_SOURCE_COMMENT = "  # "  # a symbolic-shape guard's text: "2 <= x.size()[0] <= 15  # user code ... (why)"


def _graphs_compiled() -> int:
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def _failed_guards() -> list[str]:
    """Dynamo's guard failures so far (why it compiled again): the failed check alone, without the
    compile id in front nor the source comment after it (a first line can run to 500 characters)."""
    from torch._dynamo.utils import guard_failures

    firsts = [reason.strip().splitlines()[0] for reasons in guard_failures.values() for reason in reasons
              if reason.strip()]
    return [_COMPILE_ID.sub("", first).split(_SOURCE_COMMENT)[0].strip() for first in firsts]


def _new_reasons(seen: list[str]) -> list[str]:
    """`seen` extended by the failed guards and the limit note not in it yet, in order of appearance."""
    found = _failed_guards()
    if hit_recompile_limit():
        found.append(RECOMPILE_LIMIT_NOTE.format(limit=torch._dynamo.config.recompile_limit))
    return seen + [reason for reason in dict.fromkeys(found) if reason not in seen]


def _serve_sequence(run, sequence: list[int], device: str, fields: dict) -> None:
    """Each request of `sequence` once, in order, into `fields` as it goes (a failure keeps the
    requests before it): its wall time (ms), whether it compiled a graph, and the reasons of every
    recompile so far."""
    fields.update(step_ms=[], step_compiled=[], recompile_reasons=[])
    for batch_size in sequence:
        graphs_before = _graphs_compiled()
        fields["step_ms"].append(time_once(partial(run, batch_size), device) * 1000.0)  # s -> ms
        fields["step_compiled"].append(_graphs_compiled() > graphs_before)
        fields["recompile_reasons"] = _new_reasons(fields["recompile_reasons"])
    compiling_ms = [ms for ms, compiled in zip(fields["step_ms"], fields["step_compiled"]) if compiled]
    fields.update(compiles=_graphs_compiled(), compile_total_s=sum(compiling_ms) / 1000.0)


def _steady_state(run, batch_sizes: list[int], cfg: BenchConfig, device: str, fields: dict) -> None:
    """Per distinct batch size, in order of first request: warm up until steady, then time; the
    median in ms and the raw samples in seconds, keyed by str(batch size) (JSON keys). The sequence
    saw every size, so nothing should compile here; if something does, recompile_reasons says so."""
    fields.update(steady_ms={}, steady_samples_s={}, steady_others_cpu_pct={})
    graphs_before = _graphs_compiled()
    for batch_size in batch_sizes:
        call = partial(run, batch_size)
        warm_until_steady(call, device, cfg.warmup, schedule.warmup_window_s(cfg.min_time_s), cfg.max_warmup_s)
        before = machine_load.snapshot()
        samples = time_calls(call, device, cfg.iterations, cfg.min_time_s)
        load = machine_load.between(before, machine_load.snapshot())
        fields["steady_ms"][str(batch_size)] = summarize(samples).median_ms
        fields["steady_samples_s"][str(batch_size)] = samples
        if load is not None:  # others' CPU share while timing this size (None off Linux)
            fields["steady_others_cpu_pct"][str(batch_size)] = load.others_cpu_pct
    fields["recompile_reasons"] = _new_reasons(fields["recompile_reasons"])
    if _graphs_compiled() > graphs_before:
        fields["recompile_reasons"].append(STEADY_COMPILED_NOTE.format(graphs=_graphs_compiled() - graphs_before))


def _measure(cfg: BenchConfig, model_name: str, setting: str, device: str, fields: dict) -> None:
    spec, loaded = load_for_process(cfg, model_name, device, fields)
    batch_sizes = list(dict.fromkeys(cfg.serving_batch_sizes))  # distinct, in order of first request
    inputs = {batch_size: process_inputs(cfg, spec, loaded.model, batch_size, device) for batch_size in batch_sizes}
    model = loaded.model
    torch._dynamo.reset()  # nothing compiled before (in this process) is reused
    clear_graph_stats()
    if setting != "eager":
        model = torch.compile(model, mode=cfg.compiled_mode(), fullgraph=cfg.fullgraph,
                              dynamic=DYNAMIC_ARGUMENT[setting])
    run = lambda batch_size: model(**inputs[batch_size])  # noqa: E731
    with torch.inference_mode(), precision_context(cfg, device):
        _serve_sequence(run, list(cfg.serving_batch_sizes), device, fields)
        _steady_state(run, batch_sizes, cfg, device, fields)


def measure_serving(cfg: BenchConfig, model_name: str, setting: str) -> ServingResult:
    """One serving process: `model_name` under `setting` (study_results.SERVING_SETTINGS) fed
    cfg.serving_batch_sizes. Never raises for a failure of the model or the compiler: it becomes the
    row's status ("oom" or "error") with the error text; what was measured before it is kept."""
    if setting not in SERVING_SETTINGS:
        raise ValueError(f"setting: {setting!r} is not allowed; allowed: {', '.join(SERVING_SETTINGS)}")
    if not cfg.serving_batch_sizes:
        raise ValueError("cfg.serving_batch_sizes: [] is not allowed; allowed: a sequence of batch sizes")
    device = environment.resolve_device(cfg.device)
    return measured_row(ServingResult, serving_fields(cfg, model_name, setting, device), device,
                        lambda fields: _measure(cfg, model_name, setting, device, fields))
