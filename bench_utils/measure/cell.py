"""Measure one process of a cell (model, batch size, configuration, round) and return its row.

A `CellProcess` lives in a worker process that never runs another configuration (the sweep starts one
per configuration of a cell group, they take turns timing blocks, and measure up to
`rounds_per_process` rounds; see sweep/rounds.py). Order of work, all under torch.inference_mode():
1. check the configuration applies here (device, native precision; once built, the model), build the
   model (float32 weights) and the batch;
2. "eager" (the baseline): warm up until steady; any other configuration: one eager float32 call as
   the accuracy reference, then its layout and autocast, its compile (reset dynamo, compile, time the
   first call: compile_s) when it compiles, warm up until steady, and one output compared with the
   reference (before timing: no reference output stays on the device while timing);
3. time blocks of calls when asked; 4. the row, and with `profile` (round 0) the profiler's pass.
Any failure becomes the row's status; a configuration that does not apply becomes "unsupported".
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import resource
import statistics
import tempfile
import time
import traceback
from pathlib import Path

import torch

from ..config.bench_config import BenchConfig
from ..config.configurations import Configuration, configuration
from ..config.modes import EXTRA_WARMUP_CALLS, MODE_BY_NAME
from ..results.rows import BenchResult, cell_fields
from ..results.stats import summarize
from . import (accuracy, deploy, device_memory, environment, errors, evidence, injected_failures, launch_thread, machine_load,
               profiling, regions, schedule, startup)
from .compile_stats import (compile_lowered, cudagraphs_recorded, forget_compiled, fx_cache_counts, graph_stats,
                            graphs_compiled, hit_recompile_limit)
from .inputs import build_inputs
from .models import load_model
from .settings import (Unsupported, check_supported, compile_model, inductor_context, precision_context,
                       with_layout)
from .task import Task
from .timing import time_calls, time_once, warm_until_steady


@dataclasses.dataclass(frozen=True)
class TimedStart:
    """A new process's start of a prepared configuration (measure/startup.py), timed right before the round
    whose row carries it: its row fields (first_answer_s, compile_warm_s, what it compiled) or its failure,
    and when it began, from which a later round's row counts its time (the sweep's clock reads rows' spans)."""

    started: dt.datetime
    clock: float  # time.perf_counter() at its start
    fields: dict = dataclasses.field(default_factory=dict)
    failure: tuple[str, str] | None = None  # (status, error): the row it rides on fails with it

    @classmethod
    def starting(cls) -> "TimedStart":
        return cls(dt.datetime.now(dt.timezone.utc), time.perf_counter())


def warm_up(fn, cfg: BenchConfig, device: str, extra_warmup: int, window_s: float,
            steady_s: float | None = None, max_s: float | None = None) -> dict:
    """Untimed calls until the latency is steady (or max_s, by default max_warmup_s): the row's warm-up
    record (`steady_s`: timing.warm_until_steady's)."""
    max_s = cfg.max_warmup_s if max_s is None else min(max_s, cfg.max_warmup_s)
    warmup = warm_until_steady(fn, device, cfg.warmup + extra_warmup, window_s, max_s, steady_s)
    return {"warmup_calls": warmup.calls, "warmup_s": warmup.seconds, "warmup_steady": warmup.steady}


# A forked round's warm-up window, seconds at most: what a fork needs is its first calls (pages copied on
# write, threads started), not a block's length (the A/A check: benchmarks/README.md)
FORK_WARMUP_S = 0.5


def block_window_s(cfg: BenchConfig) -> float:
    """A cell's warm-up window, seconds: as long as one timed block, at least schedule.MIN_WINDOW_S
    (min_time_s may be 0)."""
    return max(schedule.MIN_WINDOW_S, cfg.block_s())


def eager_beside(model: torch.nn.Module, inputs: dict, config: Configuration, device: str):
    """Eager float32's call on `model` itself, for a configuration's worker to time between its own blocks
    (eager_in_process; Configuration.eager_beside says where it can): torch.compile left the module as it
    was, and under the configuration's autocast eager's calls turn it off."""
    if not config.autocast:
        return lambda: model(**inputs)

    def call():
        with torch.autocast(device_type=device, enabled=False):
            return model(**inputs)

    return call


def load_for_process(cfg: BenchConfig, model_name: str, device: str, fields: dict):
    """(spec, LoadedModel) of `model_name` as every measuring process loads it: the device checked
    first, float32 weights (autocast casts per operator); the weights used and why go into `fields`."""
    spec = cfg.spec(model_name)
    if device == "cuda":
        environment.check_cuda_usable()  # a build without kernels for this GPU: one line, not a kernel error
    loaded = load_model(spec, cfg.size, cfg.weights, device, "float32")
    fields.update(weights=loaded.weights, weights_note=loaded.note)
    return spec, loaded


def process_inputs(cfg: BenchConfig, spec, batch_size: int, device: str) -> dict:
    """A batch of `batch_size` for a model of `spec`, float32, in the default memory format."""
    return build_inputs(spec, cfg.size, batch_size, device, torch.float32, cfg.image)


class CellProcess:
    """One configuration of one cell in this process, the way a round uses it: `prepare` builds the
    model (any configuration but the baseline: checks it applies here, compiles it when it compiles,
    and compares its output with eager float32's), warms it up until steady; `time_block` times one
    block of calls whenever the round asks (the other configurations take turns in their own
    processes); `finish` returns the row. A failure at any step is kept (`failed`) and becomes the
    row's status; what was measured before it stays in the row."""

    def __init__(self, task: Task):
        job = task.job
        self.task, self.cfg = task, task.cfg
        self.config = configuration(job.option)
        self.model_name, self.batch_size = job.model, job.batch_size
        self.device = environment.resolve_device(self.cfg.device)
        self.fault = injected_failures.planned_fault(job.model, job.batch_size, job.option)
        self.failure: tuple[str, str] | None = None  # (status, error) of the first failure
        self.call = None
        # eager_in_process: eager float32 on this configuration's own model object, timed between its
        # blocks (`_time_block`); None otherwise
        self.eager_call = None
        self.before_fork_mb = 0.0  # a forked round's: the prepared process's peak RSS at the fork, MiB
        self.frames_after_first_call: int | None = None  # dynamo's frame count after the compiling call
        self.compiled_from: tuple | None = None  # (model, inputs) of a compiled configuration
        self.reference = None  # eager float32's output (host), what a new process's first answer must agree with
        # the file a new process starts from: a form compiled ahead of time's (measure/deploy.py), or the
        # cache artifacts of the compile (the artifacts modifier)
        self.package: str | None = None
        self.package_runner = None  # ... and the callable that loaded it in this process
        self.structure = None  # and the eager output whose structure its outputs are given
        self.forking = False  # a template: each round is measured in a process forked from this one
        self.prepared_call_s: float | None = None  # a template's latency per call after its warm-up calls, s
        # a template times a new process's start once (measure/startup.py): in round 0 where the profile
        # asks for every configuration's (`startup`), else a compiled one before the first round it measures
        # after its selection round (the race kept it), not for every configuration a selection round tries
        # (5-25 s each on this project's 2-core CPUs); the next forked round's row carries it
        self.start_timed = False
        self.timed_start: TimedStart | None = None
        self._contexts = contextlib.ExitStack()
        self._start_row(job.repeat, {"process_round": job.repeat})

    def build_model(self):
        """(spec, the model) as every process of this cell builds them (load_for_process): a new process's
        start builds its own (measure/startup.py)."""
        spec, loaded = load_for_process(self.cfg, self.model_name, self.device, {})
        return spec, loaded.model

    def build_inputs(self) -> dict:
        return process_inputs(self.cfg, self.cfg.spec(self.model_name), self.batch_size, self.device)

    def _start_row(self, repeat: int, carried: dict) -> None:
        """A new row for round `repeat`, holding the `carried` fields; its clock starts now."""
        self.repeat = repeat
        self.identity = cell_fields(self.cfg, self.model_name, self.batch_size, self.config.name, self.device,
                                    repeat)
        self.fields: dict = {"samples_s": [], "block_lengths": [], "eager_samples_s": [], "eager_block_lengths": [],
                             "block_cpus": [], "block_others_cpu_pct": [], "block_sm_clock_mhz": []} | carried
        self._loads: list = []  # machine_load.Load of each block
        self._page_faults = 0  # minor page faults during the timed calls, the process's threads together
        self._last_timed = None  # the callable this process timed last (eager_in_process: two take turns)
        self._own_peaks = device_memory.OwnPeaks(self.device)  # memory over this row's own calls, not eager's
        self.started = dt.datetime.now(dt.timezone.utc)
        self.clock = time.perf_counter()

    @property
    def failed(self) -> bool:
        return self.failure is not None

    def _guarded(self, step) -> None:
        if self.failed:
            return
        try:
            step()
        except Unsupported as why:
            self.failure = "unsupported", str(why)
        except Exception as err:  # noqa: BLE001 - every failure of a process must become its row
            self.failure = errors.status_and_text(err)
            traceback.print_exc()  # the whole of it in the worker's log; the row holds its first line
        if self.failed:  # out of the except block: see recover_memory
            self.call = None
            self._contexts.close()
            device_memory.recover_memory(self.device)

    def prepare(self) -> None:
        self._guarded(self._prepare)

    def _prepare(self) -> None:
        cfg, device, config = self.cfg, self.device, self.config
        check_supported(config, device)  # before minutes of loading and compiling
        injected_failures.maybe_inject("load", self.fault)
        began = time.perf_counter()
        spec, loaded = load_for_process(cfg, self.model_name, device, self.fields)
        self.fields["build_s"] = time.perf_counter() - began  # the cold start's first part (measure/startup.py)
        if device == "cuda":  # its model runs on the GPU: no OpenMP pool to spin beside another worker's blocks
            torch.set_num_threads(launch_thread.GPU_WORKER_THREADS)
        check_supported(config, device, loaded.model)
        self.fields["num_params"] = loaded.num_params
        inputs = process_inputs(cfg, spec, self.batch_size, device)
        self._enter_call_contexts(autocast=False)  # autocast once the eager reference is taken (_candidate)
        injected_failures.maybe_inject("eager", self.fault)
        if config.baseline:
            self.call = lambda: loaded.model(**inputs)
            if cfg.startup:  # what a new process's first answer is checked against (time_start)
                self.reference = accuracy.to_host(self.call())
            self.fields.update(self._warm_up(self.call, 0))
        else:
            self.call = self._candidate(loaded.model, inputs, spec.task)
            if self.forking:  # its threads end with the compute thread (measure/forked.py, Compute)
                self.before_fork()
        device_memory.reset_peak_memory(device)  # the peak of the timed blocks: steady-state inference only

    def _candidate(self, model, inputs: dict, task: str):
        """The configuration's callable, warmed up and its output compared with eager float32's (step 2 of
        the module docstring)."""
        device, config, fields = self.device, self.config, self.fields
        reference = accuracy.to_host(model(**inputs))
        if self.cfg.times_eager_beside(device) and config.eager_beside:
            self.eager_call = eager_beside(model, inputs, config, device)
        inputs = with_layout(config, model, inputs)
        self._contexts.enter_context(precision_context(config, device))
        if config.compiled:
            call = self._compile(model, inputs)
        else:
            call = lambda: model(**inputs)  # noqa: E731 - eager, in another precision or layout
            fields.update(self._warm_up(call, 0))
        output = accuracy.to_host(call())  # copy now: CUDA-graph outputs are overwritten by the next replay
        fields.update(accuracy.agreement_fields(reference, output, task, config.precision, accuracy.numerics(device)))
        self.reference = reference  # what a new process's first answer is checked against (measure/startup.py)
        if not self.forking:  # a template's forks warm eager up themselves (forked)
            self._warm_eager(block_window_s(self.cfg))
        return call

    def _warm_up(self, call, extra_calls: int) -> dict:
        """The warm-up record of a prepared call: until steady; in a template (`forking`: its rounds are
        measured in forked processes, measure/forked.py) the profile's minimum calls only, their latency
        kept (`prepared_call_s`): each fork warms up until steady anyway, and stops at its first window
        that agrees with it (a second of warm-up saved per process and round)."""
        if not self.forking:
            self._pin()
            return warm_up(call, self.cfg, self.device, extra_calls, block_window_s(self.cfg))
        started = time.perf_counter()
        samples = time_calls(call, self.device, max(1, self.cfg.warmup + extra_calls), 0.0)
        self.prepared_call_s = statistics.median_high(samples)
        return {"warmup_calls": len(samples), "warmup_s": time.perf_counter() - started, "warmup_steady": True}

    def _pin(self) -> None:
        """A GPU worker's launching thread stays on its CPU from its warm-up on (launch_thread.pin): after
        its compile, whose workers it forked keep every CPU."""
        if self.device == "cuda" and "pinned_cpu" not in self.fields:
            self.fields["pinned_cpu"] = launch_thread.pin()

    def _enter_call_contexts(self, autocast: bool) -> None:
        """Enter, in this thread, what every call of the cell runs under: inference mode and, with
        `autocast`, the configuration's precision (both are thread-local), and the configuration's
        Inductor settings (global: a recompile at a later call traces under them too)."""
        self._contexts.enter_context(torch.inference_mode())
        self._contexts.enter_context(inductor_context(self.config))
        if autocast:
            self._contexts.enter_context(precision_context(self.config, self.device))

    def forked(self, repeat: int, first: bool) -> None:
        """In a process forked from this prepared one (measure/forked.py), in its main thread: measure
        round `repeat` here. Inference mode and autocast are entered again (the prepared process
        entered them in its compute thread); the row is round `repeat`'s, a process of its own
        (`process_round`) forked from the one prepared in `template_round`. The first round of the
        prepared process (`first`) keeps everything its preparation recorded (compile time, cache hits,
        its warm-up and its clock: the round's time includes the preparation); a later one carries
        what describes the prepared process only (PROCESS_FIELDS), as next_round does. Then warm-up
        until steady: a fork starts with cold caches and no OpenMP threads, never with a compile."""
        if self.failed:
            raise RuntimeError("a failed cell process measures no round")
        prepared = self.fields
        self._contexts = contextlib.ExitStack()
        self._enter_call_contexts(autocast=True)
        if not first:
            self._start_row(repeat, {name: value for name, value in prepared.items() if name in PROCESS_FIELDS})
        if self.timed_start is not None:  # timed just before this fork: this round's work
            self.fields.update(self.timed_start.fields)
            if not first:
                self.started, self.clock = self.timed_start.started, self.timed_start.clock
            if self.timed_start.failure:
                self.failure = self.timed_start.failure
                return
        self.fields.update(process_round=repeat, template_round=prepared["process_round"])
        # short windows until steady (one that agrees with the prepared process's latency, or two that
        # agree with each other), at most max_warmup_s: a fork's first calls run slow (its pages copied on
        # write, its threads started: up to 10x a call, the next few 5-60% slower), and a round whose
        # first timed block still ran slow measured its warm-up (results/aggregate.warmup_tail)
        window = min(block_window_s(self.cfg), FORK_WARMUP_S)
        warmup = warm_up(self.call, self.cfg, self.device, 0, window, self.prepared_call_s)
        if first:  # the prepared process's calls and this one's; steady is this one's (the template's made no claim)
            warmup |= {"warmup_calls": warmup["warmup_calls"] + prepared.get("warmup_calls", 0),
                       "warmup_s": warmup["warmup_s"] + prepared.get("warmup_s", 0.0)}
        self.fields.update(warmup)
        self._warm_eager(window)

    def _warm_eager(self, window_s: float) -> None:
        """eager_in_process: eager warmed up beside the configuration, by the same rule in windows of
        `window_s` (a fork's: its first calls), recorded in neither's row: its first calls in a process
        are slow too (a fork's pages copied on write, a GPU's first launches), and the first block of a
        round is eager's."""
        if self.eager_call is not None:
            warm_up(self.eager_call, self.cfg, self.device, 0, window_s)

    def time_start(self, zygote) -> None:
        """A new process's start of this prepared configuration, from nothing to its first correct answer
        (measure/startup.py), in a process forked from `zygote` (a copy of this worker from before it
        built anything): its fields, or its failure, go into the next round's row (`timed_start`)."""
        timing = TimedStart.starting()
        start = startup.Start(self.package, startup.start_cache(self.config, self.task.scratch_dir), self.reference)
        try:
            self.timed_start = dataclasses.replace(timing, fields=zygote.start(start))
        except startup.StartFailed as failed:
            self.timed_start = dataclasses.replace(timing, failure=(failed.status, f"a new process's start: {failed}"))

    def at_exit(self) -> None:
        """A forked round's process ends here (its contexts need no leaving: it exits)."""
        injected_failures.maybe_inject("exit", self.fault)

    def _compile(self, model, inputs: dict):
        """Compile `model` as the configuration says, time its first call (compile_s), warm it up."""
        from torch._dynamo.utils import counters

        cfg, device, config, fields = self.cfg, self.device, self.config, self.fields
        # in the cell's own compiler cache (the runner empties it before the cell's first process:
        # that compile is cold; later processes find it filled and compile warm, results/aggregate.py)
        forget_compiled()  # a fresh start: nothing compiled for another job is reused in-process
        injected_failures.maybe_inject("compile", self.fault)
        self.compiled_from = (model, inputs)
        if config.packaged:
            return self._package(model, inputs)
        groups = regions.find_repeated_blocks(model) if config.regions else []
        compiled_model = compile_model(model, config, cfg.fullgraph, cfg.compile_dynamic())
        compiled = lambda: compiled_model(**inputs)  # noqa: E731
        with evidence.compile_probe() as counts:
            fields["compile_s"] = time_once(compiled, device)
        fields.update(fx_cache_counts())  # of the first compile, the one compile_s timed
        fields.update(counts.fields(config))
        evidence.check_compile(config, counts, compile_lowered(), device)
        if config.regions:
            fields.update(regions=regions.block_count(groups), regions_at=regions.describe_blocks(groups))
            evidence.check_regions(config, fields["regions"], regions.distinct_blocks(groups), graphs_compiled(),
                                   hit_recompile_limit())
        if config.artifacts:
            self._save_artifacts()
        self.frames_after_first_call = int(counters["frames"]["total"])
        fields.update(self._warm_up(compiled, EXTRA_WARMUP_CALLS[config.mode]))
        fields.update(graph_stats(self.frames_after_first_call), cudagraphs_recorded=cudagraphs_recorded(device))
        return compiled

    def _save_artifacts(self) -> None:
        """The portable cache artifacts of the compile just timed (torch.compiler.save_cache_artifacts: what
        it put in Inductor's and AOTAutograd's caches), in the runner's scratch folder: the file a new
        process loads into its empty cache before its first call (measure/startup.py)."""
        from torch._dynamo.utils import counters

        if counters["inductor"]["fxgraph_cache_bypass"]:
            raise Unsupported("Inductor bypassed its FX-graph cache (it does for frozen graphs): no cache artifacts "
                              "to ship")
        saved = torch.compiler.save_cache_artifacts()
        if saved is None:
            raise evidence.SettingNotInEffect("cache artifacts did not take effect: torch.compiler.save_cache_artifacts() "
                                              "recorded nothing of the compile")
        path = Path(tempfile.mkdtemp(prefix="artifacts-", dir=self.task.scratch_dir)) / "cache-artifacts.bin"
        path.write_bytes(saved[0])
        self.package, self.fields["ships_bytes"] = str(path), len(saved[0])

    def _package(self, model, inputs: dict):
        """A form compiled ahead of time: export and build its file (in the runner's scratch folder, which
        outlives the rounds forked from this process), load it, answer once: compile_s is all of it, what
        a first deployment pays; a later round's warm compile is a new process's load and first answer
        (time_start). One graph by construction: a model that does not export fails here, with the
        exporter's message."""
        fields, device, form = self.fields, self.device, self.config.form
        why_not = deploy.missing(form)
        if why_not:
            raise Unsupported(why_not)
        self.structure = model(**inputs)
        started = time.perf_counter()
        with evidence.compile_probe() as counts:
            self.package = deploy.build(form, model, inputs, self.config.compile_options()["inductor_configs"],
                                        tempfile.mkdtemp(prefix="package-", dir=self.task.scratch_dir))
        fields.update(counts.fields(self.config))
        evidence.check_compile(self.config, counts, form == "aot-inductor", device)
        runner = self.package_runner = deploy.load(form, self.package, self.structure, model)
        compiled = lambda: runner(**inputs)  # noqa: E731
        time_once(compiled, device)
        fields["compile_s"] = time.perf_counter() - started
        fields["ships_bytes"] = deploy.file_bytes(self.package)
        fields.update(graph_breaks=0, graph_count=1, recompiles=0, break_reasons=[], recompile_reasons=[])
        fields.update(self._warm_up(compiled, EXTRA_WARMUP_CALLS[self.config.mode]))
        return compiled

    def before_fork(self) -> None:
        """Just before this prepared process forks (measure/forked.py): no serving form's runtime threads
        alive, or the fork copies their held locks (ONNX Runtime's session: the child hangs opening its
        own). Its session is closed; the next call, in whichever process, opens one."""
        release = getattr(self.package_runner, "release", None)
        if release is not None:
            release()

    def time_block(self, after_switch: bool = True, hand_over: bool = False) -> None:
        """One timed block: at least cfg.block_calls() calls and cfg.block_s() seconds; with `hand_over`
        (the next turn is another worker's), the CUDA cache is given back after it (hand_over_memory)."""
        self._guarded(lambda: self._time_block(after_switch))
        if hand_over and not self.failed:
            device_memory.hand_over_memory(self.device)

    def _time_block(self, after_switch: bool) -> None:
        # one untimed call first when another worker ran since this one's last block, or this process
        # ran the other callable last (eager_in_process): caches and OpenMP threads are cold then, and
        # the first call after a switch runs 10-50% slower (docs/method.md); a block right after the
        # same callable's (ABBA's middle) starts warm
        own = (self.call, "samples_s", "block_lengths")
        parts = [own]
        if self.eager_call is not None:  # ABBA within the process: eager first in even blocks
            eager = (self.eager_call, "eager_samples_s", "eager_block_lengths")
            parts = [eager, own] if len(self.fields["block_lengths"]) % 2 == 0 else [own, eager]
        before, faults = machine_load.snapshot(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for call, samples_name, lengths_name in parts:
            own_part = call is self.call
            if after_switch or call is not self._last_timed:
                if own_part and self._last_timed is not None and self._last_timed is not call:
                    self._own_peaks.start()  # eager's calls ran last here: their peaks are not this row's
                call()
            after_switch, self._last_timed = False, call
            samples = time_calls(call, self.device, self.cfg.block_calls(), self.cfg.block_s())
            if own_part:
                self._own_peaks.end()
            self.fields[samples_name] += samples
            self.fields[lengths_name].append(len(samples))
        self._page_faults += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        load = machine_load.between(before, machine_load.snapshot())
        self._loads.append(load)
        self._record_host(load)

    def _record_host(self, load) -> None:
        """What moves a launch-bound call, at the block's end (launch_thread): the CPU its thread ran on,
        the others' CPU share over the block, the GPU's SM clock where NVML reads it."""
        host = launch_thread.BlockHost.now(environment.sm_clock_mhz if self.device == "cuda" else None)
        self.fields["block_cpus"].append(host.cpu)
        if load is not None:
            self.fields["block_others_cpu_pct"].append(load.others_cpu_pct)
        if host.sm_clock_mhz is not None:
            self.fields["block_sm_clock_mhz"].append(host.sm_clock_mhz)

    def next_round(self, repeat: int) -> None:
        """Measure round `repeat` in this process too: a new row, the same built, compiled and warm
        model. What describes the process (its weights, compiled graphs and their accuracy) carries
        over; what the first round did once (compile, warm-up) does not: a later round's row has no
        compile_s, so a cell's warm compile comes from fresh processes only."""
        if self.failed:
            raise RuntimeError("a failed cell process measures no further round")
        self._start_row(repeat, {name: value for name, value in self.fields.items()
                                 if name in PROCESS_FIELDS})
        device_memory.reset_peak_memory(self.device)

    def finish(self) -> BenchResult:
        """The row: latency and peak memory of the timed blocks; a failure at any step before is the
        row's status. The profiler's pass (`profile`) comes after."""
        self._guarded(self._finish)
        status, error = self.failure or ("ok", "")
        return BenchResult(**self.identity, status=status, error=error, env=environment.collect(self.device),
                           started_at=self.started.isoformat(timespec="milliseconds"),
                           duration_s=time.perf_counter() - self.clock, **self.fields)

    def _read_kernels(self) -> None:
        """A configuration whose setting shows in the kernels a call runs (an autocast dtype,
        channels_last): one call under the profiler, after the timed blocks (its threads cannot slow
        them), once per process; SettingNotInEffect when the setting did not reach the kernels."""
        if not evidence.needs_kernels(self.config) or "matmuls_seen" in self.fields:
            return
        with launch_thread.unpinned():  # the profiler's threads start here: not on the launching CPU
            seen = evidence.kernels_seen(self.call, self.device)
        self.fields.update(evidence.kernel_fields(self.config, seen))
        evidence.check_kernels(self.config, self.fields)

    def close(self) -> None:
        """Leave inference mode, autocast and the Inductor settings."""
        self._contexts.close()
        injected_failures.maybe_inject("exit", self.fault)

    def profile(self) -> dict:
        """The profiler's pass over the prepared callable (after the row: it cannot cost the timing); a
        profiler failure is noted, the timing stands."""
        if self.call is None:
            return {"profile_error": "nothing to profile: the cell failed"}
        if MODE_BY_NAME[self.config.mode].packaged:  # runs outside PyTorch's operators (an AOTInductor package's
            return {}  # kernels, ONNX Runtime's): its profiler sees none, and a page read "0 ms in convolutions"
        trace_path = self.task.trace_path(self.repeat)
        started = time.perf_counter()
        try:
            with launch_thread.unpinned():  # the profiler's threads start here: not on the launching CPU
                fields = profiling.profile_calls(self.call, self.device, trace_path)
        except Exception as err:  # noqa: BLE001 - the cell's numbers do not depend on the profiler
            fields = {"profile_error": errors.error_text(err)}
        fields["profile_s"] = time.perf_counter() - started  # what a pass costs a sweep (plan.PROFILE_S)
        device_memory.hand_over_memory(self.device)  # the next turn is another worker's
        return fields

    def _finish(self) -> None:
        if not self.fields["samples_s"]:
            return
        self._read_kernels()
        loads = [load for load in self._loads if load is not None]
        summary = summarize(self.fields["samples_s"])
        self.fields.update(latency_ms_mean=summary.mean_ms, latency_ms_median=summary.median_ms,
                           page_faults_per_call=self._page_faults / (len(self.fields["samples_s"])
                                                                     + len(self.fields["eager_samples_s"])),
                           **self._own_peaks.of_row(self.before_fork_mb),
                           **device_memory.held_now_mb(self.device))
        if self.frames_after_first_call is not None:  # what compiled again up to now, timed rounds and forks
            stats = graph_stats(self.frames_after_first_call)  # included: a fork's counters go on from its parent's
            self.fields.update(recompiles=stats["recompiles"], recompile_reasons=stats["recompile_reasons"])
        if loads:  # the blocks' mean: each block is about as long as the others
            self.fields["others_cpu_pct"] = sum(load.others_cpu_pct for load in loads) / len(loads)
            self.fields["steal_pct"] = sum(load.steal_pct for load in loads) / len(loads)


# a process's fields that hold for every round it measures (next_round keeps them)
PROCESS_FIELDS = ("process_round", "pinned_cpu", "weights", "weights_note", "num_params", "max_abs_diff", "accuracy_ok",
                  "accuracy_reference", "task_agreement", "graph_breaks", "graph_count", "recompiles",
                  "break_reasons", "recompile_reasons", "cudagraph_skips", "cudagraphs_recorded",
                  *evidence.ROW_FIELDS)

def measured_row(row_type, identity: dict, device: str, work):
    """Run `work(fields)` and return its row (`row_type`: BenchResult or a study's row): any failure
    becomes the row's status, "oom" or "error", with its text, and what `work` had put in `fields`
    before it is kept; the row carries the environment, its start time and duration (seconds)."""
    started = dt.datetime.now(dt.timezone.utc)
    clock = time.perf_counter()
    fields: dict = {}
    status, error = "ok", ""
    try:
        work(fields)
    except Exception as err:  # noqa: BLE001 - every failure of a process must become a row
        status, error = errors.status_and_text(err)
    if status != "ok":  # out of the except block: see recover_memory
        device_memory.recover_memory(device)
    return row_type(**identity, status=status, error=error, env=environment.collect(device),
                    started_at=started.isoformat(timespec="milliseconds"), duration_s=time.perf_counter() - clock,
                    **fields)
