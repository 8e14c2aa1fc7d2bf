"""Read a parameters YAML file into a BenchConfig: duplicate keys refused, required keys checked,
every error one line naming the file. No torch.
"""

from __future__ import annotations

from pathlib import Path

from .bench_config import BenchConfig, ConfigError
from .validation import config_from_dict

REQUIRED_KEYS = ("label", "models", "batch_sizes", "modes")


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
    missing = [key for key in REQUIRED_KEYS if key not in values]
    if missing:
        raise ConfigError(f"{path}: missing required key {missing[0]!r}; required: {', '.join(REQUIRED_KEYS)}")
    try:
        return config_from_dict(values, source=str(path))
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None
