"""The report command: parameters profiles, notebook parameters, and a report built by the CLI from
fixture rows (--report-only: papermill and nbconvert run for real, nothing is measured)."""

import ast
import gzip
import json
import os
import re
from pathlib import Path

import papermill
import pytest

from bench_utils.config.bench_config import ConfigError
from bench_utils.config.parameters_file import load_config
from bench_utils.config.registry import MODEL_NAMES
from bench_utils.config.parameters_file import PARAMETER_NAMES
from bench_utils.report import build as report
from conftest import REPO, make_row, one_error_line, run_cli, tiny_params

PARAMETERS = REPO / "parameters"
NOTEBOOK = REPO / "notebooks" / "benchmark.ipynb"
GUIDE_GPUS = ("a100", "v100", "t4", "h100")


def test_every_parameters_file_is_valid():
    names = sorted(p.name for p in PARAMETERS.glob("*.yaml"))
    assert names == sorted(["cpu.yaml", "cpu-report.yaml", "cpu-deploy.yaml", "cpu-variants.yaml", "cpu-full.yaml", "cpu-serving.yaml",
                            "cpu-startup.yaml", "cpu-tune.yaml",
                            "gpu.yaml", "gpu-tune.yaml", "reduce-overhead.yaml",
                            "nightly.yaml"] + [f"{gpu}.yaml" for gpu in GUIDE_GPUS])
    labels = [load_config(PARAMETERS / name).label for name in names]
    assert len(set(labels)) == len(labels)  # one results folder per profile


@pytest.mark.parametrize("name", [f"{gpu}.yaml" for gpu in GUIDE_GPUS] + ["gpu.yaml"])
def test_gpu_profiles_run_the_guides_matrix(name):
    cfg = load_config(PARAMETERS / name)
    assert cfg.models == MODEL_NAMES and cfg.batch_sizes == (1, 4, 16)
    # 8 calls and 1 s per worker and round, over 3 rounds: a fast call is timed hundreds of times a round
    assert (cfg.iterations, cfg.min_time_s, cfg.repeats) == (8, 1.0, 3)
    assert cfg.size == "full" and cfg.device == "cuda" and cfg.configurations[:2] == ("eager", "default")


def test_guide_subset_profiles():
    reduce = load_config(PARAMETERS / "reduce-overhead.yaml")
    assert reduce.models == ("convnext", "resnet", "conditional-detr", "deeplabv3-mobilenet")
    assert reduce.batch_sizes == (1, 4) and "reduce-overhead" in reduce.configurations
    nightly = load_config(PARAMETERS / "nightly.yaml")
    assert nightly.models == ("beit", "detr") and nightly.batch_sizes == (1, 4, 16)


def _notebook_defaults(notebook: Path) -> dict:
    return {name: ast.literal_eval(p["default"]) for name, p in papermill.inspect_notebook(str(notebook)).items()}


def test_notebook_defaults_are_the_default_cpu_report_on_any_device():
    from bench_utils.config.bench_config import BenchConfig

    defaults = _notebook_defaults(NOTEBOOK)
    assert set(defaults) == set(PARAMETER_NAMES) | {"results_path", "measure", "params_file"}
    config_defaults = BenchConfig().to_dict()
    assert {k: defaults[k] for k in config_defaults} == config_defaults  # the notebook's defaults are BenchConfig's
    # "Run all" measures what `make report` measures without a GPU, on the GPU when there is one, into a
    # folder of its own ("This machine"): the report's rows (device cpu) are another setting
    report_profile = load_config(PARAMETERS / "cpu-report.yaml").to_dict()
    assert report_profile | {"device": "auto", "label": "This machine"} == config_defaults


def test_a_key_the_notebook_lacks_is_refused(tmp_path):
    nb = json.loads(NOTEBOOK.read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    cell["source"] = [line for line in cell["source"] if not line.startswith("tags =")]
    stripped = tmp_path / "benchmark.ipynb"
    stripped.write_text(json.dumps(nb))
    cfg = load_config(tiny_params(tmp_path))
    with pytest.raises(ConfigError, match="key 'tags' is not a parameter of benchmark.ipynb"):
        report.check_parameters(cfg, Path("p.yaml"), stripped)


# 6 rounds of two workers timing 1000 s each: 3.3 hours
LONG_PROFILE = ("label: long\nmodels: [vit, resnet]\nbatch_sizes: [1]\nconfigurations: [eager, default]\nsize: tiny\n"
                "device: cpu\nweights: random\nrepeats: 3\nmin_time_s: 1000\n")


def test_the_report_command_stops_on_a_long_plan_before_anything_runs(tmp_path):
    params = tmp_path / "long.yaml"
    params.write_text(LONG_PROFILE)
    proc = run_cli("report", params, "--out", tmp_path / "out", timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.splitlines()[-1].startswith("error: ") and proc.stderr.splitlines()[-1].endswith(
        "run again with --allow-long, or trim the profile")
    assert "estimated" in proc.stdout and "over an hour; to trim" in proc.stdout
    assert not (tmp_path / "out").exists()  # nothing measured, no page written


def test_report_only_without_results_is_a_one_line_error(tmp_path):
    proc = run_cli("report", tiny_params(tmp_path), "--out", tmp_path / "empty", "--report-only")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "no results file at" in proc.stderr and "Traceback" not in proc.stderr
    # results copied back from a GPU sit in their profile's folder: the line names it and what to do
    (tmp_path / "empty" / "h200").mkdir(parents=True)
    (tmp_path / "empty" / "h200" / "results.jsonl").write_text("")
    proc = run_cli("report", tiny_params(tmp_path), "--out", tmp_path / "empty", "--report-only")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "results found in h200: name the parameters file they were measured with" in proc.stderr


def test_report_only_while_a_run_writes_the_results_is_a_one_line_error(tmp_path):
    """During a live `run`, a page built from its file read complete ("2 ok, 0 failed, 0 missing" after 1
    of 4 rounds): the results file's lock, held by the run, refuses it."""
    from bench_utils.results.writer import ResultsWriter, writing_pid

    params = tiny_params(tmp_path)
    results = report.profile_results(load_config(params), tmp_path / "out")
    with ResultsWriter(results) as writer:  # a run writing it
        writer.append(make_row("vit", 1, "eager", 2.0))
        assert writing_pid(results) == str(os.getpid())
        proc = run_cli("report", params, "--out", tmp_path / "out", "--report-only")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"is being written by a run (pid {os.getpid()})" in proc.stderr
    assert writing_pid(results) is None  # the run ended: the page can be built


def test_a_folder_of_another_results_format_leaves_the_summary_of_the_others(fixture_report, tmp_path):
    """One profile folder written by an older compile-bench broke every later summary ("summary: FAILED
    (notebook step 4: OtherFormatError ...)", exit 1) until it was moved: the summary now compares the
    others, and the index lists that folder with why."""
    import shutil

    params, built, _ = fixture_report
    out = tmp_path / "out"
    shutil.copytree(built, out)
    old = json.loads((out / "fixture-cpu" / "results.jsonl").read_text().splitlines()[0]) | {"format": 2}
    (out / "old").mkdir()
    (out / "old" / "results.jsonl").write_text(json.dumps(old) + "\n")
    proc = run_cli("report", params, "--out", out, "--report-only", "--notebook-timeout", 300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "[report] summary: ok" in proc.stdout
    index = (out / "index.html").read_text()
    assert "written by an older compile-bench" in index and "Fixture CPU" in (out / "summary.html").read_text()


def test_a_profile_folders_file_that_is_no_results_is_refused_before_measuring_naming_out(tmp_path):
    """`report` has no --results: a profile folder's results.jsonl that is not a results file was refused
    as "choose another --results file", after the plan. Now before it, naming what report takes."""
    params = tiny_params(tmp_path)
    results = report.profile_results(load_config(params), tmp_path / "out")
    results.parent.mkdir(parents=True)
    results.write_text("my notes\n")
    for only in ((), ("--report-only",)):
        line = one_error_line(run_cli("report", params, "--out", tmp_path / "out", *only))
        assert line == (f"error: {results}: not a results file (line 1 is not a results row); choose another --out "
                        "folder or label, or move the file aside")
    assert results.read_text() == "my notes\n"


def test_a_package_installed_without_its_checkout_says_where_the_notebooks_are(tmp_path):
    """After `pip install .` (not -e) the package sits in site-packages without notebooks/: `report`
    failed on a missing notebook and did not say why. One line, before anything is measured."""
    import shutil
    import subprocess
    import sys

    site = tmp_path / "site"
    shutil.copytree(REPO / "bench_utils", site / "bench_utils", ignore=shutil.ignore_patterns("__pycache__"))
    params = tiny_params(tmp_path)
    for args in (("report", str(params), "--out", str(tmp_path / "out")), ("report", "--out", str(tmp_path / "out"))):
        proc = subprocess.run([sys.executable, "-m", "bench_utils", *args], capture_output=True, text=True,
                              cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(site)}, timeout=300)
        line = one_error_line(proc)
        assert line.startswith(f"error: {site}/") and ("/ lives in the compile-bench checkout, and this bench_utils "
                                                         "was installed without it") in line, line
        assert "`pip install -e .`" in line
    assert not (tmp_path / "out").exists()


def test_compare_of_a_results_file_a_run_is_writing_is_a_one_line_error(tmp_path):
    """`--compare` of a file a run is still writing compared its partial rows, as `--report-only` once
    did; the run's lock refuses it, nothing written."""
    from bench_utils.results.writer import ResultsWriter

    before, after = tmp_path / "a" / "results.jsonl", tmp_path / "b" / "results.jsonl"
    with ResultsWriter(before) as writer:
        writer.append(make_row("vit", 1, "eager", 2.0))
    with ResultsWriter(after) as writer:  # a run writing it
        writer.append(make_row("vit", 1, "eager", 2.0))
        line = one_error_line(run_cli("report", "--compare", before, after, "--out", tmp_path / "out"))
    assert line.startswith(f"error: {after} is being written by a run (pid {os.getpid()})")
    assert not (tmp_path / "out").exists()


def test_a_second_report_of_a_profile_a_run_is_measuring_is_refused_before_writing_anything(tmp_path):
    """Hostile round 5, second pass: a `report` of a profile whose results file a live run holds had
    rendered a FAILED page into that run's folder and the summary mid-run, exit 1; now one line, exit 2,
    and nothing written."""
    from bench_utils.results.writer import ResultsWriter

    params = tiny_params(tmp_path)
    out = tmp_path / "out"
    results = report.profile_results(load_config(params), out)
    with ResultsWriter(results) as writer:  # the first `report`, measuring
        writer.append(make_row("vit", 1, "eager", 2.0))
        proc = run_cli("report", params, "--out", out)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"is being written by a run (pid {os.getpid()})" in proc.stderr
    assert sorted(path.name for path in out.rglob("*") if path.is_file()) == ["results.jsonl", "results.jsonl.lock"]


def test_report_only_with_a_corrupt_results_file_is_a_one_line_error(tmp_path):
    params = tiny_params(tmp_path)
    results = report.profile_results(load_config(params), tmp_path / "out")
    results.parent.mkdir(parents=True)
    results.write_text('{"model": "vit", "status": "ok"\n')  # torn: no valid row at all
    proc = run_cli("report", params, "--out", tmp_path / "out", "--report-only")
    assert proc.returncode == 2 and "no readable results rows (1 unreadable lines)" in proc.stderr.splitlines()[-1]


def test_report_from_fixture_rows_builds_index_profile_and_summary(fixture_report):
    _, out, proc = fixture_report
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"open {(out / 'index.html').resolve()}" in proc.stdout
    index = (out / "index.html").read_text()
    assert 'href="fixture-cpu/report.html"' in index and 'href="summary.html"' in index
    assert "1 failed, 1 missing" in index  # resnet bs=4 default OOM, vit bs=4 default never measured
    # vit bs=4's two rounds never ran (a sweep stopped early): the index and the page say so
    # one next step, the command that measures them: report without --report-only (the page was made with it,
    # which measures nothing), failed cells measured again too
    step = ("Finish the run (2 rounds of its first pass still to measure); measure the 1 failed cell again (after a "
            "timeout, raise timeout_s first): make report PARAMS=")
    assert ('1 failed, 1 missing</span><br><span class="next">next step: ' + step) in index
    assert "--report-only" not in index.split("next step:")[1]
    assert f"Next step: {step}" in (out / "fixture-cpu" / "report.html").read_text().replace("<strong>Next step:</strong>", "Next step:")
    assert "The sweep stopped before its first pass ended: 2 of 8 rounds are still to measure" in (
        out / "fixture-cpu" / "report.html").read_text()
    assert f"  Next step: {step}" in proc.stdout + proc.stderr


def test_profile_page_shows_failed_and_missing_cells_and_hides_code(fixture_report):
    page = (fixture_report[1] / "fixture-cpu" / "report.html").read_text()
    assert "RANDOM weights, not pretrained" in page
    assert ">OOM<" in page and "1 failed; 1 of 8 cells missing" in page
    assert len(re.findall(r'<img[^>]+src="data:image/png;base64,', page)) >= 6  # charts inline
    assert "config_from_dict(" not in page  # code cells are hidden
    assert "fixture break" in page  # graph-break reasons beside the speedups


def test_summary_of_one_run_has_the_guide_comparison_and_no_empty_sections(fixture_report):
    page = (fixture_report[1] / "summary.html").read_text()
    assert "Beside the published numbers" in page and "Guide: A100 (×)" in page
    for empty in ("Best configuration per model", "Compare two runs", "Set compare_before"):
        assert empty not in page


def test_report_compare_builds_a_page_for_two_results_files(fixture_report, tmp_path):
    results = fixture_report[1] / "fixture-cpu" / "results.jsonl"
    proc = run_cli("report", "--compare", results, results, "--out", tmp_path, "--notebook-timeout", 300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = (tmp_path / "compare.html").read_text()
    assert "Compare two runs" in page and "<title>Compare: fixture-cpu/results.jsonl against" in page


def test_a_failing_profile_still_gets_its_page_and_is_flagged(tmp_path):
    """Resuming into a results file measured with other settings is refused by the sweep: the page
    says why, the index flags the profile, and the command exits non-zero."""
    from bench_utils.results.writer import ResultsWriter
    from conftest import synthetic_row

    params = tiny_params(tmp_path, label="Clash")
    other = load_config(tiny_params(tmp_path, name="other.yaml", label="Clash", iterations=7))
    with ResultsWriter(report.profile_results(other, tmp_path / "out")) as writer:
        writer.append(synthetic_row(other, "vit", 1, "eager", 4.0))
    proc = run_cli("report", params, "--out", tmp_path / "out", "--notebook-timeout", 300)
    assert proc.returncode == 1
    assert "[report] Clash: FAILED (SettingsMismatchError: " in proc.stdout
    page = (tmp_path / "out" / "clash" / "report.html").read_text()
    assert "SettingsMismatchError" in page and "holds rows measured with other settings" in page
    index = (tmp_path / "out" / "index.html").read_text()
    assert "failed: SettingsMismatchError" in index and 'href="clash/report.html"' in index


def test_a_notebook_past_the_notebook_timeout_gives_one_line_not_a_traceback(tmp_path):
    import nbformat

    notebook = tmp_path / "slow.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time; time.sleep(30)")])
    nbformat.write(nb, str(notebook))
    error = report.execute(notebook, tmp_path / "out" / "slow.ipynb", {}, step_timeout_s=2)
    assert error == "a notebook step ran past --notebook-timeout 2 s"
    report.write_stub(tmp_path / "out" / "page.html", "Slow", error)
    assert "past --notebook-timeout 2 s" in (tmp_path / "out" / "page.html").read_text()


HOSTILE = '<img src=x onerror=alert(1)>'
LIVE_MARKUP = re.compile(r"<img src=x|<script>alert|onerror=alert\(1\)>")  # as written, not escaped


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory):
    """A report (--report-only) whose label, model names, environment and weights are markup."""
    from bench_utils.results.writer import ResultsWriter
    from conftest import synthetic_row

    tmp = tmp_path_factory.mktemp("hostile")
    params = tiny_params(tmp, label=HOSTILE, configurations=["eager", "default"])
    cfg = load_config(params)
    env = {"device": "cpu", "device_name": f"CPU {HOSTILE}", "torch": f"2.{HOSTILE}", "hostname": HOSTILE,
           "transformers": "5", "torch_threads": 2}
    out = tmp / "reports"
    with ResultsWriter(report.profile_results(cfg, out)) as writer:
        for model in ("vit", "<script>alert(1)</script>"):
            for mode in cfg.configurations:
                row = synthetic_row(cfg, "vit", 1, mode, 4.0)
                writer.append(type(row)(**{**row.__dict__, "model": model, "env": env, "weights": HOSTILE,
                                           "weights_note": HOSTILE}))
    lying = json.loads(row.to_json()) | {"samples_s": [1e-12] * cfg.iterations, "repeat": 1}  # line 5
    with open(report.profile_results(cfg, out), "a") as fh:
        fh.write(json.dumps(lying) + "\n")
    proc = run_cli("report", params, "--out", out, "--report-only", "--notebook-timeout", 300)
    return tmp, out, proc


def test_a_report_from_hostile_rows_publishes_no_markup_and_no_local_path(hostile_report):
    tmp, out, proc = hostile_report
    assert proc.returncode == 0, proc.stderr[-3000:]
    published = [path for path in out.rglob("*") if path.is_file() and path.suffix != ".jsonl"]
    assert {path.name for path in published} >= {"index.html", "summary.html", "report.html", "benchmark.ipynb",
                                                  "summary.ipynb"}
    for path in published:
        text = path.read_text()
        if path.suffix == ".ipynb":  # what Jupyter renders: the outputs (the code shows as code)
            text = json.dumps([cell.get("outputs", []) for cell in json.loads(text)["cells"]])
        if path.suffix not in (".json", ".csv"):  # data, like results.jsonl: profile.json for the next index,
            # cells.csv for a spreadsheet (served as text/csv, no browser runs it; formulas are defused)
            assert not LIVE_MARKUP.search(text), (path.name, LIVE_MARKUP.search(text))
        for local in (str(tmp), str(REPO), str(Path.home())):
            assert local not in path.read_text(), (path.name, local)
    page = (out / "img-src-x-onerror-alert-1" / "report.html").read_text()
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # shown as text, not dropped
    assert "skipped 1 unreadable line(s): [5]; line 5: samples_s: a value outside" in page  # the lying row


def test_out_that_is_a_file_is_refused_before_any_plan(tmp_path):
    params = tiny_params(tmp_path)
    proc = run_cli("report", params, "--out", params)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    assert one_error_line(proc).endswith("is a file, not a folder: give the folder the reports go to")


def test_source_notebooks_are_never_an_output(tmp_path):
    before = {path: path.read_bytes() for path in (REPO / "notebooks").glob("*.ipynb")}
    line = one_error_line(run_cli("report", tiny_params(tmp_path), "--out", REPO / "notebooks", "--report-only"))
    assert "would overwrite the source notebook" in line and "summary.ipynb" in line
    line = one_error_line(run_cli("report", tiny_params(tmp_path, label="notebooks"), "--out", REPO, "--report-only"))
    assert "benchmark.ipynb" in line
    assert before == {path: path.read_bytes() for path in (REPO / "notebooks").glob("*.ipynb")}


@pytest.mark.parametrize("value", ["0", "-5", "ten"])
def test_notebook_timeout_must_be_above_zero(tmp_path, value):
    proc = run_cli("report", tiny_params(tmp_path), "--out", tmp_path / "out", "--report-only", "--notebook-timeout", value)
    assert proc.returncode == 2
    assert f"--notebook-timeout: {value!r} is not allowed; allowed: a whole number of seconds > 0" in proc.stderr


# --- round 4: what --out may overwrite, links, modes, and no local path in any spelling ---------------

@pytest.mark.parametrize("name", ["index.html", "method.md", "summary.html", "summary.ipynb",
                                  "test/cells.csv", "test/benchmark.ipynb", "test/report.html"])
def test_out_refuses_to_replace_a_file_compile_bench_did_not_write(tmp_path, name):
    out = tmp_path / "out"
    theirs = out / name
    theirs.parent.mkdir(parents=True)
    theirs.write_text("someone's own file")
    line = one_error_line(run_cli("report", tiny_params(tmp_path), "--out", out, "--report-only"))
    assert line == (f"error: {theirs}: not written by compile-bench (the folder's .compile-bench marker does not "
                    "list it), so it is left alone: move it, or choose another folder")
    assert theirs.read_text() == "someone's own file"


def test_compare_refuses_a_file_that_is_not_results(fixture_report, tmp_path):
    results = fixture_report[1] / "fixture-cpu" / "results.jsonl"
    line = one_error_line(run_cli("report", "--compare", results, "/etc/passwd", "--out", tmp_path))
    assert line == "error: /etc/passwd: not a results file (line 1 is not a results row); choose another --compare file"
    packed = tmp_path / "results.jsonl.gz"  # a compressed copy: named as such, with what to do
    packed.write_bytes(gzip.compress(results.read_bytes()))
    line = one_error_line(run_cli("report", "--compare", results, packed, "--out", tmp_path))
    assert line == (f"error: {packed}: a gzip-compressed file, not a results file; decompress it "
                    "(gunzip -k results.jsonl.gz) and give --compare the .jsonl file")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert "no readable results rows" in one_error_line(run_cli("report", "--compare", empty, results, "--out", tmp_path))
    assert not (tmp_path / "compare.html").exists()


LINK_NAME, IMAGE_NAME = "[c](javascript:alert(1)).jsonl", "![i](x.png) https:x.org.jsonl"
ESCAPES = "vit\x1b]52;c;aGk=\x07\x1b[2J"  # OSC 52 (clipboard write) and a screen clear
LOCAL_SPELLINGS = ("\\xfc", "\\u00fc", "ü")  # how papermill, JSON and a page may write the "ü" of the folder


@pytest.fixture(scope="module")
def planted_report(tmp_path_factory):
    """A report (--report-only) into a folder with a non-ASCII name, where cells.csv and method.md,
    listed by the marker as compile-bench's, were swapped for links to a victim file; then a comparison
    of two results files kept outside the report folder."""
    from bench_utils.files import MARKER
    from bench_utils.results.writer import ResultsWriter
    from conftest import synthetic_row

    tmp = tmp_path_factory.mktemp("planted")
    victim = tmp / "victim.txt"
    victim.write_text("precious\n")
    params = tiny_params(tmp, configurations=["eager", "default"], label="Planted")
    cfg = load_config(params)
    out = tmp / "jürgen" / "reports"
    results = report.profile_results(cfg, out)
    with ResultsWriter(results) as writer:
        for mode in cfg.configurations:
            writer.append(synthetic_row(cfg, "vit", 1, mode, 4.0))
            row = synthetic_row(cfg, "vit", 4, mode, 4.0)  # a model named to clear the screen, write the clipboard
            writer.append(type(row)(**{**row.__dict__, "model": ESCAPES}))
    for folder, name in ((out, "method.md"), (results.parent, "cells.csv")):
        (folder / MARKER).write_text(f"# files compile-bench wrote\n{name}\n")
        (folder / name).symlink_to(victim)
    proc = run_cli("report", params, "--out", out, "--report-only", "--notebook-timeout", 300)
    elsewhere = tmp / "elsewhere" / "runs"
    elsewhere.mkdir(parents=True)
    before, after = elsewhere / LINK_NAME, elsewhere / IMAGE_NAME  # file names a page must not make live
    before.write_bytes(results.read_bytes())
    after.write_bytes(results.read_bytes())
    compared = tmp / "compared"
    compare = run_cli("report", "--compare", before, after, "--out", compared, "--notebook-timeout", 300)
    return tmp, out, proc, compared, compare, victim


def test_a_report_replaces_planted_links_and_leaves_their_target(planted_report):
    tmp, out, proc, _, _, victim = planted_report
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert victim.read_text() == "precious\n"
    assert not (out / "method.md").is_symlink() and not (out / "planted" / "cells.csv").is_symlink()
    assert "ViT-B/16" in (out / "planted" / "cells.csv").read_text() or "vit" in (out / "planted" / "cells.csv").read_text()


def test_every_published_file_is_0644_and_names_no_local_path_in_any_spelling(planted_report):
    import stat

    tmp, out, proc, compared, compare, _ = planted_report
    assert proc.returncode == 0 and compare.returncode == 0, (proc.stderr + compare.stderr)[-3000:]
    published = [p for folder in (out, compared) for p in folder.rglob("*") if p.is_file() and "logs" not in p.parts]
    assert {p.name for p in published} >= {"index.html", "summary.html", "summary.ipynb", "report.html",
                                           "benchmark.ipynb", "cells.csv", "profile.json", "method.md",
                                           "compare.html", "compare.ipynb"}
    for path in published:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
        text = path.read_text(errors="replace")
        for spelling in LOCAL_SPELLINGS:
            assert str(tmp).replace("ü", spelling) not in text, (path, spelling)
        assert str(tmp / "elsewhere") not in text and str(REPO) not in text, path
    assert f"runs/{LINK_NAME}" in json.loads((compared / "compare.ipynb").read_text())["metadata"]["papermill"][
        "parameters"]["compare_before"]  # shown by its folder's name


def test_compared_file_names_become_no_link_and_no_image(planted_report):
    _, _, _, compared, compare, _ = planted_report
    assert compare.returncode == 0, compare.stdout[-3000:]
    page = (compared / "compare.html").read_text()
    assert "Compare two runs" in page and "(javascript:alert(1)).jsonl" in page  # shown, as text
    assert not re.search(r"<a [^>]*href=\"(javascript|x\.png|https:x)", page)
    assert not re.search(r"<img [^>]*src=\"x\.png", page)


def test_a_report_prints_no_control_character_on_the_terminal(planted_report):
    """The rows of a model whose name holds terminal escapes are refused by the row schema (named, with
    the escapes shown, in the skipped-line warning); nothing the report prints runs on the terminal."""
    _, out, proc, _, compare, _ = planted_report
    assert "\x1b" not in proc.stdout + proc.stderr + compare.stdout + compare.stderr
    assert "Should you compile?" in proc.stdout and "ViT-B/16 (batch 1, CPU): Compile" in proc.stdout
    assert "skipped 2 unreadable line(s): [2, 4]; line 2: model: 'vit\\x1b]52;c;aGk=\\x07\\x1b[2J'" in proc.stderr


@pytest.mark.parametrize("ending", ["interrupt", "disk full"])
def test_a_render_cut_short_keeps_the_published_notebook_and_leaves_no_running_file(tmp_path, monkeypatch, ending):
    """Ctrl-C (or SIGTERM) while papermill writes, or a disk that fills: the notebook published before
    stays whole, papermill's half-written file goes, and the interrupt goes on as one (the CLI's one
    line), the full disk becomes the profile's error."""
    out = tmp_path / "out"
    good = out / "benchmark.ipynb"
    report.write_file(good, '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n', out)
    before = good.read_text()

    def cut_short(notebook, running, **kwargs):
        Path(running).write_text('{"cells": [{"cell_type": "code", "sou')  # a notebook cut mid-write
        if ending == "interrupt":
            raise KeyboardInterrupt

    monkeypatch.setattr(papermill, "execute_notebook", cut_short)
    if ending == "interrupt":
        with pytest.raises(KeyboardInterrupt):
            report.execute(NOTEBOOK, good, {}, 60)
    else:
        assert report.execute(NOTEBOOK, good, {}, 60) == ("the executed notebook could not be saved whole "
                                                          "(JSONDecodeError)")
    assert good.read_text() == before
    assert sorted(p.name for p in out.iterdir()) == [".compile-bench", "benchmark.ipynb"]


def test_a_render_killed_before_leaves_no_private_folder_for_the_next_one(tmp_path, monkeypatch):
    """kill -9 while a notebook renders runs no `finally`: `.benchmark.ipynb.*.running/` (papermill's
    notebook, absolute paths inside) stayed in the published folder, and the next report left it. The
    next render removes those whose process is gone, not one a live render holds."""
    import subprocess
    import sys

    out = tmp_path / "out"
    good = out / "benchmark.ipynb"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    for name in (f".benchmark.ipynb.{gone}.abc123.running", ".benchmark.ipynb.x7y8z9.running",
                 f".benchmark.ipynb.{os.getpid()}.live01.running", f".summary.ipynb.{gone}.other1.running"):
        (out / name).mkdir(parents=True)
        (out / name / "benchmark.ipynb").write_text(f'{{"path": "{tmp_path}"}}')
    (out / f".benchmark.ipynb.{gone}.link01.running").symlink_to(tmp_path)

    def finish(notebook, running, **kwargs):
        Path(running).write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n')

    monkeypatch.setattr(papermill, "execute_notebook", finish)
    assert report.execute(NOTEBOOK, good, {}, 60) == ""
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".running")) == sorted([
        f".benchmark.ipynb.{os.getpid()}.live01.running", f".benchmark.ipynb.{gone}.link01.running",
        f".summary.ipynb.{gone}.other1.running"])  # a live render's, a link (not followed), another notebook's
    assert tmp_path.is_dir() and good.is_file()


def test_a_published_notebook_names_own_checkpoint_and_image_folders_by_a_name(tmp_path):
    """An own checkpoint folder and an image outside the home, the checkout and the reports folder: the
    published notebook (its parameters cell, papermill's metadata) shows neither path whole."""
    from PIL import Image

    from bench_utils.config.parameters_file import config_from_dict
    from bench_utils.paths import relative_text

    import shutil

    from bench_utils.config.registry import get_spec

    outside = tmp_path / "srv" / "data"
    (outside / "my-vit").mkdir(parents=True)
    for name in ("config.json", "preprocessor_config.json"):  # a saved folder's two files (the tiny ViT's)
        shutil.copy(get_spec("vit").config_dir("tiny") / name, outside / "my-vit" / name)
    image = outside / "photos" / "cat.png"
    image.parent.mkdir()
    Image.new("RGB", (64, 48)).save(image)
    cfg = config_from_dict({"image": str(image), "models": ["mine"], "checkpoints": [
        {"name": "mine", "checkpoint": str(outside / "my-vit"), "task": "image-classification"}]})
    text = f'image = "{image}"\\ncheckpoints = [{{"checkpoint": "{outside / "my-vit"}"}}]'
    shown = relative_text(text, tmp_path / "reports" / "x", cfg.users_folders())
    assert str(outside) not in shown and str(tmp_path) not in shown
    assert '"<image folder>/cat.png"' in shown and '"my-vit"' in shown
