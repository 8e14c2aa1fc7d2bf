"""The compiler cache a measuring process compiles with: with cold_compile, an empty one for the
cell's first process, merged afterwards into the shared cache the cell's later processes (and other
cells, on other GPUs of a cluster, at the same moment) read.

Why the merge must be atomic: another process may read the shared cache while this one writes to it.
Inductor and Triton look entries up by path, so every entry appears whole or not at all: a new file or
folder is copied beside its final name and renamed into place (os.replace: atomic on one filesystem);
a folder both sides have is merged entry by entry. Entries are named by content hashes, so two
processes that write the same name write the same content.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path


def merge_into(source: Path, target: Path) -> None:
    """Copy every entry of `source` into `target`, each appearing atomically (see the module docstring);
    existing files are replaced, existing folders merged."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(Path(source).iterdir()):
        final = target / entry.name
        if entry.is_dir() and not entry.is_symlink() and final.is_dir():
            merge_into(entry, final)
            continue
        staging = target / f".{entry.name}.{os.getpid()}.tmp"
        if entry.is_symlink():
            os.symlink(os.readlink(entry), staging)
        elif entry.is_dir():
            shutil.copytree(entry, staging, symlinks=True)
        else:
            shutil.copy2(entry, staging)
        try:
            os.replace(staging, final)
        except OSError:  # a folder of that name appeared meanwhile (another process): merge into it
            if not (entry.is_dir() and final.is_dir()):
                raise
            merge_into(staging, final)
            shutil.rmtree(staging, ignore_errors=True)


@contextlib.contextmanager
def compiler_cache(empty: bool, under: str | None = None):
    """With `empty`, point Inductor (and the Triton cache under it) at a new empty folder (in `under`, a
    folder the runner removes however the process ends, else the temporary folder); afterwards its
    kernels join the user's cache (TORCHINDUCTOR_CACHE_DIR, else Inductor's default folder) entry by
    entry, atomically, as if the compile had run there, so the cell's later processes compile warm.
    Without `empty`, keep whatever cache the user set."""
    if not empty:
        yield
        return
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    before = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="inductor-cold-", dir=under) as folder:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = folder  # read by Inductor on every cache access
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
            else:
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = before
            merge_into(Path(folder), Path(before or default_cache_dir()))
