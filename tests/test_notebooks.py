"""The notebooks as committed: clean (no outputs), one parameters cell (test_parameter_docs.py holds
it equal to the declarations), and executed top to bottom by papermill: the benchmark notebook with the tiny smoke
profile (parameters/cpu.yaml; its own defaults are the full-size CPU report, minutes long), then the
summary notebook with its own defaults; the explore notebook (bench_utils.race) by nbclient, as the
user's kernel runs it."""

import json
import time

import pytest

from bench_utils.config.parameters_file import load_config
from bench_utils.results.aggregate import load_dataframe
from bench_utils.results.rows import read_results
from conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
PAGES = ("benchmark.ipynb", "summary.ipynb")  # the notebooks `report` renders as pages


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_clean_with_one_parameters_cell(notebook):
    cells = json.loads(notebook.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert all(not c["outputs"] and c["execution_count"] is None for c in code), "commit notebooks without outputs"
    tagged = [c for c in code if "parameters" in c["metadata"].get("tags", [])]
    assert len(tagged) == 1 and tagged[0] is code[0]
    # every parameter line is a plain literal under a comment giving its unit or allowed values
    lines = "".join(tagged[0]["source"]).splitlines()
    for before, line in zip(lines, lines[1:]):
        if line and not line.startswith("#"):
            assert " = " in line and before.startswith("# "), line
            assert line.count("=") == 1, f"papermill cannot read a parameter line with a second '=': {line}"
    # a published page shows results and narrative, not code (explore.ipynb is an example to read, not a page)
    if notebook.name in PAGES:
        assert all("hide-input" in c["metadata"].get("tags", []) for c in code), "tag every code cell hide-input"


@pytest.mark.slow
def test_notebooks_run_top_to_bottom(tmp_path, monkeypatch):
    from bench_utils.report.build import execute

    monkeypatch.setenv("BENCH_REPORTS_DIR", str(tmp_path))
    smoke = load_config(REPO / "parameters" / "cpu.yaml").to_dict()
    assert execute(REPO / "notebooks" / "benchmark.ipynb", tmp_path / "benchmark.ipynb", smoke, 1200) == ""
    assert execute(REPO / "notebooks" / "summary.ipynb", tmp_path / "summary.ipynb", {}, 600) == ""
    rows = read_results(tmp_path / "cpu" / "results.jsonl").rows  # label CPU: the folder cpu/
    assert len(rows) == 24 and all(row.status == "ok" for row in rows)  # 8 cells x 3 repeats
    # round 0 of each compiled cell compiles in an empty cache of its own, the later rounds (new
    # processes) with the cache it filled: the cell's warm compile, clearly cheaper
    compiled = load_dataframe(tmp_path / "cpu" / "results.jsonl").query("mode != 'eager'")
    assert len(compiled) == 4 and (compiled["compile_warm_s"] < compiled["compile_s"]).all()


@pytest.mark.slow
def test_a_wrong_typed_papermill_parameter_is_one_line(tmp_path):
    """papermill as a user runs it, with a parameter of the wrong type: the notebook stops at its config
    cell, before any model loads, with one line saying what to fix, in the executed notebook's error
    output and in papermill's message; not a traceback through the package's frames."""
    import subprocess
    import sys

    out = tmp_path / "out.ipynb"
    done = subprocess.run([sys.executable, "-m", "papermill", str(REPO / "notebooks" / "benchmark.ipynb"), str(out),
                           "-p", "repeats", "three", "-p", "measure", "False", "--cwd", str(tmp_path)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env={**__import__("os").environ, "BENCH_REPORTS_DIR": str(tmp_path)})
    assert done.returncode != 0
    errors = [o for c in json.loads(out.read_text())["cells"] for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert len(errors) == 1 and errors[0]["ename"] == "ConfigError"
    assert errors[0]["traceback"] == [f"ConfigError: {errors[0]['evalue']}"]
    assert errors[0]["evalue"].startswith("repeats: 'three' is not allowed")
    assert f"ConfigError: {errors[0]['evalue']}" in done.stderr
    assert "bench_utils/config" not in done.stderr  # none of the package's frames


@pytest.mark.slow
def test_the_explore_notebook_races_a_module_of_its_own_and_a_tiny_vit(tmp_path, monkeypatch):
    """explore.ipynb as a user's kernel runs it (nbclient): a module class defined in one cell and a tiny
    Hugging Face ViT built in another, each raced with a budget of a minute; each answer shows with its
    progress bar (a widget, kept in the output) and is saved as a report page."""
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the races' own folders
    notebook = nbformat.read(REPO / "notebooks" / "explore.ipynb", as_version=4)
    notebook.cells[1].source = f"budget_min = 1.0\nsave_to = {str(tmp_path / 'pages')!r}"
    started = time.perf_counter()
    NotebookClient(notebook, timeout=900, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    nbformat.write(notebook, tmp_path / "explore.ipynb")  # what it showed, for whoever debugs it
    print(f"explore.ipynb ran in {time.perf_counter() - started:.0f} s")
    races = [cell for cell in notebook.cells if cell.cell_type == "code" and "bench_utils.race(" in cell.source]
    assert len(races) == 2
    for cell in races:
        kinds = {kind for output in cell.outputs for kind in output.get("data", {})}
        answer = next(o for o in cell.outputs if o["output_type"] == "execute_result")["data"]["text/html"]
        assert "application/vnd.jupyter.widget-view+json" in kinds and "Should you compile?" in answer
    for label in ("smallconvnet", "vitforimageclassification"):
        frame = load_dataframe(tmp_path / "pages" / label / "results.jsonl")
        ok = frame[frame["status"] == "ok"].set_index("configuration")
        compiled = ok.drop(index="eager")
        assert "eager" in ok.index and len(compiled) >= 1
        assert (compiled["race_ci95_low"] <= compiled["race_speedup"]).all()
        assert (compiled["race_speedup"] <= compiled["race_ci95_high"]).all()
        assert (tmp_path / "pages" / label / "report.html").is_file()
