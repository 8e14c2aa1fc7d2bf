"""The environment record every result carries: hardware, driver, library versions."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import socket
import sys


def cpu_name() -> str:
    """The CPU model name from /proc/cpuinfo (Linux), else platform's best guess."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def resolve_device(requested: str) -> str:
    """'auto' -> 'cuda' when a GPU is usable, else 'cpu'; 'cuda' without a GPU is an error."""
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device: 'cuda' was requested but torch.cuda.is_available() is False")
    return requested


def collect(device: str) -> dict:
    """Environment of this process for a resolved device ('cpu' or 'cuda')."""
    import torch
    import transformers

    record = {
        "device": device,
        "device_name": cpu_name(),
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "hostname": socket.gethostname(),
        "cuda_build": torch.version.cuda or "",  # CUDA version torch was built with
        "cudnn": "",
        "driver": "",
        "gpu_memory_gb": None,
    }
    try:  # the version from the package metadata: importing timm costs seconds in every cell process
        record["timm"] = importlib.metadata.version("timm")
    except importlib.metadata.PackageNotFoundError:
        record["timm"] = ""
    if device == "cuda":
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        record["device_name"] = props.name
        record["gpu_memory_gb"] = round(props.total_memory / 2**30, 1)
        record["cudnn"] = str(torch.backends.cudnn.version() or "")
        record["driver"] = _nvidia_driver()
    record["executable"] = sys.executable
    return record


def _nvidia_driver() -> str:
    try:
        import pynvml  # optional; nvidia-ml-py

        pynvml.nvmlInit()
        version = pynvml.nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # noqa: BLE001 - the driver version is informative only
        pass
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as fh:
            first = fh.readline()
        parts = first.split()
        return next((p for p in parts if p[:1].isdigit() and "." in p), first.strip())
    except OSError:
        return ""
