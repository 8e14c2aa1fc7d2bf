"""Where things live: the checkout (notebooks/, parameters/) and the reports folder. No torch."""

from __future__ import annotations

import os
from pathlib import Path

REPORTS_DIR_ENV = "BENCH_REPORTS_DIR"  # where results and pages go when no folder is named


def repo_root() -> Path:
    """The checkout holding notebooks/ and parameters/ (the package is installed in editable mode)."""
    return Path(__file__).resolve().parent.parent


def reports_root() -> Path:
    """$BENCH_REPORTS_DIR, else reports/ in the checkout: the CLI and the notebooks agree on it."""
    root = Path(os.environ.get(REPORTS_DIR_ENV) or repo_root() / "reports")
    if root.exists() and not root.is_dir():
        from .config.bench_config import ConfigError

        raise ConfigError(f"{REPORTS_DIR_ENV}={root}: a file, not a folder; point it at a folder (or unset it)")
    return root
