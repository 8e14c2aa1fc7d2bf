"""Is a results row believable? Every row read back from a file, a cell's or a study's (rows.read_rows),
is checked here against the row schema (its type's fields and their types, the known modes and
statuses, samples a timer could have taken, enough of them for the row's own settings) before it can
reach a table or a verdict: a results file is input like any other, edited, merged or damaged by hand.
No torch.
"""

from __future__ import annotations

import dataclasses
import functools
import math

from ..config.configurations import is_configuration
from ..config.validation import CONTROL
from .record import MAX_SAMPLE_S, MIN_SAMPLE_S, RECORD, SECONDS

ENV_TEXT = ("device", "device_name", "torch", "transformers", "python", "platform", "hostname")  # env keys pages show
# Numbers a measurement could have given, by field name: a cell row's from its column's declaration
# (record.py), a study row's own here. A field not named has its type's bounds: finite, whole numbers
# >= 0 and at most MAX_COUNT.
STUDY_BOUNDS = {"compile_total_s": SECONDS, "artifact_load_s": SECONDS}
BOUNDS = {column.field: column.bounds for column in RECORD if column.bounds} | STUDY_BOUNDS
MAX_COUNT = 10**9  # graph breaks, calls, processes ... of one row
COUNT_BOUNDS = {"num_params": 10**13, "artifact_bytes": 2**50}  # whole numbers that may be larger
MAX_TEXT = 20_000  # characters of any text field (an error text with a log tail is ~2,500)
MAX_ITEMS = 10_000  # items of a list of text (graph-break reasons ...)
# The fields that name a row (and so a page's title, a chart's label, a file name): short, and free of
# control characters, which a terminal would run
IDENTITY = ("label", "model", "checkpoint", "task", "size", "configuration", "device", "settings", "setting",
            "strategy")
MAX_IDENTITY = 300
MAX_CPU = 2**20  # a CPU's number (os.cpu_count's bound in ENV_FIELDS)
MAX_CLOCK_MHZ = 100_000.0  # a GPU's SM clock: today's run at 0.2-3 GHz
# the environment's fields that are not text: (what a value must be, the test)
ENV_FIELDS = {
    "cpu_count": ("a whole number >= 1 or null", lambda v: v is None or (type(v) is int and 1 <= v <= 2**20)),
    "torch_threads": ("a whole number >= 1 or null", lambda v: v is None or (type(v) is int and 1 <= v <= 2**20)),
    "gpu_memory_gb": ("a number >= 0 or null", lambda v: v is None or (_is_number(v) and 0 <= v <= 2**20)),
    "compute_capability": ('"" or a version such as "8.0"', lambda v: isinstance(v, str) and (
        v == "" or (len(v) <= 8 and v.replace(".", "", 1).isdigit() and "." in v)))}


def _is_number(value) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _is_top_op(item) -> bool:
    """[operator or kernel name, self ms per call]: what profiling.py writes per top operator (a name a
    chart labels an axis with: at most MAX_IDENTITY characters)."""
    return (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and len(item[0]) <= MAX_IDENTITY
            and _is_number(item[1]) and 0 <= item[1] <= MAX_SAMPLE_S * 1e3)


def _is_file_name(value) -> bool:
    """A name in a folder (a trace's in traces/): no separator, not . or .., no control character."""
    return isinstance(value, str) and len(value) <= MAX_IDENTITY and "/" not in value and "\\" not in value \
        and value not in (".", "..") and not CONTROL.search(value)


_CHECKS = {  # a row field's annotation -> (what a value must be, in words; the test)
    "str": ("text", lambda v: isinstance(v, str)),
    "int": ("a whole number >= 0", lambda v: type(v) is int and v >= 0),
    "int | None": ("a whole number >= 0 or null", lambda v: v is None or (type(v) is int and v >= 0)),
    "float": ("a finite number >= 0", lambda v: _is_number(v) and v >= 0),
    "float | None": ("a finite number or null", lambda v: v is None or _is_number(v)),
    "bool": ("true or false", lambda v: type(v) is bool),
    "bool | None": ("true, false or null", lambda v: v is None or type(v) is bool),
    "list[str]": ("a list of text", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)),
    "list[bool]": ("a list of true or false", lambda v: isinstance(v, list) and all(type(x) is bool for x in v)),
    "list[float]": ("a list of finite numbers", lambda v: isinstance(v, list) and all(_is_number(x) for x in v)),
    "list[int]": ("a list of whole numbers >= 1", lambda v: isinstance(v, list) and all(type(x) is int and x >= 1
                                                                                         for x in v)),
    "list": ("a list", lambda v: isinstance(v, list)),
    "dict": ("a mapping", lambda v: isinstance(v, dict) and all(isinstance(k, str) for k in v)),
}


def _is_time(value) -> bool:
    """"" (not started) or an ISO 8601 time, as a row's started_at is written."""
    import datetime as dt

    try:
        return value == "" or (len(value) <= 40 and dt.datetime.fromisoformat(value) is not None)
    except (TypeError, ValueError):
        return False


# fields whose values the annotation alone does not describe
_FIELD_CHECKS = {"exit_code": ("a whole number (minus a signal) or null",
                               lambda v: v is None or (type(v) is int and abs(v) <= 2**31)),
                 "profile_top_ops": ("a list of [name, ms per call] pairs",
                                     lambda v: isinstance(v, list) and len(v) <= MAX_ITEMS and all(map(_is_top_op, v))),
                 "profile_trace": ("a file name", _is_file_name),
                 "started_at": ("an ISO 8601 time or empty", _is_time),
                 # a cell has at most max_repeats (100) rounds: a larger one would be a loop's bound
                 "repeat": ("a round from 0 to 1,000", lambda v: type(v) is int and 0 <= v <= 1000),
                 "process_round": ("a round from 0 to 1,000, or null",
                                   lambda v: v is None or (type(v) is int and 0 <= v <= 1000)),
                 "template_round": ("a round from 0 to 1,000, or null",
                                    lambda v: v is None or (type(v) is int and 0 <= v <= 1000)),
                 # the host at each block's end (measure/launch_thread.py): a CPU's number (-1: unknown), a share
                 # of the machine, a clock
                 "block_cpus": ("a list of CPU numbers (-1: unknown)",
                                lambda v: isinstance(v, list) and len(v) <= MAX_ITEMS
                                and all(type(x) is int and -1 <= x <= MAX_CPU for x in v)),
                 "block_others_cpu_pct": ("a list of percentages", lambda v: isinstance(v, list) and len(v) <= MAX_ITEMS
                                          and all(_is_number(x) and 0 <= x <= 100 for x in v)),
                 "block_sm_clock_mhz": ("a list of clocks in MHz", lambda v: isinstance(v, list) and len(v) <= MAX_ITEMS
                                        and all(_is_number(x) and 0 <= x <= MAX_CLOCK_MHZ for x in v)),
                 "pinned_cpu": ("a CPU number or null", lambda v: v is None or (type(v) is int and 0 <= v <= MAX_CPU))}


def _field_problem(values: dict, types: dict) -> str:
    for name, value in values.items():
        if name not in types:
            continue  # a field this version lacks: from_dict refuses the row (TypeError: a skipped line)
        what, ok = _FIELD_CHECKS.get(name) or _CHECKS[types[name]]
        if not ok(value):
            return f"{name}: {value!r:.60} is not {what}"
        problem = _bounds_problem(name, value)
        if problem:
            return problem
    return ""


def _bounds_problem(name: str, value) -> str:
    """Is a value of the right type also one a measurement gives (BOUNDS, MAX_COUNT, text lengths)?"""
    if type(value) is int and name not in BOUNDS and value > COUNT_BOUNDS.get(name, MAX_COUNT):
        return f"{name}: {value:.3g} is beyond any measurement"
    if _is_number(value) and name in BOUNDS and not BOUNDS[name][0] <= value <= BOUNDS[name][1]:
        low, high = BOUNDS[name]
        return f"{name}: {value:.3g} is outside {low:g} .. {high:g}"
    if isinstance(value, str) and (len(value) > (MAX_IDENTITY if name in IDENTITY else MAX_TEXT)
                                   or (name in IDENTITY and CONTROL.search(value))):
        return f"{name}: {value[:40]!r}... is not text of at most {MAX_IDENTITY if name in IDENTITY else MAX_TEXT} " \
               "characters without control characters"
    if isinstance(value, (list, dict)) and len(value) > MAX_ITEMS * 100:
        return f"{name}: more than {MAX_ITEMS * 100:,} items"
    if isinstance(value, list) and value and isinstance(value[0], str) and (
            len(value) > MAX_ITEMS or any(len(item) > MAX_TEXT for item in value)):
        return f"{name}: more than {MAX_ITEMS:,} texts, or one longer than {MAX_TEXT:,} characters"
    return ""


def _samples_problem(values: dict, blocked: bool) -> str:
    samples = values.get("samples_s", [])
    for name, lengths in (("samples_s", "block_lengths"), ("eager_samples_s", "eager_block_lengths")):
        if any(not MIN_SAMPLE_S <= s <= MAX_SAMPLE_S for s in values.get(name, [])):
            return f"{name}: a value outside {MIN_SAMPLE_S:g} .. {MAX_SAMPLE_S:g} s"
        blocks = values.get(lengths) or []
        if (blocks or (blocked and values.get(name))) and sum(blocks) != len(values.get(name, [])):
            return f"{lengths}: {sum(blocks)} calls in blocks, {len(values.get(name, []))} samples"
    eager_blocks = values.get("eager_block_lengths") or []
    if values.get("status") == "ok" and eager_blocks and len(eager_blocks) != len(values.get("block_lengths") or []):
        return f"eager_block_lengths: {len(eager_blocks)} blocks beside {len(values.get('block_lengths') or [])}"
    needed = max(values.get("iterations", 0), 1)
    if values.get("status") == "ok" and (samples or blocked) and len(samples) < needed:
        return f"samples_s: {len(samples)} samples, fewer than the row's own iterations ({needed})"
    return ""


def row_problem(values: dict, types: dict) -> str:
    """"" when `values` (one JSON line, as a dict) is a believable row of the dataclass whose field
    annotations are `types` (name -> annotation text); else the first problem, in a few words."""
    problem = _field_problem(values, types)
    if problem:
        return problem
    if "configuration" in types and not is_configuration(values.get("configuration")):
        return f"configuration: {values.get('configuration')!r:.60} is not a known configuration"
    if values.get("batch_size", 1) < 1:
        return "batch_size: below 1"
    env = values.get("env", {})
    shown = next((key for key in ENV_TEXT if key in env and not isinstance(env[key], str)), None)
    if shown:
        return f"env.{shown}: not text"
    long = next((key for key, value in env.items() if isinstance(value, str) and len(value) > MAX_IDENTITY), None)
    if long or len(env) > 200:
        return f"env.{long or '...'}: more than {MAX_IDENTITY} characters, or more than 200 facts"
    for key, (what, ok) in ENV_FIELDS.items():
        if key in env and not ok(env[key]):
            return f"env.{key}: {env[key]!r:.40} is not {what}"
    if values.get("max_abs_diff") is not None and values["max_abs_diff"] < 0:  # its type allows any sign
        return "max_abs_diff: negative"
    return _samples_problem(values, "block_lengths" in types)


@functools.cache
def field_types(cls) -> dict:
    """name -> annotation text of a dataclass's fields (the text `from __future__ import annotations`
    leaves), the keys of _CHECKS; computed once per row type (every line read asks)."""
    return {f.name: str(f.type) for f in dataclasses.fields(cls)}
