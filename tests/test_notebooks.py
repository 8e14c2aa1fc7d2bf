"""The notebooks as committed: clean (no outputs), one parameters cell, and executed top to bottom
under nbval (--nbval-lax) with their own defaults, a real CPU sweep of tiny models."""

import json
import os
import subprocess
import sys

import pytest

from bench_utils.results.frame import load_dataframe
from bench_utils.results.rows import read_results
from conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_clean_with_one_parameters_cell(notebook):
    cells = json.loads(notebook.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert all(not c["outputs"] and c["execution_count"] is None for c in code), "commit notebooks without outputs"
    tagged = [c for c in code if "parameters" in c["metadata"].get("tags", [])]
    assert len(tagged) == 1 and tagged[0] is code[0]
    # every parameter line is a plain literal with a comment giving its unit or allowed values
    for line in "".join(tagged[0]["source"]).splitlines():
        assert " = " in line and "  # " in line, line
        assert line.count("=") == 1, f"papermill cannot read a parameter line with a second '=': {line}"
    # a published page shows results and narrative, not code
    assert all("hide-input" in c["metadata"].get("tags", []) for c in code), "tag every code cell hide-input"


@pytest.mark.slow
def test_notebooks_run_under_nbval_with_their_defaults(tmp_path):
    env = {**os.environ, "BENCH_REPORTS_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "-p", "no:cacheprovider", "-q",
                           *map(str, NOTEBOOKS)], cwd=REPO, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
    rows = read_results(tmp_path / "cpu" / "results.jsonl").rows  # the benchmark notebook's default: cpu.yaml
    assert len(rows) == 24 and all(row.status == "ok" for row in rows)  # 8 cells x 3 repeats
    # cold_compile is on: round 0 of each compiled cell compiles from an empty cache, the later rounds
    # (new processes) with the cache it filled: the cell's warm compile, clearly cheaper
    assert all(row.compile_warm_s is None for row in rows)
    compiled = load_dataframe(tmp_path / "cpu" / "results.jsonl").query("mode != 'eager'")
    assert len(compiled) == 4 and (compiled["compile_warm_s"] < compiled["compile_s"]).all()
