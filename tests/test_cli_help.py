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
