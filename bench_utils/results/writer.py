"""Write a results file: append-only JSON lines, each row written, flushed and fsynced the moment its
cell ends, so a killed run loses at most the cell in flight. A lock file refuses a second writer;
a path that is not a results file is refused untouched. No torch.
"""

from __future__ import annotations

import codecs
import errno
import fcntl
import json
import os
import signal
from pathlib import Path

from ..files import open_no_follow
from .rows import Row, bounded_lines
from .runs import RUN_ENV, RUN_FIELDS, MixedRunsError, other_run, run_text

# Test-only: "N" makes the writer write half of the N-th row it appends, then SIGKILL its own process
# (the fault suite's torn write). Unset in normal use.
TORN_WRITE_ENV_VAR = "BENCH_UTILS_TORN_WRITE"


def torn_write_cut(rows_appended: int, line: str) -> int | None:
    """Where to cut the line being appended (half of it) if a torn write is planned for it."""
    planned = os.environ.get(TORN_WRITE_ENV_VAR, "")
    return len(line) // 2 if planned.isdigit() and int(planned) == rows_appended + 1 else None


class ResultsLockedError(RuntimeError):
    """Another process is writing the same results file."""


class NotAResultsFileError(ValueError):
    """The path holds something other than results rows; appending to it would damage it."""


# a compressed results file's first bytes -> how to give it: the rows are read as text, line by line
COMPRESSED = {b"\x1f\x8b": "gzip: gunzip -k", b"\xfd7zXZ": "xz: unxz -k", b"BZh": "bzip2: bunzip2 -k",
              b"PK\x03\x04": "zip: unzip", b"\x28\xb5\x2f\xfd": "zstd: unzstd"}


def check_is_results_file(path: Path, option: str = "--results") -> None:
    """A new path, an empty file or one whose first line is a results row (or a torn one, cut before
    its end) is fine; anything else (a JSON document, a text file, a compressed file) is refused
    untouched, in words that name the `option` it came from."""
    another = _another(option)
    if path.exists() and not path.is_file():
        raise NotAResultsFileError(f"{path}: not a file; " + ("choose a .jsonl file for --results" if option ==
                                                              "--results" else f"choose {another}"))
    blocking = next((parent for parent in path.parents if parent.exists() and not parent.is_dir()), None)
    if blocking is not None:
        raise NotAResultsFileError(f"{path}: {blocking} is a file, not a folder; choose "
                                   + (another if option == "--out" else f"another {option} path"))
    if not path.exists():
        return
    with open(path, "rb") as fh:
        first = fh.readline(1_000_000).removeprefix(codecs.BOM_UTF8)  # an editor's byte-order mark: still a row
    packed = next((how for magic, how in COMPRESSED.items() if first.startswith(magic)), None)
    if packed is not None:
        kind, command = packed.split(": ")
        where = "put the .jsonl file in its place" if option == "--out" else f"give {option} the .jsonl file"
        raise NotAResultsFileError(f"{path}: a {kind}-compressed file, not a results file; decompress it "
                                   f"({command} {path.name}) and {where}")
    refusal = NotAResultsFileError(f"{path}: not a results file (line 1 is not a results row); choose {another}")
    if not first.strip():
        return  # empty
    if not first.lstrip().startswith(b"{"):
        raise refusal
    try:
        values = json.loads(first)
    except (ValueError, RecursionError):
        if first.lstrip().startswith(b'{"'):
            return  # a row cut off mid-write (a kill): the loader skips it, the writer ends it
        raise refusal from None  # e.g. the "{" line of a pretty-printed JSON document
    if not (isinstance(values, dict) and {"label", "model"} <= set(values)):
        raise refusal


def _another(option: str) -> str:
    """What to choose instead, by the option the file came through: `report` finds a profile's results
    file in its --out folder (it has no --results: the refusal named one)."""
    return "another --out folder or label, or move the file aside" if option == "--out" else f"another {option} file"


def file_run(path: Path) -> dict:
    """The run a results file's rows belong to, from its first rows that state it (read a line at a
    time, until every run field is known); {} for a file without rows."""
    run: dict = {}
    with open(path, "rb") as fh:
        for _, line in bounded_lines(fh):
            try:
                values = json.loads(line) if line else None
            except (ValueError, RecursionError):
                continue
            if isinstance(values, dict):
                other_run(run, values)
            if len(run) == len(RUN_FIELDS) + len(RUN_ENV):
                break
    return run


def writing_pid(path: str | Path) -> str | None:
    """The pid of a run writing the results file at `path` now (its ResultsWriter holds the lock), "?" when
    the lock names none; None when no run holds it. Reads only: a lock file that is not there, or a link,
    is no run."""
    lock = Path(path).with_name(Path(path).name + ".lock")
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "r") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return handle.read(32).strip() or "?"
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None


class ResultsWriter:
    """Append-only JSON-lines writer holding an exclusive lock for its lifetime."""

    def __init__(self, path: str | Path, shown: dict | None = None, option: str = "--results"):
        """`shown`: folders outside the results folder that a row's texts may name (absolute path -> the
        name each is shown by: BenchConfig.users_folders), written by that name; `option`: what the path
        came through, for a refusal's words (check_is_results_file)."""
        self.shown = shown or {}
        if Path(path).is_symlink():  # resolved, a link would be written through to its target
            raise OSError(errno.ELOOP, "a symbolic link; compile-bench never writes through one: give the file "
                                       "itself as --results", str(path))
        self.path = Path(path).resolve()  # one lock per file, whatever relative path or linked folder names it
        check_is_results_file(self.path, option)  # before anything is created or written next to it
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # appending, not truncating: a refused writer must not erase the holder's pid before reading it;
        # never through a link (the pid would be written into its target)
        lock = open_no_follow(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_APPEND | os.O_CREAT)
        self._lock_file = os.fdopen(lock, "a+")
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.seek(0)
            holder = self._lock_file.read().strip()
            self._lock_file.close()
            raise ResultsLockedError(
                f"{self.path} is being written by another run (pid {holder or '?'}); "
                "wait for it or use another --results file") from None
        self._lock_file.truncate(0)
        self._lock_file.write(str(os.getpid()))
        self._lock_file.flush()
        self._repair_tail()
        self._appended = 0
        self._run = file_run(self.path) if self.path.exists() else {}  # the one run the file's rows are of

    def _repair_tail(self) -> None:
        # A kill during a write can leave a last line without its newline; end it so the next
        # row starts on a line of its own (the loader then skips the broken line).
        if self.path.exists() and self.path.stat().st_size:
            with os.fdopen(open_no_follow(self.path, os.O_RDWR), "rb+") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    fh.write(b"\n")

    def append(self, row: Row) -> None:
        """Append `row`, flushed and fsynced; MixedRunsError, nothing written, when it is of another run
        (label, device, machine, torch) than the rows the file holds."""
        other = other_run(self._run, vars(row))
        if other is not None:
            raise MixedRunsError(f"{self.path}: holds rows of {run_text(self._run)}; this row is of another run "
                                 f"({run_text(other)}): one results file holds one run, measure into another "
                                 "--results file")
        line = row.finite().without_local_paths(self.path.parent, self.shown).to_json() + "\n"
        cut = torn_write_cut(self._appended, line)  # None unless a test asks for a torn write
        data = (line if cut is None else line[:cut]).encode("utf-8")
        fd = open_no_follow(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)  # a link swapped in: refused
        try:
            start = os.lseek(fd, 0, os.SEEK_END)
            try:
                written = 0
                while written < len(data):
                    written += os.write(fd, data[written:])
                os.fsync(fd)  # on disk before the next cell starts: a power cut loses no row
            except OSError as err:  # e.g. disk full mid-row: take the half row back, so the file holds rows only
                os.ftruncate(fd, start)
                raise OSError(err.errno, err.strerror, str(self.path)) from err  # the message names the file
        finally:
            os.close(fd)
        if cut is not None:
            os.kill(os.getpid(), signal.SIGKILL)  # the torn write's kill: the row stays half written
        self._appended += 1

    def close(self) -> None:
        if not self._lock_file.closed:
            fcntl.flock(self._lock_file, fcntl.LOCK_UN)
            self._lock_file.close()

    def __enter__(self) -> "ResultsWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
