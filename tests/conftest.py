"""Shared helpers: parameters files for tiny CPU sweeps, and the CLI run as a user runs it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent


def tiny_params(tmp_path: Path, name: str = "params.yaml", **values) -> Path:
    """A parameters file for a fast CPU sweep of tiny models; keyword arguments override keys."""
    params = {"label": "test", "models": ["vit"], "size": "tiny", "batch_sizes": [1], "modes": ["eager"],
              "device": "cpu", "weights": "random", "warmup": 1, "iterations": 6, "timeout_s": 300}
    params.update(values)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(params))
    return path


def run_cli(*args, env: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    merged = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "bench_utils", *map(str, args)], capture_output=True,
                          text=True, env=merged, timeout=timeout, cwd=REPO)


@pytest.fixture
def params_factory(tmp_path):
    return lambda **values: tiny_params(tmp_path, **values)
