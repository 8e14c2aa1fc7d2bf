"""How compile-bench writes a file it publishes or keeps (pages, notebooks, cells.csv, method.md,
profile.json, traces, logs, the results file's lock): never through a symbolic link, mode 0644 (a web
server running as another user can read it), whole or not at all, and only over a file compile-bench
wrote itself. No torch.

A folder compile-bench writes into holds a marker, `.compile-bench`, listing the names it wrote there
(one per line, appended, so two commands on one folder both add theirs): a file of the same name that
the marker does not list is someone else's, and is refused in one line rather than replaced
(`check_ours`). The results file is not written here: results/writer.py appends to it, with the same
care (no link followed, 0644).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
from pathlib import Path

from .paths import inside

FILE_MODE = 0o644  # owner writes, everyone reads: whatever the umask, a published page is readable
MARKER = ".compile-bench"
_MARKER_HEAD = "# files compile-bench wrote in this folder: it overwrites only these\n"
# O_NONBLOCK: opening a FIFO planted at a name would otherwise wait for its other end without end
_NO_FOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class NotOursError(OSError):
    """A file compile-bench would replace, which it did not write."""


def _marked(folder: Path) -> set[str]:
    """The names the folder's marker lists (none without a marker, or when the marker is a link)."""
    try:
        fd = _regular(os.open(folder / MARKER, os.O_RDONLY | _NO_FOLLOW), folder / MARKER)
    except OSError:
        return set()
    with os.fdopen(fd, encoding="utf-8", errors="replace") as fh:
        return {line.rstrip("\n") for line in fh.readlines(1_000_000) if not line.startswith("#")}


def check_ours(path: Path) -> None:
    """NotOursError (one line) when `path` exists, as a file or a link, and its folder's marker does
    not list it: compile-bench overwrites only what it wrote; or when it is a folder, listed or not."""
    path = Path(path)
    if path.is_dir() and not path.is_symlink():  # os.replace fails on it after the work, naming a temporary file
        raise NotOursError(errno.EISDIR, "a folder where compile-bench writes a file, so it is left alone: move it, "
                                         "or choose another folder", str(path))
    if (path.exists() or path.is_symlink()) and path.name not in _marked(path.parent):
        raise NotOursError(errno.EEXIST, f"not written by compile-bench (the folder's {MARKER} marker does not "
                                         "list it), so it is left alone: move it, or choose another folder",
                           str(path))


def written_here(path: Path) -> bool:
    """Did compile-bench write `path` (its folder's marker lists it)?"""
    return Path(path).name in _marked(Path(path).parent)


def _claim(path: Path) -> None:
    """Add `path`'s name to its folder's marker, once."""
    if path.name in _marked(path.parent):
        return
    fd = open_no_follow(path.parent / MARKER, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        if os.fstat(fd).st_size == 0:
            os.write(fd, _MARKER_HEAD.encode())
        os.write(fd, f"{path.name}\n".encode())  # one small append: two writers never interleave it
    finally:
        os.close(fd)


def write_file(path: Path, data: str | bytes, folder: Path) -> Path:
    """Write `data` to `path` inside `folder` in one step (a temporary file beside it, then os.replace:
    a reader sees the old file or the new one, never half; a link at `path` is replaced, its target
    left alone), mode 0644, after check_ours; the marker then lists it."""
    path = inside(path, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    check_ours(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(handle, FILE_MODE)  # mkstemp makes 0600
        with os.fdopen(handle, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        _claim(path)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def open_fresh(path: Path) -> int:
    """A file descriptor on a new, empty `path` for writing (a worker's log): whatever link was there
    is removed first, never followed."""
    path = Path(path)
    if path.is_symlink() or (path.exists() and not path.is_file()):  # a link or a FIFO at our log's name
        path.unlink()
    fd = _regular(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NO_FOLLOW, FILE_MODE), path)
    os.fchmod(fd, FILE_MODE)  # os.open's mode passes through the umask
    return fd


def _regular(fd: int, path: Path) -> int:
    """`fd` back in blocking mode when it is a regular file; else closed, and OSError naming `path`."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file; compile-bench writes only regular files: remove it",
                      str(path))
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def read_tail(path: Path, size: int) -> str:
    """The last `size` bytes of a regular file at `path` as text ("" when there is none): a huge log
    costs `size`, a FIFO or a link nothing."""
    try:
        fd = _regular(os.open(path, os.O_RDONLY | _NO_FOLLOW), Path(path))
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as fh:
        fh.seek(max(0, os.fstat(fd).st_size - size))
        return fh.read(size).decode("utf-8", errors="replace")


def open_no_follow(path: Path, flags: int) -> int:
    """os.open(path, flags) that refuses a link at `path` (OSError ELOOP, naming the path); a file it
    creates (O_CREAT) is 0644 whatever the umask, one that exists keeps its mode."""
    try:
        if flags & os.O_CREAT:
            try:
                fd = os.open(path, flags | os.O_EXCL | _NO_FOLLOW, FILE_MODE)
            except FileExistsError:  # there already (a file, or a link: refused below)
                flags &= ~os.O_CREAT
            else:
                os.fchmod(fd, FILE_MODE)
                return _regular(fd, Path(path))
        return _regular(os.open(path, flags | _NO_FOLLOW), Path(path))
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "a symbolic link; compile-bench never writes through one: remove it",
                          str(path)) from None
        raise
