"""How much memory there is room for, and whether the kernel's out-of-memory killer ended a process.
No torch.

A process that allocates past the machine's memory, or past its cgroup's limit (a container's cap),
gets no error it could catch: the kernel's OOM killer ends it with SIGKILL. The runner would then
report a crash with an empty log. `oom_kills` lets it tell an out-of-memory ending instead, and
`available_bytes` lets a cell refuse a model whose declared size cannot fit, before building it.
"""

from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")
CGROUP = Path("/sys/fs/cgroup")


def _cgroup_folder() -> Path | None:
    """This process's cgroup (v2) folder, when the unified hierarchy is mounted."""
    try:
        for line in (PROC / "self" / "cgroup").read_text().splitlines():
            if line.startswith("0::"):
                folder = CGROUP / line[3:].lstrip("/")
                return folder if (folder / "memory.max").exists() else None
    except OSError:
        pass
    return None


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _counter(path: Path, name: str) -> int | None:
    """`name N` from a file of such lines (memory.events, vmstat)."""
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name and value.strip().isdigit():
                return int(value)
    except OSError:
        pass
    return None


def available_bytes() -> int | None:
    """Bytes a new allocation may take: the machine's MemAvailable, or less when this process's cgroup
    caps it (memory.max less memory.current); None when neither can be read."""
    try:  # "MemAvailable:   123456 kB"
        line = next(x for x in (PROC / "meminfo").read_text().splitlines() if x.startswith("MemAvailable:"))
        meminfo = int(line.split()[1]) * 1024
    except (OSError, StopIteration, ValueError, IndexError):
        meminfo = None
    folder = _cgroup_folder()
    limit = _read_int(folder / "memory.max") if folder else None  # "max": no limit
    used = _read_int(folder / "memory.current") if folder else None
    capped = limit - used if limit is not None and used is not None else None
    known = [value for value in (meminfo, capped) if value is not None]
    return max(0, min(known)) if known else None


def oom_kills() -> int | None:
    """How many processes the OOM killer has ended so far: in this process's cgroup (a container's
    cap), else on the whole machine (/proc/vmstat); None when neither is readable."""
    folder = _cgroup_folder()
    counted = _counter(folder / "memory.events", "oom_kill") if folder else None
    return counted if counted is not None else _counter(PROC / "vmstat", "oom_kill")
