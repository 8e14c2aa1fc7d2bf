"""The environment record every result carries: hardware, driver, library versions; and whether this
machine can run what a profile asks for (check_cuda_usable, check_device_available)."""

from __future__ import annotations

import functools
import importlib.metadata
import os
import platform
import socket
import sys
from pathlib import Path

from ..config.validation import ConfigError
from .host_memory import allocator_state


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


def cuda_arch_problem(arch_list: list[str], capability: tuple[int, int], device_name: str = "") -> str:
    """Why this torch build cannot run on a GPU of `capability`, or "" when it can.

    A build runs on a GPU when it ships kernels for its architecture (sm_XY), for an earlier minor
    of the same major (binary compatible), or PTX (compute_XY) of an equal or earlier architecture
    that the driver compiles at load time. Example: the CUDA 13 wheels start at sm_75, so a V100
    (sm_70) gets "no kernel image is available" on its first kernel.
    """
    major, minor = capability
    for arch in arch_list:
        kind, _, number = arch.partition("_")
        if not number.isdigit():
            continue
        arch_major, arch_minor = int(number[:-1]), int(number[-1])
        if kind == "sm" and arch_major == major and arch_minor <= minor:
            return ""
        if kind == "compute" and (arch_major, arch_minor) <= (major, minor):
            return ""
    name = f" ({device_name})" if device_name else ""
    return (f"this torch build has no kernels for sm_{major}{minor}{name}: it ships {', '.join(arch_list) or 'none'}; "
            f"install a torch build whose CUDA version still supports sm_{major}{minor} (e.g. the CUDA 12.6 "
            "builds for sm_50 to sm_70 GPUs such as the V100; see the README)")


def check_cuda_usable() -> None:
    """Raise RuntimeError with one line when this torch build cannot run on GPU 0."""
    import torch

    problem = cuda_arch_problem(torch.cuda.get_arch_list(), torch.cuda.get_device_capability(0),
                                torch.cuda.get_device_name(0))
    if problem:
        raise RuntimeError(problem)


def check_device_available(configs: list) -> None:
    """`device: cuda` (in any of `configs`, BenchConfigs) on a machine where torch sees no usable GPU
    stops here with one line, before any cell process starts."""
    cfg = next((c for c in configs if c.device == "cuda"), None)
    if cfg is None:
        return
    import torch

    if not torch.cuda.is_available():
        raise ConfigError(f"device: 'cuda' is not allowed here (profile {cfg.label!r}); torch "
                          f"{torch.__version__} sees no usable GPU: use device cpu or auto, or a torch "
                          "build that matches this machine's driver")
    try:
        check_cuda_usable()
    except RuntimeError as err:
        raise ConfigError(f"device: 'cuda' is not allowed here (profile {cfg.label!r}); {err}") from None


def gpu_facts() -> tuple[str, float, tuple[int, int]] | None:
    """GPU 0 as config/gpus.py reads it: name, memory (GiB), compute capability; None without a GPU
    torch can use. A MIG slice reports its own memory (the process sees only its slice)."""
    import torch

    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(0)
    return props.name, props.total_memory / 2**30, (props.major, props.minor)


def ready_here(configs: list, tag: str) -> list:
    """Before measuring here: a CUDA profile's GPU usable (check_device_available), and `configs` with
    live_groups fit to its memory (config/gpus.fit_to_gpu), each change said on stderr after `[tag]`;
    unchanged without a GPU or without a CUDA profile."""
    from ..config.gpus import fit_to_gpu

    check_device_available(configs)
    facts = gpu_facts() if any(cfg.device != "cpu" for cfg in configs) else None
    if facts is None:
        return list(configs)
    fitted = [fit_to_gpu(cfg, facts[1]) for cfg in configs]
    for _, note in fitted:
        if note:
            print(f"[{tag}] {note}", file=sys.stderr)
    return [cfg for cfg, _ in fitted]


def precision_settings() -> dict:
    """The settings that change float32 numerics and speed on CUDA: TF32 for matmuls and cuDNN
    convolutions, cuDNN autotuning, float32 matmul precision, and the environment overrides."""
    import torch

    return {"float32_matmul_precision": torch.get_float32_matmul_precision(),
            "cuda_matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
            "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
            "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
            "tf32_env": {k: os.environ[k] for k in ("NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")
                         if k in os.environ}}


def tf32_in_use() -> bool:
    """float32 CUDA work may run in TF32 (10-bit mantissa): cuDNN convolutions allow it by default."""
    settings = precision_settings()
    return (settings["cuda_matmul_allow_tf32"] or settings["cudnn_allow_tf32"]
            or settings["float32_matmul_precision"] != "highest") and settings["tf32_env"].get("NVIDIA_TF32_OVERRIDE") != "0"


def resolve_device(requested: str) -> str:
    """'auto' -> 'cuda' when a GPU is usable, else 'cpu'; 'cuda' without a GPU is an error."""
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device: 'cuda' was requested but torch.cuda.is_available() is False")
    return requested


def _allowed_cpus() -> int | None:
    """The CPUs this process may run on (taskset, a container's cpuset), not the machine's count: a run
    pinned to one core of two is a one-core run. Read at import, before a GPU worker pins its launching
    thread to one of them (launch_thread.pin: that thread's, not the process's)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux: the machine's count
        return os.cpu_count()


ALLOWED_CPUS = _allowed_cpus()
THREADS_PROBE_S = 120.0  # an interpreter importing torch to say its thread count: 3 s on a loaded 2-core CPU


# Open files a command needs: a notebook's kernel (its ZeroMQ sockets) died without a word below about 100
# ("Kernel died", ulimit -n 64), and a sweep's workers and Inductor's compile workers hold more
MIN_OPEN_FILES, WANTED_OPEN_FILES = 256, 4096


def check_open_files() -> None:
    """Raise this process's open-files limit toward WANTED_OPEN_FILES (within the hard limit: what its
    workers and kernels inherit); ConfigError in one line when even that stays below MIN_OPEN_FILES."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < WANTED_OPEN_FILES:
        raised = WANTED_OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, WANTED_OPEN_FILES)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, raised), hard))
            soft = max(soft, raised)
        except (ValueError, OSError):
            pass
    if soft != resource.RLIM_INFINITY and soft < MIN_OPEN_FILES:
        raise ConfigError(f"open files: this shell allows {soft} (ulimit -n), compile-bench needs {MIN_OPEN_FILES} "
                          f"(a notebook's kernel dies without a word below about 100): run `ulimit -n "
                          f"{MIN_OPEN_FILES}` first, or ask for a higher hard limit")


def worker_torch_threads() -> int | None:
    """torch.get_num_threads() a CPU worker started now reads (OMP_NUM_THREADS, MKL_NUM_THREADS, else
    torch's own default, which depends on its build), asked of a fresh interpreter with this environment
    as the fork server gets it; None when it does not say within THREADS_PROBE_S."""
    import subprocess

    try:
        proc = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
                              capture_output=True, text=True, timeout=THREADS_PROBE_S, stdin=subprocess.DEVNULL)
        return int(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else None
    except (subprocess.TimeoutExpired, OSError, ValueError, IndexError):
        return None


def collect(device: str) -> dict:
    """Environment of this process for a resolved device ('cpu' or 'cuda')."""
    import torch
    import transformers

    record = {
        "device": device,
        "device_name": cpu_name(),
        "cpu": cpu_name(),
        "cpu_count": ALLOWED_CPUS,
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "hostname": host_id(),  # tells hosts apart (a Ray cluster's), names none
        "cuda_build": torch.version.cuda or "",  # CUDA version torch was built with
        "cudnn": "",
        "driver": "",
        "gpu_memory_gb": None,
        "allocator": allocator_state(),  # what the C allocator does with freed memory (host_memory.py)
        "compute_capability": "",  # CUDA: "8.0"; Inductor compiles bfloat16 only from 8.0 (see compile_stats)
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),  # the CPU kernels' instruction set: AVX2, AVX512
        "compile_bench": project_version(),  # the code that measured: a report says how to reproduce it
    }
    for package in ("timm", "triton"):  # package metadata: importing them costs seconds in every cell
        try:
            record[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            record[package] = ""
    record.update(precision_settings())
    if device == "cuda":
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        record["device_name"] = props.name
        record["gpu_memory_gb"] = round(props.total_memory / 2**30, 1)
        record["compute_capability"] = f"{props.major}.{props.minor}"
        record["cudnn"] = str(torch.backends.cudnn.version() or "")
        record["driver"] = _nvidia_driver()
    return record  # no path of this machine: rows are published beside the page


HOST_FACTS = ("/etc/machine-id", "/proc/sys/kernel/random/boot_id")  # what tells two machines of one name apart


def host_id(name: str | None = None) -> str:
    """A pseudonym of this host (or `name`): "host-" and 8 hex digits of the SHA-256 of its name, its
    machine id and its boot id (two VMs both named "vm" were one pseudonym on the hostname alone; a
    reboot makes a new one). Rows of a cluster's hosts stay apart; a published file names no machine."""
    import hashlib

    if name is not None:
        return "host-" + hashlib.sha256(name.encode()).hexdigest()[:8]
    facts = [socket.gethostname()]
    for path in HOST_FACTS:
        try:
            with open(path, encoding="ascii", errors="replace") as file:
                facts.append(file.read(100).strip())
        except OSError:
            facts.append("")
    return "host-" + hashlib.sha256("\n".join(facts).encode()).hexdigest()[:8]


@functools.cache
def project_version() -> str:
    """This checkout's commit ("1a2b3c4d", "+changes" when its files differ from it), else the
    package's version: what a report's reproduce line names."""
    import subprocess

    root = Path(__file__).resolve().parent.parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=10", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        changed = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                 capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        commit, changed = "", ""
    if commit:
        return commit + ("+changes" if changed else "")
    try:
        return importlib.metadata.version("compile-bench")
    except importlib.metadata.PackageNotFoundError:
        return ""


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


def sm_clock_mhz() -> float | None:
    """The current GPU's SM clock, MHz, as NVML reads it over its last sample period (torch.cuda.clock_rate:
    CUDA_VISIBLE_DEVICES mapped to NVML's index), or None without pynvml or a readable clock."""
    import torch

    try:
        return float(torch.cuda.clock_rate())
    except Exception:  # noqa: BLE001 - pynvml missing (ModuleNotFoundError) or its own NVMLError kinds
        return None
