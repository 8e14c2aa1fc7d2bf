"""Parameters from outside into a BenchConfig: a mapping (papermill's parameters, the worker's JSON)
or a YAML file (duplicate keys refused, required keys checked). Every error is one line naming the
key, and the file when there is one. No torch.
"""

from __future__ import annotations

import dataclasses

from pathlib import Path

from .bench_config import BenchConfig
from .schema import parameters
from .validation import ConfigError, refuse

REQUIRED_KEYS = ("label", "models", "batch_sizes", "configurations")
# keys of earlier versions, with what says the same now: one line instead of "not a parameter"
REPLACED_KEYS = {"modes": "configurations (e.g. [eager, default, reduce-overhead])",
                 "dtype": "configurations (e.g. default+bf16-autocast)", "autocast": "configurations (e.g. "
                 "eager+bf16-autocast)", "channels_last": "configurations (e.g. default+channels-last)",
                 "cold_compile": "a compiler cache of each cell's own, emptied before its first process (every "
                 "run measures the cold compile, then warm ones): remove the key",
                 "profile": "profiler (true or false: the torch.profiler pass after timing)",
                 "compile_strategies": "configurations (e.g. default+regional, default+artifacts; startup: true "
                 "times each one's start in a new process)"}
PARAMETER_NAMES = tuple(p.name for p in parameters(BenchConfig))  # the keys a file or notebook may set
_LIST_ITEM = {p.name: p.item or str for p in parameters(BenchConfig) if p.kind in ("list", "models", "configurations")}


def _own_entry(entry) -> tuple[str, str, str]:
    """{name, checkpoint, task} (task optional), or its list form [name, checkpoint, task]."""
    if isinstance(entry, (list, tuple)) and len(entry) == 3:
        entry = dict(zip(("name", "checkpoint", "task"), entry))
    keys = set(entry) if isinstance(entry, dict) else set()
    if not isinstance(entry, dict) or keys - {"name", "checkpoint", "task"} or not {"name", "checkpoint"} <= keys:
        refuse("models", entry, "a registry name or {name: ..., checkpoint: FOLDER_OR_HUB_ID, task: ...} "
                                "(task optional for a folder)")
    values = (entry["name"], entry["checkpoint"], entry.get("task") or "")
    if not all(isinstance(v, str) for v in values) or not values[0] or not values[1]:
        refuse("models", entry, "name, checkpoint and task as text")
    return values


def config_from_dict(values: dict, source: str = "parameters") -> BenchConfig:
    """Validate a mapping (from YAML or papermill parameters) into a BenchConfig."""
    if not isinstance(values, dict):
        raise ConfigError(f"{source}: expected a mapping of key: value, got {type(values).__name__}")
    replaced = sorted(set(values) & set(REPLACED_KEYS))
    if replaced:
        raise ConfigError(f"{replaced[0]}: replaced by {REPLACED_KEYS[replaced[0]]}")
    odd = [key for key in values if not isinstance(key, str)]
    if odd:  # YAML reads `1:` and `null:` as a number and None: no parameter is named so
        refuse(str(odd[0]), values[odd[0]], "keys " + ", ".join(PARAMETER_NAMES))
    unknown = sorted(set(values) - set(PARAMETER_NAMES))
    if unknown:
        refuse(unknown[0], values[unknown[0]], "keys " + ", ".join(PARAMETER_NAMES))
    kwargs = {}
    values = dict(values)
    own = [_own_entry(entry) for entry in values.pop("checkpoints", None) or []]
    if isinstance(values.get("models"), list):  # {name, checkpoint, task} entries: your own checkpoints
        own += [_own_entry(entry) for entry in values["models"] if not isinstance(entry, str)]
        values["models"] = [entry if isinstance(entry, str) else entry["name"] for entry in values["models"]]
    if own:
        kwargs["checkpoints"] = tuple(own)
    for key, value in values.items():
        if key in _LIST_ITEM:
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                value = [value]  # a lone value is a one-item list
            if not isinstance(value, list):
                refuse(key, value, f"a list of {_LIST_ITEM[key].__name__}")
            value = tuple(value)
        kwargs[key] = value
    return BenchConfig(**kwargs)


class DuplicateKeyError(ValueError):
    """A parameters file names one key twice (YAML keeps the last silently), or a key that is a list."""


class TooLargeError(ValueError):
    """A parameters file too big, too deep or with too many aliases to be a profile (a YAML bomb)."""


MAX_FILE_BYTES = 1_000_000  # a profile is a few hundred bytes; 12 models x every option is a few KB
MAX_DEPTH = 20  # nesting of lists and mappings: a profile needs 3 (models: - {name: ...})
MAX_ALIASES = 100  # *alias uses in one file
MAX_NODES = 100_000  # values once every alias is expanded: what a billion-laughs file multiplies


def _bounded_loader():
    """A SafeLoader that refuses duplicate keys, and bounds a file before anything is built from it:
    nesting depth while composing (no RecursionError), alias uses, and the number of values the file
    stands for with every alias expanded (no exponential object, error text or JSON downstream)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def __init__(self, stream):
            super().__init__(stream)
            self._depth, self._aliases = 0, 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                self._aliases += 1
                if self._aliases > MAX_ALIASES:
                    raise TooLargeError(f"more than {MAX_ALIASES} aliases (*name); allowed: a plain profile")
                return super().compose_node(parent, index)
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise TooLargeError(f"nested deeper than {MAX_DEPTH} levels; allowed: a plain profile")
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def get_single_node(self):
            node = super().get_single_node()
            if node is not None and _expanded_size(node, {}) > MAX_NODES:
                raise TooLargeError(f"stands for more than {MAX_NODES:,} values once its aliases are expanded; "
                                    "allowed: a plain profile")
            return node

        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if isinstance(key, (list, dict)):
                    where = key_node.start_mark.line + 1
                    raise DuplicateKeyError(f"a key that is a {type(key).__name__} (line {where}); allowed: the "
                                            "parameters' names")
                if key in seen:
                    raise DuplicateKeyError(f"key {key!r:.80} appears twice (line {key_node.start_mark.line + 1}); "
                                            "allowed: each key once")
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return Loader


def _expanded_size(node, sizes: dict) -> int:
    """How many values `node` stands for with its aliases expanded (an alias is the same node object
    again: each is counted once per use, computed once)."""
    if id(node) in sizes:
        return sizes[id(node)]
    sizes[id(node)] = 1  # a node that contains itself (a recursive alias) counts as one so far
    children = node.value if isinstance(node.value, list) else []
    total = 1
    for child in children:
        for part in (child if isinstance(child, tuple) else (child,)):  # a mapping's (key, value) pairs
            total += _expanded_size(part, sizes)
            if total > MAX_NODES:
                break
    sizes[id(node)] = total
    return total


def load_config(path: str | Path) -> BenchConfig:
    """Read and validate a parameters YAML file; raises ConfigError with a one-line message."""
    import yaml

    path = Path(path)
    if not path.is_file():  # a FIFO or a device exists, and is no file to read
        raise ConfigError(f"{path}: parameters file " + ("not found" if not path.exists() else "is not a regular file"))
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise TooLargeError(f"larger than {MAX_FILE_BYTES:,} bytes; allowed: a plain profile")
        text = path.read_text(encoding="utf-8")  # whatever the locale (LC_ALL=C read a UTF-8 profile as binary)
        values = yaml.load(text, Loader=_bounded_loader())  # noqa: S506 - a SafeLoader subclass
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the parameters file ({err.strerror})") from None
    except (DuplicateKeyError, TooLargeError) as err:
        raise ConfigError(f"{path}: {err}") from None
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        line = f" (line {where.line + 1})" if where else ""
        raise ConfigError(f"{path}: not valid YAML{line}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a text file") from None
    except (ValueError, RecursionError) as err:  # e.g. an integer of 5,000 digits (Python's own limit)
        raise ConfigError(f"{path}: not valid YAML ({str(err)[:80]})") from None
    if values is None:
        raise ConfigError(f"{path}: the file is empty; required keys: {', '.join(REQUIRED_KEYS)}")
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: expected a mapping of key: value, got {type(values).__name__}")
    replaced = sorted(set(values) & set(REPLACED_KEYS))
    if replaced:
        raise ConfigError(f"{path}: {replaced[0]}: replaced by {REPLACED_KEYS[replaced[0]]}")
    missing = [key for key in REQUIRED_KEYS if key not in values]
    if missing:
        raise ConfigError(f"{path}: missing required key {missing[0]!r}; required: {', '.join(REQUIRED_KEYS)}")
    try:
        return config_from_dict(values, source=str(path))
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None


def with_budget(configs: list, budget_min: float | None) -> list:
    """`configs` with `budget_min` in place of their own (None: as they are), checked as a profile's is.
    A results file keeps taking rows: the budget is a decision field, not a measurement setting."""
    if budget_min is None:
        return configs
    try:
        return [dataclasses.replace(cfg, budget_min=budget_min) for cfg in configs]
    except ValueError as err:
        raise ConfigError(f"--budget-min: {err}") from None
