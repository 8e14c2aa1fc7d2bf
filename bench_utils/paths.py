"""Where things live: the checkout (notebooks/, parameters/) and the reports folder. No torch."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

REPORTS_DIR_ENV = "BENCH_REPORTS_DIR"  # where results and pages go when no folder is named


def repo_root() -> Path:
    """The checkout holding notebooks/ and parameters/ (the package is installed in editable mode)."""
    return Path(__file__).resolve().parent.parent


def checkout_file(folder: str, name: str, root: Path | None = None) -> Path:
    """A file of the checkout that is not part of the package (notebooks/, parameters/); ConfigError in
    one line where bench_utils was installed without its checkout (`pip install .` copies the package
    alone: `report` failed on a missing notebooks/ and did not say why)."""
    root = Path(root) if root is not None else repo_root()
    path = root / folder / name
    if not path.is_file() and not (root / folder).is_dir():
        from .config.bench_config import ConfigError

        raise ConfigError(f"{root / folder}: not found: {folder}/ lives in the compile-bench checkout, and this "
                          "bench_utils was installed without it (pip install . copies the package alone); install "
                          "it from the checkout with `pip install -e .`, or run from there")
    return path


def reports_root() -> Path:
    """$BENCH_REPORTS_DIR, else reports/ in the checkout: the CLI and the notebooks agree on it."""
    root = Path(os.environ.get(REPORTS_DIR_ENV) or repo_root() / "reports")
    if root.exists() and not root.is_dir():
        from .config.bench_config import ConfigError

        raise ConfigError(f"{REPORTS_DIR_ENV}={root}: a file, not a folder; point it at a folder (or unset it)")
    return root


def shown_path(path: Path) -> str:
    """A path as a page or a command it prints names it: relative to the checkout when inside it, else
    its name alone (a page names no folder of this machine)."""
    resolved = Path(path).resolve()
    return str(resolved.relative_to(repo_root())) if resolved.is_relative_to(repo_root()) else Path(path).name


OUT_PLACEHOLDER = "DIR"  # a reports folder outside the checkout and the home folder: a page names no such path


def out_argument(results_path: Path) -> str:
    """The `--out` a command that measures more of a results file needs: "" where the file's profile
    folder lies in the default reports folder, else that reports folder relative to the checkout, or
    to the home folder ("~/..."), or, elsewhere, a placeholder the reader fills in (a published page
    names no folder of this machine)."""
    folder = Path(results_path).resolve().parent.parent
    if folder == reports_root().resolve():
        return ""
    if folder.is_relative_to(repo_root()):
        return str(folder.relative_to(repo_root()))
    home = Path.home().resolve()
    return f"~/{folder.relative_to(home)}" if folder.is_relative_to(home) and folder != home else OUT_PLACEHOLDER


def inside(path: Path, folder: Path) -> Path:
    """`path`, after checking that it lies inside `folder` (its folder's symlinks and `..` resolved; a
    symlink at `path` itself is what a writer replaces, so it is not followed): every file the tool
    writes is named from user input, and none may land elsewhere."""
    from .config.bench_config import ConfigError

    path = Path(path)
    resolved, root = path.parent.resolve() / path.name, Path(folder).resolve()
    if path.name in ("", ".", "..") or root not in resolved.parents:
        raise ConfigError(f"{path}: outside {folder}; names that become file names may not leave their folder")
    return Path(path)


INDUCTOR_CACHE_ENV = "TORCHINDUCTOR_CACHE_DIR"  # where torch.compile keeps its compiled kernels
TRITON_CACHE_ENV = "TRITON_CACHE_DIR"  # Triton's kernels (where unset, Inductor's folder holds them)


def default_inductor_cache_dir() -> None:
    """torch.compile's on-disk cache in the checkout (.cache/inductor; `make clean` removes it) unless
    $TORCHINDUCTOR_CACHE_DIR names one: the cells' own caches live under it (cell_cache_dir), and a run
    resumed later (a run's next step) finds them there, its processes compiling warm (seconds, not the
    tens of seconds of a cold compile on a 2-core CPU)."""
    os.environ.setdefault(INDUCTOR_CACHE_ENV, str(repo_root() / ".cache" / "inductor"))


CELL_CACHES = "cells"  # under the Inductor cache folder: a compiler cache per cell of a results file


def cell_cache_dir(results_path: Path, model: str, batch_size: int, configuration: str) -> Path:
    """The compiler cache a cell's processes compile with, its own: no other configuration's kernels in
    it, so the cell's first compile (the runner empties it first: `emptied`) is what compiling that
    configuration alone costs, and its later processes' compiles are warm with its own cache. Under
    $TORCHINDUCTOR_CACHE_DIR (the checkout's .cache/inductor by default), named by a digest of the
    results file and the cell: a results file resumed finds its cells' caches again."""
    import hashlib

    root = Path(os.environ.get(INDUCTOR_CACHE_ENV) or repo_root() / ".cache" / "inductor").expanduser()
    key = "\n".join((str(Path(results_path).resolve()), model, str(batch_size), configuration))
    return root / CELL_CACHES / hashlib.sha256(key.encode()).hexdigest()[:20]


def emptied(folder: Path) -> Path:
    """`folder`, made empty (a link in its place is removed, not followed)."""
    import shutil

    folder = Path(folder)
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.is_dir():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


MATPLOTLIB_ENV = "MPLCONFIGDIR"  # matplotlib's config and cache folder, read by the notebooks' kernels


def default_matplotlib_dir() -> None:
    """$MPLCONFIGDIR in the checkout (.cache/matplotlib), else under the temporary folder, where
    matplotlib's own folders ($XDG_CONFIG_HOME or ~/.config, $XDG_CACHE_HOME or ~/.cache) cannot be
    written (a read-only home): matplotlib then makes a temporary one and warns naming it, and the
    warning, with its path, was published on every page. Left alone when set or writable."""
    if os.environ.get(MATPLOTLIB_ENV):
        return
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "matplotlib"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "matplotlib"
    if _writable(config) and _writable(cache):
        return
    import tempfile

    for folder in (repo_root() / ".cache" / "matplotlib",
                   Path(tempfile.gettempdir()) / f"compile-bench-matplotlib-{os.getuid()}"):
        if _writable(folder):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.environ[MATPLOTLIB_ENV] = str(folder)
            return


def _writable(folder: Path) -> bool:
    """Can `folder` be written, or made where it is missing (its nearest existing folder writable)?"""
    existing = next((p for p in (folder, *folder.parents) if p.exists() or p.is_symlink()), None)
    return existing is not None and existing.is_dir() and os.access(existing, os.W_OK | os.X_OK)


def check_inductor_cache_dir() -> None:
    """$TORCHINDUCTOR_CACHE_DIR, when set, must be a folder this user can write (or one that can be
    made): else every cell, eager ones too, would fail with the same FileExistsError or PermissionError."""
    from .config.bench_config import ConfigError

    value = os.environ.get(INDUCTOR_CACHE_ENV)
    if not value:
        return
    path = Path(value).expanduser()
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise ConfigError(f"{INDUCTOR_CACHE_ENV}={value}: {existing} is a file, not a folder; point it at a "
                          "writable folder (or unset it)")
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"{INDUCTOR_CACHE_ENV}={value}: {existing} is not writable by this user; point it at "
                          "a writable folder (or unset it)")


def relative_text(text: str, folder: Path, also: dict | None = None) -> str:
    """`text` with absolute local paths made relative: `folder` and the reports folder above it (to
    `folder`), the checkout, Python's installation and the home folder, and each folder of `also`
    (absolute path -> the name it is shown by), so an error text, a parameter or a traceback on a page
    names no path of this machine. The longest path is replaced first; a path is replaced only whole
    (up to a separator or the end of its name), never the file-system root alone, and in each way it
    may be spelt: as is, escaped by Python (papermill writes "j\\xfcrgen") or by JSON ("j\\u00fcrgen")."""
    folder = Path(folder).resolve()
    replacements = [(folder, "", "."), (folder.parent, "../", ".."), (repo_root(), "", "."),
                    (Path(sys.prefix), "<python>/", "<python>"), (Path(sys.base_prefix), "<python>/", "<python>"),
                    (Path.home(), "~/", "~")]
    replacements += [(Path(path), f"{shown}/", shown) for path, shown in (also or {}).items()]
    for absolute, shown_inside, shown in sorted(replacements, key=lambda r: -len(str(r[0]))):
        if len(absolute.parts) < 2:
            continue
        for spelling in _spellings(str(absolute)):
            name = re.escape(spelling)
            text = re.sub(name + re.escape(os.sep), lambda _: shown_inside, text)
            text = re.sub(name + r"(?![\w.-])", lambda _: shown, text)
    return text


def _spellings(path: str) -> list[str]:
    """`path` as is, as Python's unicode_escape writes it, and as JSON's ASCII escapes write it."""
    return list(dict.fromkeys([path, path.encode("unicode_escape").decode("ascii"), json.dumps(path)[1:-1]]))
