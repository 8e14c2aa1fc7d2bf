"""How much memory there is room for, and whether the kernel's out-of-memory killer ended a process.
No torch.

A process that allocates past the machine's memory, or past its cgroup's limit (a container's cap),
gets no error it could catch: the kernel's OOM killer ends it with SIGKILL. The runner would then
report a crash with an empty log. `oom_kills` lets it tell an out-of-memory ending instead, and
`available_bytes` lets a cell refuse a model whose declared size cannot fit, before building it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
CGROUP = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class CgroupMemory:
    """This process's memory cgroup: its cap, its use and where the OOM killer's count is, as files
    (v2: the unified hierarchy; v1: the memory controller's own hierarchy, as older container hosts
    mount it)."""

    limit: Path  # bytes, or "max" (v2) / a near-2**63 number (v1) for no cap
    usage: Path
    events: Path  # "oom_kill N" among its lines


def _cgroup() -> CgroupMemory | None:
    """This process's memory cgroup (v2 when mounted, else v1's memory controller), or None."""
    try:
        lines = (PROC / "self" / "cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:  # v2: "0::/path"
        if line.startswith("0::"):
            folder = CGROUP / line[3:].lstrip("/")
            if (folder / "memory.max").exists():
                return CgroupMemory(folder / "memory.max", folder / "memory.current", folder / "memory.events")
    for line in lines:  # v1: "N:memory:/path" (or "N:cpu,memory:/path")
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if "memory" in controllers.split(","):
            folder = CGROUP / "memory" / path.lstrip("/")
            if (folder / "memory.limit_in_bytes").exists():
                return CgroupMemory(folder / "memory.limit_in_bytes", folder / "memory.usage_in_bytes",
                                    folder / "memory.oom_control")
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
    caps it (its cap less its use, v2 or v1); None when neither can be read."""
    try:  # "MemAvailable:   123456 kB"
        line = next(x for x in (PROC / "meminfo").read_text().splitlines() if x.startswith("MemAvailable:"))
        meminfo = int(line.split()[1]) * 1024
    except (OSError, StopIteration, ValueError, IndexError):
        meminfo = None
    cgroup = _cgroup()
    limit = _read_int(cgroup.limit) if cgroup else None  # "max": no limit
    used = _read_int(cgroup.usage) if cgroup else None
    capped = limit - used if limit is not None and used is not None else None
    known = [value for value in (meminfo, capped) if value is not None]
    return max(0, min(known)) if known else None


def oom_kills() -> int | None:
    """How many processes the OOM killer has ended so far: in this process's cgroup (a container's
    cap), else on the whole machine (/proc/vmstat); None when neither is readable."""
    cgroup = _cgroup()
    counted = _counter(cgroup.events, "oom_kill") if cgroup else None
    return counted if counted is not None else _counter(PROC / "vmstat", "oom_kill")
