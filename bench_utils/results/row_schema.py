"""Is a results row believable? Every row read back from a file, a cell's or a study's (rows.read_rows),
is checked here against the row schema (its type's fields and their types, the known modes and
statuses, samples a timer could have taken, enough of them for the row's own settings) before it can
reach a table or a verdict: a results file is input like any other, edited, merged or damaged by hand.
No torch.
"""

from __future__ import annotations

import dataclasses
import math

from ..config.configurations import is_configuration

# A sample is one timed call of a model, seconds: below a microsecond no forward pass ran (or the timer
# cannot tell), above a day the number is a typo or garbage, not a latency.
MIN_SAMPLE_S, MAX_SAMPLE_S = 1e-6, 86_400.0
ENV_TEXT = ("device", "device_name", "torch", "transformers", "python", "platform", "hostname")  # env keys pages show


def _is_number(value) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


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


# fields whose values the annotation alone does not describe
_FIELD_CHECKS = {"exit_code": ("a whole number (minus a signal) or null", lambda v: v is None or type(v) is int)}


def _field_problem(values: dict, types: dict) -> str:
    for name, value in values.items():
        if name not in types:
            continue  # a field of a newer or older version: from_dict leaves it out
        what, ok = _FIELD_CHECKS.get(name) or _CHECKS[types[name]]
        if not ok(value):
            return f"{name}: {value!r:.60} is not {what}"
    return ""


def _samples_problem(values: dict, blocked: bool) -> str:
    samples = values.get("samples_s", [])
    if any(not MIN_SAMPLE_S <= s <= MAX_SAMPLE_S for s in samples):
        return f"samples_s: a value outside {MIN_SAMPLE_S:g} .. {MAX_SAMPLE_S:g} s"
    blocks = values.get("block_lengths") or []
    if (blocks or (blocked and samples)) and sum(blocks) != len(samples):
        return f"block_lengths: {sum(blocks)} calls in blocks, {len(samples)} samples"
    needed = max(values.get("iterations", 0), 1)
    if values.get("status") == "ok" and samples and len(samples) < needed:
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
    for name in ("max_abs_diff", "latency_ms_mean", "latency_ms_median", "compile_s", "compile_warm_s"):
        if values.get(name) is not None and values[name] < 0:
            return f"{name}: negative"
    return _samples_problem(values, "block_lengths" in types)


def field_types(cls) -> dict:
    """name -> annotation text of a dataclass's fields (the text `from __future__ import annotations`
    leaves), the keys of _CHECKS."""
    return {f.name: str(f.type) for f in dataclasses.fields(cls)}
