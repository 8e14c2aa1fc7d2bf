"""The command line's help: a description and examples for every verb a user types."""

import contextlib
import io

import pytest

from bench_utils.__main__ import build_parser


@pytest.mark.parametrize("verb", [None, "models", "plan", "run", "report", "selfcheck"])
def test_every_verb_has_a_description_and_examples(verb):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        build_parser().parse_args([verb, "--help"] if verb else ["--help"])
    text = out.getvalue()
    assert "examples:\n  python -m bench_utils " in text and "(see --help)" not in text
    if verb:
        assert f"python -m bench_utils {verb}" in text.split("examples:")[1]


def test_report_compare_takes_two_files():
    args = build_parser().parse_args(["report", "--compare", "a.jsonl", "b.jsonl"])
    assert args.compare == ["a.jsonl", "b.jsonl"] and args.params == []


def test_a_run_with_its_error_stream_closed_measures_and_keeps_its_rows(tmp_path):
    """`run ... 2>&-`: Python leaves sys.stderr None and the first progress-bar update killed the run,
    exit 1, nothing measured; a closed stream reads and writes /dev/null instead."""
    import os
    import subprocess
    import sys

    from conftest import REPO, tiny_params

    from bench_utils.results.rows import read_results

    results = tmp_path / "r.jsonl"
    proc = subprocess.run([sys.executable, "-m", "bench_utils", "run", str(tiny_params(tmp_path, repeats=2)),
                           "--results", str(results)], preexec_fn=lambda: os.close(2), capture_output=False,
                          stdout=subprocess.PIPE, text=True, cwd=REPO, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert [row.status for row in read_results(results).rows] == ["ok", "ok"]
    assert proc.stdout.strip().endswith(f"-> {results}")


def _limited_report(tmp_path, soft: int, hard: int):
    import resource
    import subprocess
    import sys

    from conftest import REPO, tiny_params

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return subprocess.run([sys.executable, "-m", "bench_utils", "report", str(tiny_params(tmp_path)), "--out",
                           str(tmp_path / "out"), "--report-only"], preexec_fn=limit, capture_output=True,
                          text=True, cwd=REPO, timeout=600)


def test_an_open_files_limit_too_low_for_a_kernel_is_one_line_and_a_low_soft_one_is_raised(tmp_path):
    """Under `ulimit -n 64` both notebooks failed "Kernel died" with no cause. A hard limit that low is
    refused before anything runs, naming it; a low soft limit is raised within the hard one."""
    proc = _limited_report(tmp_path, 64, 64)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr == ("error: open files: this shell allows 64 (ulimit -n), compile-bench needs 256 (a notebook's "
                           "kernel dies without a word below about 100): run `ulimit -n 256` first, or ask for a "
                           "higher hard limit\n")
    assert not (tmp_path / "out").exists()
    raised = _limited_report(tmp_path, 64, 1024)  # no results there: refused for that, after the limit was raised
    assert raised.returncode == 2 and "no results file at" in raised.stderr and "open files" not in raised.stderr


def test_a_command_run_in_a_deleted_folder_says_so_in_one_line(tmp_path):
    """From a working folder deleted under the shell every command failed "error: No such file or
    directory", naming nothing (absolute paths too: the workers start there)."""
    import os
    import subprocess
    import sys

    from conftest import REPO, one_error_line, tiny_params

    gone = tmp_path / "gone"
    gone.mkdir()
    params = tiny_params(tmp_path)

    def in_a_deleted_folder():
        os.chdir(gone)
        os.rmdir(gone)

    proc = subprocess.run([sys.executable, "-m", "bench_utils", "run", str(params), "--results",
                           str(tmp_path / "r.jsonl")], preexec_fn=in_a_deleted_folder, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), "PWD": str(gone)}, timeout=300)
    assert one_error_line(proc) == (f"error: {gone}: the folder this command runs in no longer exists (deleted or "
                                    "moved); cd to one that exists and run it again")
    assert not (tmp_path / "r.jsonl").exists()
