"""Results rows: the one row family (a cell's BenchResult, a study's rows declared in its studies/
module), each a frozen row per measuring process with its key, and every results file read back in one place,
read_rows (writer.py appends rows; aggregate.py makes the DataFrame). No torch.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..config.validation import ConfigError
from ..paths import relative_text
from .row_schema import IDENTITY, field_types, row_problem
from .runs import MixedRunsError, other_run, run_text

# "unsupported": the configuration does not apply here (the device, the CPU's or GPU's precisions, the
# model): a row saying so, not a failure. "skipped": left out of the race before it was measured, for
# the sweep to decide every model within budget_min on this machine (sweep/fit.py); its error says why
STATUSES = ("ok", "oom", "error", "timeout", "crashed", "unsupported", "skipped")
NOT_FAILED = ("ok", "unsupported", "skipped")  # a row of these statuses is no failure of its process
BLOCKS_OF = {"samples_s": "block_lengths", "eager_samples_s": "eager_block_lengths"}  # samples -> their blocks
OWN_WEIGHTS = "own"  # a row's weights for a notebook's object (bench_utils.race): whatever it held
NAMING_FIELDS = (*IDENTITY, "status", "started_at")  # what a row is and when: no path to make relative
# The rows' format, written on every line: a file written by another version of the rows is refused
# whole, in one line, rather than read half right.
ROW_FORMAT = 3  # 3: a cell is a configuration (mode+modifiers), not a mode with a profile-wide dtype
FORMAT_KEY = "format"


def _not_finite(value, depth: int = 0) -> bool:
    """A float that is NaN or infinite, in the value or in its lists or mapping (two levels deep)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if depth < 2 and isinstance(value, (list, tuple)):
        return any(_not_finite(item, depth + 1) for item in value)
    if depth < 2 and isinstance(value, dict):
        return any(_not_finite(item, depth + 1) for item in value.values())
    return False


def _first_not_finite(value):
    """The first NaN or infinity in `value` (a float, or one in its lists or mapping)."""
    if isinstance(value, float):
        return value
    items = value.values() if isinstance(value, dict) else value
    return next(_first_not_finite(item) for item in items if _not_finite(item))


class OtherFormatError(ConfigError):
    """A results file written by an older (or newer) compile-bench: its rows are not this one's."""


class Row:
    """What every results row shares (subclasses are frozen dataclasses with `label`, `settings`,
    `status`, `error`, `started_at` and `duration_s` fields, and a `key`): its status checked when made,
    JSON out and in, the row schema when read back (row_schema.py), and the row of a process that never
    wrote its own (`failed`)."""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status: {self.status!r} is not allowed; allowed: {', '.join(STATUSES)}")

    @property
    def key(self) -> tuple:
        """What the row measures; a later row with the same key (and label and settings) replaces it."""
        raise NotImplementedError

    @property
    def identity(self) -> tuple:
        """The key among rows of one label and settings: rows of another label or other settings are
        kept apart, never taken as re-runs of one another."""
        return (self.label, self.settings, *self.key)

    def to_json(self) -> str:
        return json.dumps({FORMAT_KEY: ROW_FORMAT} | dataclasses.asdict(self), sort_keys=True)

    def without_local_paths(self, folder: Path, also: dict | None = None) -> "Row":
        """The row as a results file keeps it: its texts (errors, notes, graph-break reasons; not its
        names) with absolute paths of this machine made relative to `folder` (paths.relative_text; the
        folders of `also` shown by their names), so a results file published beside its page names none."""
        changes = {}
        for name in (f.name for f in dataclasses.fields(self) if f.name not in NAMING_FIELDS):
            value = getattr(self, name)
            if isinstance(value, str) and "/" in value:
                changes[name] = relative_text(value, folder, also)
            elif isinstance(value, list) and any(isinstance(item, str) and "/" in item for item in value):
                changes[name] = [relative_text(item, folder, also) if isinstance(item, str) else item for item in value]
        return dataclasses.replace(self, **changes) if changes else self

    def finite(self) -> "Row":
        """The row as it may be kept: a measured value that is not a finite number (an accuracy
        difference of NaN from an output holding NaN, an infinite latency) makes an ok row a failed one
        (`error`) naming the field, its value left out (the field's default). Written as it was, the
        reader refused the row, so the cell read as never measured and every run measured it again."""
        bad = [f for f in dataclasses.fields(self) if _not_finite(getattr(self, f.name))]
        if not bad:
            return self
        said = ", ".join(f"{f.name} {_first_not_finite(getattr(self, f.name))}" for f in bad)
        changes = {f.name: f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
                   for f in bad}
        changes |= {BLOCKS_OF[name]: [] for name in changes if name in BLOCKS_OF}  # no samples, no blocks
        if self.status == "ok":
            changes |= {"status": "error", "error": f"a measurement that is not a finite number: {said} (an output "
                                                    "or a timer gave NaN or infinity: no figure)"}
        else:
            changes["error"] = f"{self.error}; and not finite: {said}"
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(cls, values: dict):
        """The row from its JSON object (the format key left out)."""
        return cls(**{k: v for k, v in values.items() if k != FORMAT_KEY})

    @classmethod
    def from_line(cls, line: str):
        """The row of one line of a results file; ValueError (RowSchemaError when it is JSON but not a
        believable row; OtherFormatError when another version wrote it) or TypeError when it is not one."""
        values = json.loads(line)
        if not isinstance(values, dict):
            raise TypeError("not a JSON object")
        if values.get(FORMAT_KEY) != ROW_FORMAT:
            if FORMAT_KEY not in values and not {"model", "label"} <= values.keys():
                # every row any version wrote names its run and model: this line is not a row (a skipped
                # line, like a broken one), not a file of another version (which would refuse the file)
                raise RowSchemaError("a JSON object that is not a results row (no format, label or model)")
            raise OtherFormatError(values.get(FORMAT_KEY))
        problem = row_problem(values, field_types(cls))
        if problem:
            raise RowSchemaError(problem)
        return cls.from_dict(values)

    @classmethod
    def failed(cls, identity: dict, status: str, error: str, duration_s: float):
        """The row of a process that ended without writing one (a lost worker, a failed task): its
        identity fields, how it ended, and when it started (`duration_s` seconds ago)."""
        if status == "ok":
            raise ValueError(f"status: 'ok' is not allowed; allowed: {', '.join(STATUSES[1:])}")
        started = dt.datetime.fromtimestamp(time.time() - duration_s, dt.timezone.utc).isoformat(timespec="milliseconds")
        return cls(**identity, status=status, error=error, duration_s=duration_s, started_at=started)


@dataclass(frozen=True)
class BenchResult(Row):
    # --- the cell ---
    label: str  # hardware label from the parameters, e.g. "A100"
    model: str  # registry short name
    checkpoint: str  # hub id of the architecture
    task: str
    size: str  # "full" or "tiny"
    batch_size: int
    configuration: str  # "eager" (the float32 baseline) or a configuration: mode+modifiers (config/configurations.py)
    repeat: int  # which round of the cell (0 .. repeats - 1, then extra rounds)
    fullgraph: bool
    device: str  # resolved device: "cpu" or "cuda"
    settings: str  # BenchConfig.settings_fingerprint(): rows with equal settings are comparable
    # --- outcome ---
    status: str  # one of STATUSES
    error: str = ""  # exception type and message when status != "ok"
    weights: str = ""  # what was actually used: "pretrained", "random" or OWN_WEIGHTS (a notebook's object)
    weights_note: str = ""  # why (e.g. "not in local cache, offline")
    num_params: int = 0
    warmup: int = 0  # the config's minimum warm-up calls
    iterations: int = 0  # the config's minimum timed calls
    min_time_s: float = 0.0  # the config's minimum timed duration per mode, seconds
    # --- this process's latency for the row's configuration, milliseconds (the cell's statistics over all its
    # processes, and the speedup against its eager cell, are computed in aggregate.py) ---
    latency_ms_mean: float | None = None
    latency_ms_median: float | None = None
    # --- how the numbers were taken ---
    warmup_calls: int | None = None  # untimed calls until steady (or until max_warmup_s)
    warmup_s: float | None = None  # seconds they took
    warmup_steady: bool | None = None  # False: warm-up hit max_warmup_s before the latency settled
    others_cpu_pct: float | None = None  # CPU used by other processes while timing, % of the machine
    steal_pct: float | None = None  # CPU time taken by the hypervisor while timing, % of the machine
    page_faults_per_call: float | None = None  # minor page faults per timed call, every thread of the process
    # --- compile and resources ---
    compile_s: float | None = None  # wall time of the first compiled call (trace + codegen + run)
    # CPU: seconds of a new process's compile from the cell's filled cache (a shipped form: its load) and
    # first call, the model's build left out: what a new process pays to compile (measure/startup.py)
    compile_warm_s: float | None = None
    # a cell's warm compile is its later fresh processes' compile_s (results/aggregate.py)
    # --- a new process's start (measure/startup.py; CPU: round 0 with `startup`, else a leader's later round) ---
    build_s: float | None = None  # the measuring process's model build (code and weights), seconds: the cold start's first part
    first_answer_s: float | None = None  # a new process from its start to its first correct answer, seconds
    start_frames: int | None = None  # dynamo frames that new process traced (0: it compiled nothing)
    start_fx_cache_hits: int | None = None  # Inductor FX-graph cache hits in it
    start_fx_cache_misses: int | None = None  # ... and misses (graphs it compiled from scratch)
    ships_bytes: int | None = None  # the file a new process starts from (package, ONNX file, cache artifacts), bytes
    regions: int | None = None  # regional: the blocks compiled one by one
    regions_at: str = ""  # ... which, and where: "12 x ViTLayer at vit.encoder.layer"
    # Memory, MiB, read over the row's own timed calls (not eager's timed beside them:
    # measure/device_memory.py). peak_mem_mb: CUDA max allocated while timing, or the process's peak RSS
    # on CPU. A CUDA-graph replay allocates nothing (cudagraph_trees.py: graph.replay(), outputs rebuilt
    # on the pool's memory from raw pointers), so a CUDA-graph mode's activations are NOT in its
    # peak_mem_mb: compare modes on peak_reserved_mb, the caching allocator's footprint while timing
    # (cached blocks were released before timing; it holds the CUDA-graph pool), of which
    # cudagraph_pool_mb is the CUDA-graph pools' share.
    peak_mem_mb: float | None = None
    peak_reserved_mb: float | None = None  # CUDA max reserved while timing, pools included
    cudagraph_pool_mb: float | None = None  # CUDA: memory reserved in private (CUDA-graph) pools after timing
    max_abs_diff: float | None = None  # against eager float32's output
    accuracy_ok: bool | None = None  # float32: max_abs_diff within tolerance; lower precision: task_agreement
    accuracy_reference: str = ""  # "elementwise" (float32 against eager float32) or "task" (lower precision)
    task_agreement: float | None = None  # top-1 / mask IoU / box agreement with eager float32
    graph_breaks: int | None = None
    graph_count: int | None = None
    recompiles: int | None = None
    fx_cache_hits: int | None = None  # Inductor FX graph cache hits while compiling (warm compile)
    fx_cache_misses: int | None = None  # ... and misses (graphs generated from scratch)
    cudagraph_skips: int | None = None  # graphs Inductor ran without CUDA graphs (reduce-overhead)
    cudagraphs_recorded: int | None = None  # CUDA graphs recorded (CUDA only): 0 = the mode ran without
    # --- what the configuration's settings did, read back from torch (measure/evidence.py; None: it asks
    # for none) ---
    params_folded: int | None = None  # freezing: parameters and buffers the compiled graphs held as constants
    params_unfolded: int | None = None  # freezing: parameters still passed to them as inputs (0 when it took effect)
    autotune_choices: int | None = None  # max-autotune: operators lowered with several kernels to choose between
    matmuls_seen: int | None = None  # matrix multiplies and convolutions of one call, as the profiler saw them
    matmuls_in_autocast_dtype: int | None = None  # ... of them in the autocast dtype
    convs_seen: int | None = None  # channels_last: convolutions of one call
    convs_channels_last: int | None = None  # ... of them with a channels_last input
    break_reasons: list[str] = field(default_factory=list)  # dynamo's graph-break reasons, first lines
    recompile_reasons: list[str] = field(default_factory=list)  # the guards that failed, first lines
    # --- why (profiler: true, repeat 0 only): torch.profiler over a few calls after timing, per call ---
    profile_calls: int | None = None  # calls profiled
    profile_call_ms: float | None = None  # a profiled call (slower than timed calls: the profiler's cost)
    profile_ops_per_call: float | None = None  # dispatcher operators, top of their nesting
    profile_op_ms: float | None = None  # time inside those operators
    profile_compiled_ms: float | None = None  # time in compiled graphs outside operators (fused kernels)
    profile_overhead_ms: float | None = None  # the rest: Python, module calls, guards
    profile_kernels_per_call: float | None = None  # CUDA kernels run
    profile_device_ms: float | None = None  # CUDA: the device's busy time (kernels)
    profile_launches_per_call: float | None = None  # CUDA: kernel launches by the host
    profile_graph_replays_per_call: float | None = None  # CUDA: CUDA-graph replays
    profile_top_ops: list = field(default_factory=list)  # [[operator or kernel, self ms per call], ...]
    profile_error: str = ""  # the profiler pass failed (the timing stands)
    profile_trace: str = ""  # the trace's file name in the results folder's traces/ (Perfetto, TensorBoard)
    profile_s: float | None = None  # seconds the pass took (its calls, their summary, the trace): plan.PROFILE_S's figure
    # --- raw samples, seconds ---
    samples_s: list[float] = field(default_factory=list)
    # calls in each timed block, in order (sum = len(samples_s)); the round's other modes timed their
    # blocks in between (ABBA), so block i of two modes of one round were timed moments apart
    block_lengths: list[int] = field(default_factory=list)
    # eager_in_process: eager float32's samples and blocks timed in this process, its block i beside
    # this configuration's block i (eager first in even blocks, second in odd: ABBA), seconds
    eager_samples_s: list[float] = field(default_factory=list)
    eager_block_lengths: list[int] = field(default_factory=list)
    # --- the host at each timed block's end (measure/launch_thread.py: what moves a launch-bound call) ---
    block_cpus: list = field(default_factory=list)  # the CPU the measuring thread ran on (-1: unknown)
    block_others_cpu_pct: list[float] = field(default_factory=list)  # other processes' CPU over the block, %
    block_sm_clock_mhz: list[float] = field(default_factory=list)  # CUDA with NVML: the GPU's SM clock, MHz
    pinned_cpu: int | None = None  # CUDA: the CPU its measuring thread was pinned to (None: not pinned)
    # the spares (sweep/workers.Spares) still importing when its compile began (the runner knows it): 0 alone
    compiled_beside_starts: int = 0
    # --- provenance ---
    env: dict = field(default_factory=dict)  # environment.collect()
    started_at: str = ""  # ISO 8601 UTC
    duration_s: float | None = None  # wall time of the whole cell
    exit_code: int | None = None  # the worker's exit status (-N: killed by signal N) when it ended after this
    # round; None while it went on to later rounds
    # the round this row's measuring process started in: `repeat` for a fresh process (on a CPU every
    # round's, forked from a prepared one), smaller when the process measured earlier rounds too (a GPU's
    # rounds_per_process); None in the row of a process lost before it wrote one
    process_round: int | None = None
    # CPU: the round in which the process it was forked from was prepared (built, compiled, warmed up;
    # measure/forked.py); None where the measuring process prepared itself (a GPU's)
    template_round: int | None = None

    @property
    def prepared_round(self) -> int | None:
        """The round whose start built and compiled what this row measured: a fresh preparation (a
        compile) when it equals `repeat`."""
        return self.template_round if self.template_round is not None else self.process_round

    @property
    def cell(self) -> tuple:
        """The cell this row measures: the same for every repeat (see cell_key)."""
        return cell_key(self.model, self.size, self.batch_size, self.configuration, self.fullgraph)

    @property
    def key(self) -> tuple:
        """The process this row is: its cell and repeat. A later row with the same key replaces it."""
        return (*self.cell, self.repeat)


def timed_s(row) -> float:
    """Seconds of timed calls a row holds: its own and eager's beside them (eager_in_process); 0 for a
    row that times no blocks (a study's)."""
    return sum(getattr(row, "samples_s", None) or []) + sum(getattr(row, "eager_samples_s", None) or [])


def model_fields(cfg, model: str, device: str) -> dict:
    """What every row of `cfg` (a BenchConfig) about `model` carries, a cell's or a study's: the run's
    label, the model, the size, the device and the settings."""
    spec = cfg.spec(model)
    return dict(label=cfg.label, model=model, checkpoint=spec.published, task=spec.task, size=cfg.size,
                device=device, settings=cfg.settings_fingerprint())


def cell_fields(cfg, model: str, batch_size: int, configuration: str, device: str, repeat: int = 0) -> dict:
    """The identity and settings columns of a row for one process of a cell of `cfg`."""
    return model_fields(cfg, model, device) | dict(
        batch_size=batch_size, configuration=configuration, repeat=repeat, fullgraph=cfg.fullgraph,
        warmup=cfg.warmup, iterations=cfg.iterations, min_time_s=cfg.min_time_s)


def cell_key(model: str, size: str, batch_size: int, configuration: str, fullgraph: bool) -> tuple:
    """What makes two rows measurements of the same cell: model, size, batch and configuration."""
    return (model, size, int(batch_size), configuration, bool(fullgraph))


def run_key(cfg, run: tuple) -> tuple:
    """The key of the row that one run of `cfg` (model, batch_size, configuration, repeat) writes."""
    model, batch_size, configuration, repeat = run
    return (*cell_key(model, cfg.size, batch_size, configuration, cfg.fullgraph), int(repeat))


@dataclass(frozen=True)
class LoadedRows:
    rows: list  # last row per identity (label, settings and key), in file order
    skipped_lines: list[int]  # 1-based line numbers that were not valid rows


# What one results file may hold: its lines are read one at a time and at most this much is kept, so
# a huge or hostile file costs bounded memory and is refused in one line. A real file is far below:
# the GPU matrix of 12 models x 3 batch sizes x 3 modes x 12 rounds is ~1,300 rows of ~25 KB.
MAX_LINE_BYTES = 8 * 2**20  # one row: ~400,000 samples
MAX_FILE_ROWS = 100_000
MAX_FILE_BYTES = 256 * 2**20


class ResultsTooLargeError(ConfigError):
    """A results file beyond what a sweep writes: refused whole, in one line."""


def bounded_lines(fh):
    """(line number, text) of a binary file, one line at a time; a line longer than MAX_LINE_BYTES
    comes back as None (read past, never held whole)."""
    number = 0
    while True:
        line = fh.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = fh.readline(MAX_LINE_BYTES)
            yield number, None
            continue
        yield number, line.decode("utf-8-sig" if number == 1 else "utf-8", errors="replace")  # a BOM: no row lost


def read_rows(path: str | Path, row_type: type[Row]) -> LoadedRows:
    """The rows of `row_type` in a results file (a sweep's, or a study's next to it), the last per
    identity; broken lines (a kill mid-write), lines over MAX_LINE_BYTES and rows that fail the row
    schema (row_schema.py: types, modes, believable numbers) are skipped and reported in one warning,
    never fatal. The file is read a line at a time: one beyond MAX_FILE_ROWS rows or MAX_FILE_BYTES
    is refused (ResultsTooLargeError); so is one whose rows are of more than one run (MixedRunsError:
    one results file holds one label, device, machine and torch version). Rows of other settings are
    kept apart, never taken as re-runs. A missing file is no rows."""
    path = Path(path)
    if not path.is_file():
        return LoadedRows([], [])
    latest: dict[tuple, Row] = {}
    skipped: list[int] = []
    problems: list[str] = []  # "line N: why" for rows that parsed but are not believable
    file_run: dict = {}
    size, count = 0, 0
    with open(path, "rb") as fh:
        for number, line in bounded_lines(fh):
            if line is None:
                skipped.append(number)
                problems.append(f"line {number}: longer than {MAX_LINE_BYTES // 2**20} MB")
                continue
            if not line.strip():
                continue
            size, count = size + len(line), count + 1
            if size > MAX_FILE_BYTES or count > MAX_FILE_ROWS:
                raise ResultsTooLargeError(
                    f"{path}: more than {MAX_FILE_ROWS:,} rows or {MAX_FILE_BYTES // 2**20} MB (line {number}); "
                    "a sweep writes far fewer: split the file, or measure into a new one")
            try:
                row = row_type.from_line(line)
            except OtherFormatError as err:
                found = err.args[0]
                age = "a newer" if isinstance(found, int) and found > ROW_FORMAT else "an older"
                raise OtherFormatError(f"{path}: written by {age} compile-bench (line {number}: results "
                                       f"format {'none' if found is None else repr(found)}, this one reads "
                                       f"{ROW_FORMAT}); measure again into a new results file") from None
            except (json.JSONDecodeError, TypeError, ValueError, RecursionError) as err:  # deep nesting too
                skipped.append(number)
                if isinstance(err, RowSchemaError):
                    problems.append(f"line {number}: {err}")
                continue
            other = other_run(file_run, vars(row))
            if other is not None:
                raise MixedRunsError(f"{path}: line {number} was measured by another run ({run_text(other)}) than "
                                     f"the rows before it ({run_text(file_run)}); one results file holds one run: "
                                     "put those rows in a file of their own")
            latest.pop(row.identity, None)  # a re-run replaces the earlier row
            latest[row.identity] = row
    if skipped:
        why = f"; {problems[0]}" if problems else ""
        warnings.warn(f"{path}: skipped {len(skipped)} unreadable line(s): {skipped[:5]}{why}", stacklevel=2)
    rows = list(latest.values())
    runs = {(row.label, row.settings) for row in rows}
    if len(runs) > len({label for label, _ in runs}):
        warnings.warn(f"{path}: rows measured with different settings under one label; their rows are kept apart, "
                      "not combined", stacklevel=2)
    return LoadedRows(rows, skipped)


def read_results(path: str | Path) -> LoadedRows:
    """A sweep's results file (its cells' rows, read_rows), which must exist: a study's file may not."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: {'not a file' if path.exists() else 'results file not found'}")
    return read_rows(path, BenchResult)


class RowSchemaError(ValueError):
    """A line is JSON but not a believable results row."""
