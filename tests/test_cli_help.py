"""The command line's help: a description and examples for every verb a user types."""

import contextlib
import io
import re

import pytest

from bench_utils.__main__ import build_parser
from conftest import REPO


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


def _options(verb: str | None = None) -> set[str]:
    """The option strings of `python -m bench_utils [verb]`."""
    parser = build_parser()
    if verb:
        parser = next(a for a in parser._actions if a.dest == "command").choices[verb]
    return {option for action in parser._actions for option in action.option_strings}


COMMAND = re.compile(r"python -m bench_utils (models|plan|run|report|selfcheck)\b([^`\"'\n|;)]*)")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
# where a user reads a command: the help, the advice the code prints, the README and the guides (the
# measurement log keeps the commands as they were run, older spellings included)
CURRENT = ["README.md", "Makefile", "benchmarks/gpu_probe.sh", *(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")),
           *(str(p.relative_to(REPO)) for p in (REPO / "bench_utils").rglob("*.py")),
           *(str(p.relative_to(REPO)) for p in (REPO / "notebooks").glob("*.ipynb"))]


def test_every_flag_a_command_line_names_exists_on_that_command():
    missing = sorted({f"{path}: {verb} {flag}" for path in CURRENT for verb, rest in
                      COMMAND.findall((REPO / path).read_text()) for flag in FLAG.findall(rest)
                      if flag not in _options(verb)})
    assert missing == []


MAKE_REPORT = re.compile(r'make report PARAMS="([^"]*)"')


def test_every_flag_the_advice_names_exists_on_the_command_it_names():
    """The one next step (report/next_step.py) is `make report PARAMS="..."`, which runs `python -m
    bench_utils report` with those arguments: every flag it can carry must be report's."""
    import pandas as pd

    from bench_utils.report.next_step import next_step
    from bench_utils.report.verdict import Rules
    from bench_utils.results import decision

    answers = pd.DataFrame({"verdict": [decision.CANT_TELL], "settle_rounds": [3.0], "settle_s": [90.0],
                            "sweep_s": [500.0], "model": ["vit"], "rounds": [3]})
    step = next_step(answers, Rules(params="parameters/cpu.yaml", out="elsewhere"), rounds_left=2, failed=1)
    [arguments] = MAKE_REPORT.findall(step)
    assert arguments.startswith("parameters/cpu.yaml --out elsewhere")
    assert set(FLAG.findall(arguments)) == {"--out", "--budget-min", "--retry-failed"} <= _options("report")
    # every flag the code hands to measuring_command(...): report's
    suffixes = {flag for path in (REPO / "bench_utils").rglob("*.py")
                for flag in re.findall(r"(?:measuring_command\(|flags\.append\()f?['\"](--[a-z-]+)", path.read_text())}
    assert suffixes >= {"--retry-failed", "--report-only"} and suffixes <= _options("report")


def test_the_version_is_printed_and_is_the_packages():
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        build_parser().parse_args(["--version"])
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    assert out.getvalue().strip() == f"compile-bench {version}"


VALUE_NAMES = {"FILE", "DIR", "N", "MINUTES", "SECONDS", "ADDRESS", "PARAMS.yaml", "BEFORE.jsonl", "AFTER.jsonl"}


@pytest.mark.parametrize("verb", ["models", "plan", "run", "report", "selfcheck"])
def test_every_option_has_help_and_one_of_the_value_names(verb):
    parser = next(a for a in build_parser()._actions if a.dest == "command").choices[verb]
    for action in parser._actions:
        assert action.help, action.dest
        if action.nargs == 0 or action.choices:
            continue
        names = action.metavar if isinstance(action.metavar, tuple) else (action.metavar,)
        assert set(names) <= VALUE_NAMES, (verb, action.dest, names)


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
