"""The report's pages: execute the benchmark and summary notebooks with papermill (`measure = False`:
they only read results), export each to one self-contained HTML page with nbconvert, the stub page of a
profile that could not be rendered, the method page beside the index, and the verdict in words for the
terminal. What runs before (the profiles, the checks, the sweep) is the pipeline's (bench_utils/pipeline.py).

A profile that fails still gets its page (papermill saves the notebook up to the failing step; a
notebook that never ran, or a sweep refused, gets a stub page saying why).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..config.bench_config import BenchConfig, ConfigError
from ..files import NotOursError, check_ours, write_file
from ..messages import terminal_text
from ..paths import checkout_file, inside, relative_text, repo_root
from .page_html import escape, published_notebook

KERNEL_NAME = "python3"
# the kernel's own log at CRITICAL: its "running over TCP without encryption" warning (a local kernel on
# localhost) is noise on every report run, and on Ctrl-C its "Exception in message handler" traceback (a
# reply sent on a socket already closed) read as a crash. A step's error reaches the page and the console
# through papermill, a dead kernel through nbclient (DeadKernelError), not through this log.
QUIET_KERNEL = ["--IPKernelApp.log_level=CRITICAL"]
HIDDEN_INPUT_TAGS = {"hide-input", "injected-parameters"}  # code is in the notebook, not the report


@dataclass
class ProfileOutcome:
    """What the pipeline made of one profile: its page, its results file and why it failed, if it did."""

    cfg: BenchConfig
    page: Path  # the exported HTML page
    results: Path
    error: str = ""  # why the notebook failed; "" when it ran through
    params: str = ""  # the parameters file as a command names it (shown_path)
    rounds_left: int = 0  # first-pass rounds the sweep had still to run (sweep/adaptive.first_pass_state)


def check_parameters(cfg: BenchConfig, params_path: Path, notebook: Path) -> dict:
    """The papermill parameters for `cfg`; every key must exist in the notebook's parameters cell
    (papermill itself only warns about unknown keys, and the notebook would silently use defaults)."""
    import papermill

    values = cfg.to_dict()
    unknown = sorted(set(values) - set(papermill.inspect_notebook(str(notebook))))
    if unknown:
        raise ConfigError(f"{params_path}: key {unknown[0]!r} is not a parameter of {notebook.name}")
    return values


def execute(notebook: Path, output: Path, parameters: dict, step_timeout_s: int, also: dict | None = None) -> str:
    """Run `notebook` into `output`; returns "" on success, else one line on why it stopped: the failing
    step's error (a notebook code cell: "step N"), a step past `step_timeout_s`, a kernel that died, or
    a notebook that could not be saved whole (a full disk). Papermill saves into a private folder beside
    `output` (made for this run: no link can wait there); a notebook papermill finished, through or up
    to a failing step, replaces `output` (fit to publish: published_notebook, `also` its folders to show
    by a name). An interrupt (Ctrl-C, SIGTERM) leaves the old `output` as it was; the private folder
    always goes."""
    import papermill
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from papermill.exceptions import PapermillExecutionError

    output.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_private(output)
    private = Path(tempfile.mkdtemp(prefix=f".{output.name}.{os.getpid()}.", suffix=".running", dir=output.parent))
    running = private / output.name
    try:
        error = ""
        try:
            papermill.execute_notebook(
                str(notebook), str(running), parameters=parameters, kernel_name=KERNEL_NAME,
                cwd=str(notebook.parent), progress_bar=True, log_output=True, execution_timeout=step_timeout_s,
                extra_arguments=QUIET_KERNEL)
        except PapermillExecutionError as err:
            error = f"notebook step {err.exec_count}: {err.ename}: {err.evalue}"[:500]
        except CellTimeoutError:
            error = f"a notebook step ran past --notebook-timeout {step_timeout_s} s"
        except DeadKernelError as err:
            error = f"the notebook's kernel died: {str(err).strip().splitlines()[0][:300]}"
        if running.exists():
            try:
                published_notebook(running, output, also)
            except ValueError as err:  # papermill's file cut short (a full disk): the old notebook stays
                error = error or f"the executed notebook could not be saved whole ({type(err).__name__})"
        return error
    finally:
        shutil.rmtree(private, ignore_errors=True)


def remove_stale_private(output: Path) -> None:
    """The private folders a render of `output` left beside it when it was killed (kill -9 runs no
    `finally`: `.benchmark.ipynb.*.running/`, papermill's notebook inside, with absolute paths, stayed in
    the published folder): each names the pid that made it, and one whose process is gone is removed (a
    name without a pid is an older version's). A link is never followed."""
    for stale in output.parent.glob(f".{output.name}.*.running"):
        owner = stale.name[len(output.name) + 2:].split(".", 1)[0]
        if stale.is_symlink() or not stale.is_dir() or (owner.isdigit() and _alive(int(owner))):
            continue
        shutil.rmtree(stale, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return pid > 0  # another user's process (a PermissionError), or no pid at all
    return True


def render(notebook: Path, executed: Path, page: Path, parameters: dict, step_timeout_s: int, title: str,
           stub_label: str, also: dict | None = None, method_link: str = "../method.html") -> str:
    """`notebook` executed into `executed` and exported as `page` (titled `title`); a stub page naming
    `stub_label` and why where no executed notebook came out (`method_link`: the method page from
    there). Returns execute's error line ("" when ok)."""
    error = execute(notebook, executed, parameters, step_timeout_s, also)
    if executed.exists():
        export_html(executed, page, title)
    else:
        write_stub(page, stub_label, error, method_link)
    return error


def write_stub(page: Path, label: str, reason: str, method_link: str = "../method.html") -> None:
    """A page for a profile whose notebook could not be rendered: what happened, and what to do."""
    reason = relative_text(reason, page.parent)
    write_file(page, f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(label)}</title>
</head><body style="font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto">
<h1>{escape(label)}: no report</h1><p><strong>{escape(reason)}</strong></p>
<p>Rows already measured are kept in <code>results.jsonl</code> beside this page. Fix the cause and run the
same command again: measured cells are not measured twice.</p>
<p><a href="{escape(method_link)}">How it is measured and decided</a></p></body></html>
""", page.parent)


def export_html(notebook: Path, page: Path, title: str) -> None:
    """One self-contained page that opens offline: inputs of tagged cells removed, images inline as
    data URIs, no script from a CDN (templates/offline); `title` is its <title>."""
    import nbformat
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import TagRemovePreprocessor

    templates = Path(__file__).resolve().parent / "templates"
    exporter = HTMLExporter(template_name="offline", extra_template_basedirs=[str(templates)])
    exporter.register_preprocessor(TagRemovePreprocessor(remove_input_tags=HIDDEN_INPUT_TAGS), enabled=True)
    node = nbformat.read(str(notebook), as_version=4)
    node.metadata["title"] = title  # nbconvert's lab template puts it in <title>
    body, _ = exporter.from_notebook_node(node)
    write_file(page, body, page.parent)


def profile_results(cfg: BenchConfig, out_dir: Path, results: Path | None = None) -> Path:
    """The profile's results file: `results` where a command names one (--results), else
    OUT/<label>/results.jsonl. Its page, notebook and cells.csv are written beside it."""
    return Path(results).resolve() if results else (out_dir / cfg.slug()).resolve() / "results.jsonl"


def results_rows(path: Path, option: str = "--results") -> list:
    """The rows of a results file that is to be reported (--report-only, --compare): a file that is
    not a results file, or holds no readable row, is one line (ConfigError), its skipped lines then
    named in that line rather than in a warning before it."""
    from ..results.rows import read_results
    from ..results.writer import NotAResultsFileError, check_is_results_file

    try:
        check_is_results_file(path, option)
    except NotAResultsFileError as err:
        raise ConfigError(str(err)) from None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = read_results(path)
    if not loaded.rows:
        raise ConfigError(f"{path}: no readable results rows ({len(loaded.skipped_lines)} unreadable lines)")
    for warning in caught:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return loaded.rows


def page_title(results: Path, label: str) -> str:
    """The page's <title>: its header facts (run, machine, versions, date, weights)."""
    from ..results.aggregate import load_dataframe
    from .header import page_header

    return page_header(load_dataframe(results), label).title if results.exists() else label


def copy_method(out_dir: Path) -> None:
    """docs/method.md next to index.html, as written and rendered (method.html, where every page's
    "method" link points)."""
    from .method_page import method_html

    method = repo_root() / "docs" / "method.md"
    if method.is_file():
        write_file(out_dir / "method.md", method.read_bytes(), out_dir)
        write_file(out_dir / "method.html", method_html(method.read_text(encoding="utf-8")), out_dir)


def verdict_lines(outcomes: list[ProfileOutcome]) -> str:
    """Every profile's verdict as plain text, for the terminal."""
    from ..results.aggregate import load_dataframe
    from .verdict import Rules, verdict_text

    blocks = []
    for outcome in outcomes:
        if outcome.results.exists():
            rules = Rules.of(outcome.cfg, outcome.params, outcome.results)
            text = verdict_text(load_dataframe(outcome.results), rules, outcome.rounds_left)
            blocks.append(f"{outcome.cfg.label}:\n{text}")
    return terminal_text("\n".join(blocks))  # model names and labels from a results file: shown, never run


def build_summary(out_dir: Path, step_timeout_s: int) -> tuple[Path | None, str]:
    """summary.html over every profile folder in `out_dir`, whichever command measured it, but one a run
    is measuring now or whose results are refused (index_page.summarized_results: the index says why)."""
    from .index_page import summarized_results

    notebook = checkout_file("notebooks", "summary.ipynb")
    paths = [str(path) for path in summarized_results(out_dir)]
    if not paths and any(out_dir.glob("*/results.jsonl")):  # [] would make the notebook read every folder's
        return None, ""
    executed = out_dir.resolve() / "summary.ipynb"
    page = out_dir / "summary.html"
    error = render(notebook, executed, page, {"results_paths": paths, "reports_dir": str(out_dir.resolve())},
                   step_timeout_s, "Summary: torch.compile against eager, every run", "Summary",
                   method_link="method.html")
    return page, error


SUMMARY_OUTPUTS = ("index.html", "summary.html", "summary.ipynb", "method.md", "method.html")  # in the report folder
PROFILE_OUTPUTS = ("report.html", "benchmark.ipynb", "cells.csv", "profile.json")  # in each profile folder
COMPARE_OUTPUTS = ("compare.html", "compare.ipynb", "method.md", "method.html")  # the page links the method


def check_outputs(out_dir: Path, results_files: list[Path], named: bool = False) -> None:
    """Before anything runs: the notebooks the command writes must not be the checkout's own (`--out .`
    with a label "notebooks", or `--out notebooks`, would overwrite them with executed copies), and no
    file it writes may replace one compile-bench did not write (files.check_ours: the folder's marker).
    `named`: the results file is the one --results named, whose folder may be anywhere (as for `run`)."""
    if out_dir.exists() and not out_dir.is_dir():  # before a plan is printed and a sweep started, not after
        raise ConfigError(f"--out {out_dir} is a file, not a folder: give the folder the reports go to")
    sources = {path.resolve() for path in (checkout_file("notebooks", "benchmark.ipynb").parent).glob("*.ipynb")}
    folders = [path.parent for path in results_files]
    for folder in [] if named else folders:  # a profile folder that is a link out of the reports folder is refused
        inside(folder / "report.html", out_dir)
    for output in [out_dir / "summary.ipynb"] + [folder / "benchmark.ipynb" for folder in folders]:
        if output.resolve() in sources:
            raise ConfigError(f"--out {out_dir}: the report would overwrite the source notebook {output}; "
                              "choose another report folder (or label)")
    check_not_others(out_dir, SUMMARY_OUTPUTS)
    for folder in folders:
        check_not_others(folder, PROFILE_OUTPUTS)
        check_no_live_run(folder / "results.jsonl")
        results_file(folder / "results.jsonl")


def results_file(path: Path) -> None:
    """A profile folder's results file, when there is one, must be one (a text file there, or a
    compressed copy, is refused before anything is measured, naming --out: `report` has no --results)"""
    from ..results.writer import NotAResultsFileError, check_is_results_file

    try:
        check_is_results_file(path, "--out")
    except NotAResultsFileError as err:
        raise ConfigError(str(err)) from None


def check_no_live_run(path: Path) -> None:
    """A profile whose results file a run is writing now is refused before anything is written: with
    --report-only its page would read complete while rounds are still to come ("2 ok, 0 failed" after
    one round of four); without, a second `report` rendered a FAILED page into the live run's folder and
    the summary over the reports folder's, mid-run, and exited 1."""
    from ..results.writer import writing_pid

    pid = writing_pid(path)
    if pid is not None:
        raise ConfigError(f"{path} is being written by a run (pid {pid}): wait for it to end (then --report-only "
                          "builds its page), or give this report another --out folder or label")


def check_not_others(folder: Path, names) -> None:
    """ConfigError (one line) when a file of `names` in `folder` is not compile-bench's to replace."""
    for name in names:
        try:
            check_ours(folder / name)
        except NotOursError as err:
            raise ConfigError(f"{err.filename}: {err.strerror}") from None


def compare_main(before: Path, after: Path, out_dir: Path, step_timeout_s: int) -> int:
    """`report --compare BEFORE AFTER`: the summary notebook on two results files, comparing them cell by
    cell, as out_dir/compare.html; nothing is measured."""
    for path in (before, after):
        if not path.is_file():
            raise ConfigError(f"--compare: no results file at {path}")
        check_no_live_run(path)  # its rows are partial, as for --report-only
        results_rows(path, "--compare")  # a file that is no results file (e.g. /etc/passwd) is one line, not a page
    check_not_others(out_dir, COMPARE_OUTPUTS)
    out_dir.mkdir(parents=True, exist_ok=True)
    notebook = checkout_file("notebooks", "summary.ipynb")
    executed = out_dir.resolve() / "compare.ipynb"
    parameters = {"results_paths": [str(before.resolve()), str(after.resolve())],
                  "compare_before": str(before.resolve()), "compare_after": str(after.resolve())}
    # the compared files' folders, wherever they are, are shown by their names on the page
    shown = {path.resolve().parent: path.resolve().parent.name for path in (before, after)}
    page = out_dir / "compare.html"
    title = f"Compare: {before.parent.name}/{before.name} against {after.parent.name}/{after.name}"
    error = render(notebook, executed, page, parameters, step_timeout_s, title, "Compare", also=shown,
                   method_link="method.html")
    copy_method(out_dir)
    print(terminal_text(f"[report] {outcome_words(error)}: open {page.resolve()}"))
    return 1 if error else 0


def outcome_words(error: str) -> str:
    return f"FAILED ({error})" if error else "ok"

