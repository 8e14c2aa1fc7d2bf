"""Checks a command makes before it starts any cell: across profiles, and against this machine.

Separate from config/validation.py, which validates one profile's values without looking at the machine.
"""

from __future__ import annotations

from ..config.bench_config import BenchConfig, ConfigError


def check_distinct_folders(configs: list[BenchConfig], paths) -> None:
    """Profiles of one command must not share a results folder: "Lab A" and "lab-a" both map to lab-a."""
    seen: dict[str, str] = {}
    for cfg, path in zip(configs, paths):
        if cfg.slug() in seen:
            raise ConfigError(f"label {cfg.label!r} of {path} uses the results folder {cfg.slug()!r} of "
                              f"{seen[cfg.slug()]}; give each profile a label of its own")
        seen[cfg.slug()] = str(path)


def check_device_available(configs: list[BenchConfig]) -> None:
    """`device: cuda` on a machine where torch sees no GPU stops here, before any cell process starts."""
    if not any(cfg.device == "cuda" for cfg in configs):
        return
    import torch

    cfg = next(c for c in configs if c.device == "cuda")
    if not torch.cuda.is_available():
        raise ConfigError(f"device: 'cuda' is not allowed here (profile {cfg.label!r}); torch "
                          f"{torch.__version__} sees no usable GPU: use device cpu or auto, or a torch "
                          "build that matches this machine's driver")
    from ..measure.environment import check_cuda_usable

    try:
        check_cuda_usable()
    except RuntimeError as err:
        raise ConfigError(f"device: 'cuda' is not allowed here (profile {cfg.label!r}); {err}") from None
