"""One next step per run (report/next_step.py): one command, composed of what the run needs, and it works
as printed: run on recorded results, the sweep adds the rounds it promised."""

import math
import re
import shlex
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from bench_utils.report.next_step import next_step
from bench_utils.report.verdict import Rules
from bench_utils.results import decision
from conftest import REPO, tiny_params


def answers(*undecided: tuple[str, float, float]) -> pd.DataFrame:
    """A verdicts table of "Can't tell" answers: (model, rounds that settle it, their seconds)."""
    return pd.DataFrame({"verdict": [decision.CANT_TELL] * len(undecided), "model": [u[0] for u in undecided],
                         "settle_rounds": [u[1] for u in undecided], "settle_s": [u[2] for u in undecided],
                         "sweep_s": [300.0] * len(undecided), "rounds": [4] * len(undecided)})


def test_one_command_does_whatever_the_run_needs():
    rules = Rules(params="parameters/cpu-report.yaml")
    assert next_step(answers(), rules) == ""  # every answer decided, nothing failed: no step
    assert next_step(answers(("vit", math.inf, 0.0)), rules) == ""  # rounds cannot settle it: its row says why
    assert next_step(answers(("vit", 4.0, 120.0), ("resnet", 2.0, 60.0)), rules) == (
        "Settle ViT-B/16 and ResNet-50 (about 4 more rounds, about 3 min): "
        'make report PARAMS="parameters/cpu-report.yaml --budget-min 9"')  # (300 s + 1.2 x 180 s) / 60 s, up to 0.5
    assert next_step(answers(("vit", 1.0, 30.0)), rules, rounds_left=3, failed=2) == (
        "Finish the run (3 rounds of its first pass still to measure); settle ViT-B/16 (about 1 more round, about "
        "1 min); measure the 2 failed cells again (after a timeout, raise timeout_s first): "
        'make report PARAMS="parameters/cpu-report.yaml --budget-min 6 --retry-failed"')
    # a profile that adds no rounds beyond repeats: a larger budget buys none
    assert next_step(answers(("vit", 3.0, 90.0)), Rules(target_halfwidth=0.0, params="p.yaml")) == (
        'Settle ViT-B/16 (about 3 more rounds, about 2 min): raise repeats by 3 in p.yaml, then make report '
        'PARAMS="p.yaml"')
    # more rounds than the profile allows a cell: raise max_repeats first
    assert next_step(answers(("vit", 10.0, 300.0)), Rules(params="p.yaml", max_repeats=12)).endswith(
        'raise max_repeats to 14 in p.yaml, then make report PARAMS="p.yaml --budget-min 11"')
    # a folder with a space stays one argument for the shell make runs
    spaced = next_step(answers(), Rules(params="my params.yaml", out="~/my reports"), failed=1)
    assert spaced.endswith('''make report PARAMS="'my params.yaml' --out '~/my reports' --retry-failed"''')


MAKE_REPORT = re.compile(r'Next step: .*: make report PARAMS="([^"]*)"$', re.MULTILINE)


@pytest.mark.slow
def test_the_printed_command_run_on_recorded_results_adds_the_rounds_it_promised(tmp_path, request):
    """A tiny run recorded, its margin set inside the interval it measured (a "Can't tell" its spread can
    settle); the report's console prints one next step; `make report PARAMS="..."` runs `python -m
    bench_utils report` with those arguments (the Makefile), and that sweep adds rounds to the model."""
    from bench_utils.results.aggregate import load_dataframe
    from bench_utils.results.rows import read_results

    env = {"BENCH_REPORTS_DIR": str(tmp_path / "reports")}  # the default reports folder: no --out needed
    # a profile in the checkout, as a user's beside parameters/ (the printed command names it from there)
    folder = REPO / ".cache" / f"test-next-step-{tmp_path.name}"
    folder.mkdir(parents=True, exist_ok=True)
    request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
    params = tiny_params(folder, models=["resnet"], configurations=["eager", "default"], repeats=3,
                         target_halfwidth=0.001, budget_min=0.01, max_repeats=100)
    first = run(["report", str(params)], env)
    assert first.returncode == 0, first.stderr[-3000:]
    results = tmp_path / "reports" / "test" / "results.jsonl"
    record = load_dataframe(results).set_index("configuration").loc["default"]
    # the margin (1x to 100x, as worthwhile allows) inside the interval, off its point: the answer straddles it
    point, high = max(record["race_speedup"], 1.0), min(record["race_ci95_high"], 100.0)
    assert point < high, record[["race_speedup", "race_ci95_low", "race_ci95_high"]]
    margin = (point + high) / 2
    values = yaml.safe_load(params.read_text()) | {"worthwhile": round(float(margin), 4)}
    params.write_text(yaml.safe_dump(values))
    before = {row.repeat for row in read_results(results).rows}
    second = run(["report", str(params), "--report-only"], env)
    assert second.returncode == 0, second.stderr[-3000:]
    found = MAKE_REPORT.search(second.stdout + second.stderr)
    assert found, second.stdout[-3000:]
    promised = int(re.search(r"about (\d+) more rounds?", found.group(0)).group(1))
    assert found.group(1).startswith(".cache/test-next-step-")
    third = run(["report", *shlex.split(found.group(1))], env)  # what `make report PARAMS="..."` runs, here
    assert third.returncode == 0, third.stderr[-3000:]
    added = {row.repeat for row in read_results(results).rows} - before
    assert len(added) >= promised, (promised, sorted(added))


def run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "bench_utils", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=1200, cwd=REPO)
