"""Parameters from outside into a BenchConfig: a mapping (papermill's parameters, the worker's JSON)
or a YAML file (duplicate keys refused, required keys checked). Every error is one line naming the
key, and the file when there is one. No torch.
"""

from __future__ import annotations

from pathlib import Path

from .bench_config import BenchConfig
from .schema import parameters
from .validation import ConfigError, refuse

REQUIRED_KEYS = ("label", "models", "batch_sizes", "configurations")
# keys of earlier versions, with what says the same now: one line instead of "not a parameter"
REPLACED_KEYS = {"modes": "configurations (e.g. [eager, default, reduce-overhead])",
                 "dtype": "configurations (e.g. default+bf16-autocast)", "autocast": "configurations (e.g. "
                 "eager+bf16-autocast)", "channels_last": "configurations (e.g. default+channels-last)"}
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
    """A parameters file names one key twice (YAML keeps the last silently)."""


def _unique_key_loader():
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise DuplicateKeyError(f"key {key!r} appears twice (line {key_node.start_mark.line + 1}); "
                                            "allowed: each key once")
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return Loader


def load_config(path: str | Path) -> BenchConfig:
    """Read and validate a parameters YAML file; raises ConfigError with a one-line message."""
    import yaml

    _UniqueKeyLoader = _unique_key_loader()
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: parameters file not found")
    try:
        values = yaml.load(path.read_text(), Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the parameters file ({err.strerror})") from None
    except DuplicateKeyError as err:
        raise ConfigError(f"{path}: {err}") from None
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        line = f" (line {where.line + 1})" if where else ""
        raise ConfigError(f"{path}: not valid YAML{line}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a text file") from None
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
