"""Where things live (bench_utils/paths.py): folders the tools and the notebooks' kernels write to."""

import os
import subprocess
import sys


def test_a_read_only_home_gives_matplotlib_a_folder_of_ours_and_no_warning_naming_a_path(monkeypatch):
    """With a home matplotlib cannot write, it made a temporary folder and warned naming it ("Matplotlib
    created a temporary cache directory at /tmp/matplotlib-..."), and the warning was published on the
    pages and notebooks. MPLCONFIGDIR then names a folder of the checkout's (or the temporary folder's)."""
    from bench_utils import paths

    for name in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", os.devnull)  # ~/.config is no folder and cannot be made
    warned = subprocess.run([sys.executable, "-c", "import matplotlib.pyplot"], capture_output=True, text=True,
                            env=dict(os.environ))
    assert "Matplotlib created a temporary" in warned.stderr  # the case: matplotlib warns, naming the path
    paths.default_matplotlib_dir()
    assert os.environ["MPLCONFIGDIR"] == str(paths.repo_root() / ".cache" / "matplotlib")
    quiet = subprocess.run([sys.executable, "-c", "import matplotlib.pyplot"], capture_output=True, text=True,
                           env=dict(os.environ))
    assert quiet.returncode == 0 and "Matplotlib" not in quiet.stderr, quiet.stderr


def test_a_writable_home_or_a_set_folder_is_left_alone(monkeypatch, tmp_path):
    from bench_utils import paths

    monkeypatch.delenv("MPLCONFIGDIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    paths.default_matplotlib_dir()
    assert "MPLCONFIGDIR" not in os.environ  # the user's matplotlibrc stays theirs
    monkeypatch.setenv("MPLCONFIGDIR", "/somewhere/of/theirs")
    monkeypatch.setenv("HOME", os.devnull)
    paths.default_matplotlib_dir()
    assert os.environ["MPLCONFIGDIR"] == "/somewhere/of/theirs"
