"""The compiler cache a measuring process compiles with: with cold_compile, an empty one for the
cell's first process, merged afterwards into the shared cache the cell's later processes (and other
cells, on other GPUs of a cluster, at the same moment) read.

Empty means empty for both compilers: Inductor reads TORCHINDUCTOR_CACHE_DIR on every cache access
(torch/_inductor/runtime/cache_dir_utils.py, cache_dir), Triton reads TRITON_CACHE_DIR on every
access (triton/knobs.py, cache_knobs.dir), and where TRITON_CACHE_DIR is set Inductor hands it to
Triton as it is (cache_dir_utils.triton_cache_dir): a cold compile under a set TRITON_CACHE_DIR would
load every Triton kernel the user's cache holds. So it is unset during the cold compile: Triton's
cache is then <the empty folder>/triton/<device>, and Inductor's CachingAutotuner writes that into
os.environ at its first kernel (torch/_inductor/runtime/triton_heuristics.py, CachingAutotuner.__init__);
Inductor's compile workers get both variables with every job (async_compile.py, extra_env). Afterwards
both variables are as they were, and the Triton kernels join the folder a warm process reads: the
user's TRITON_CACHE_DIR if set, else <Inductor's cache>/triton/<device>.

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


CACHE_VARIABLES = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
TRITON_FOLDER = "triton"  # Triton's cache under Inductor's when TRITON_CACHE_DIR is unset (triton_cache_dir)


def merge_into(source: Path, target: Path, skip: tuple[str, ...] = ()) -> None:
    """Copy every entry of `source` (but those named in `skip`) into `target`, each appearing
    atomically (see the module docstring); existing files are replaced, existing folders merged."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(Path(source).iterdir()):
        if entry.name in skip:
            continue
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


def merge_cold(folder: Path, inductor_dir: Path, triton_dir: str | None) -> None:
    """A cold compile's cache folder into the caches a warm process reads: Inductor's entries into
    `inductor_dir`; its Triton kernels (<folder>/triton/<device>/...) into `triton_dir` when the user
    set TRITON_CACHE_DIR, else with the rest (Triton's default place under Inductor's cache)."""
    if triton_dir is None:
        merge_into(folder, inductor_dir)
        return
    merge_into(folder, inductor_dir, skip=(TRITON_FOLDER,))
    kernels = folder / TRITON_FOLDER
    for device in sorted(kernels.iterdir()) if kernels.is_dir() else []:
        merge_into(device, Path(triton_dir))


def _set_variables(values: dict) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextlib.contextmanager
def cache_variables(inductor: str, triton: str | None):
    """TORCHINDUCTOR_CACHE_DIR = `inductor` and TRITON_CACHE_DIR = `triton` (None: unset) for the block;
    afterwards both as they were (which also drops a TRITON_CACHE_DIR Inductor set inside)."""
    before = {name: os.environ.get(name) for name in CACHE_VARIABLES}
    _set_variables(dict(zip(CACHE_VARIABLES, (inductor, triton))))
    try:
        yield
    finally:
        _set_variables(before)


@contextlib.contextmanager
def compiler_cache(empty: bool, under: str | None = None):
    """With `empty`, point Inductor and Triton at a new empty folder (in `under`, a folder the runner
    removes however the process ends, else the temporary folder; see the module docstring); afterwards
    both variables are restored and the folder's entries join the user's caches entry by
    entry, atomically, as if the compile had run there, so the cell's later processes compile warm.
    Without `empty`, keep whatever caches the user set."""
    if not empty:
        yield
        return
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    before = {name: os.environ.get(name) for name in CACHE_VARIABLES}
    with tempfile.TemporaryDirectory(prefix="inductor-cold-", dir=under) as folder:
        try:
            with cache_variables(folder, None):  # Inductor reads its variable on every cache access
                yield
        finally:
            merge_cold(Path(folder), Path(before["TORCHINDUCTOR_CACHE_DIR"] or default_cache_dir()),
                       before["TRITON_CACHE_DIR"])
