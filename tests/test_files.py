"""How compile-bench writes a file: never through a symbolic link, mode 0644 whatever the umask, whole
or not at all, and only over a file it wrote itself (the folder's .compile-bench marker); each writer
of a published or results file goes through it."""

import os
import stat

import pytest

from bench_utils import files
from bench_utils.results.writer import ResultsWriter
from conftest import make_row


@pytest.fixture
def victim(tmp_path):
    """A file outside the output folder that a planted link points at: it must stay as it is."""
    path = tmp_path / "victim.txt"
    path.write_text("precious\n")
    return path


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_written_file_is_0644_whatever_the_umask(tmp_path):
    before = os.umask(0o077)  # a user's strict umask: mkstemp's 0600 would stay 0600
    try:
        path = files.write_file(tmp_path / "out" / "index.html", "<p>page</p>", tmp_path / "out")
    finally:
        os.umask(before)
    assert _mode(path) == 0o644 and path.read_text() == "<p>page</p>"


def test_a_file_it_did_not_write_is_refused_and_one_it_wrote_is_replaced(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.html").write_text("someone's page")
    with pytest.raises(files.NotOursError, match="not written by compile-bench") as refused:
        files.write_file(out / "summary.html", "ours", out)
    assert refused.value.filename == str(out / "summary.html") and "\n" not in str(refused.value)
    assert (out / "summary.html").read_text() == "someone's page"
    files.write_file(out / "index.html", "first", out)
    files.write_file(out / "index.html", "second", out)  # its own: replaced
    assert (out / "index.html").read_text() == "second" and files.written_here(out / "index.html")
    assert (out / files.MARKER).read_text().splitlines()[1:] == ["index.html"]  # listed once
    assert not files.written_here(out / "summary.html")


def test_a_marker_that_is_a_link_is_never_written_through(tmp_path, victim):
    out = tmp_path / "out"
    out.mkdir()
    (out / files.MARKER).symlink_to(victim)
    with pytest.raises(OSError):
        files.write_file(out / "index.html", "page", out)
    assert victim.read_text() == "precious\n" and not (out / "index.html").exists()


def test_the_results_lock_is_never_written_through_a_link(tmp_path, victim):
    results = tmp_path / "r.jsonl"
    (tmp_path / "r.jsonl.lock").symlink_to(victim)
    with pytest.raises(OSError, match="a symbolic link; compile-bench never writes through one"):
        ResultsWriter(results)
    assert victim.read_text() == "precious\n"


def test_a_results_file_given_as_a_link_is_refused_in_one_line(tmp_path, victim):
    """`--results link.jsonl` was resolved to the link's target and appended to (docs/safety.md said it is
    refused): the writer refuses the link itself, its target untouched."""
    from conftest import run_cli, tiny_params

    link = tmp_path / "r.jsonl"
    link.symlink_to(victim)
    with pytest.raises(OSError, match="a symbolic link; compile-bench never writes through one"):
        ResultsWriter(link)
    proc = run_cli("run", str(tiny_params(tmp_path)), "--results", str(link))
    assert proc.returncode == 2 and "a symbolic link" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert victim.read_text() == "precious\n"


def test_a_results_file_swapped_for_a_link_is_not_appended_through(tmp_path, victim):
    results = tmp_path / "r.jsonl"
    with ResultsWriter(results) as writer:
        writer.append(make_row())
        results.unlink()
        results.symlink_to(victim)  # swapped while the sweep runs
        with pytest.raises(OSError, match="a symbolic link"):
            writer.append(make_row(configuration="default"))
    assert victim.read_text() == "precious\n"


def test_a_new_results_file_and_its_lock_are_0644(tmp_path):
    before = os.umask(0o077)
    try:
        with ResultsWriter(tmp_path / "r.jsonl") as writer:
            writer.append(make_row())
    finally:
        os.umask(before)
    assert _mode(tmp_path / "r.jsonl") == 0o644 and _mode(tmp_path / "r.jsonl.lock") == 0o644


def test_a_log_planted_as_a_link_is_replaced_not_truncated(tmp_path, victim):
    log = tmp_path / "logs" / "vit-bs1-eager-r0.log"
    log.parent.mkdir()
    log.symlink_to(victim)
    fd = files.open_fresh(log)
    os.write(fd, b"worker: cell\n")
    os.close(fd)
    assert victim.read_text() == "precious\n"
    assert not log.is_symlink() and log.read_text() == "worker: cell\n" and _mode(log) == 0o644


def test_cells_csv_and_method_md_replace_a_planted_link_and_leave_its_target(tmp_path, victim):
    import pandas as pd

    from bench_utils.report import build, display

    out = tmp_path / "out"
    display.write_csv(pd.DataFrame({"model": ["vit"], "speedup": [1.5]}), out / "cells.csv")
    build.copy_method(out)
    for name in ("cells.csv", "method.md"):  # compile-bench's files, swapped for links to a victim
        (out / name).unlink()
        (out / name).symlink_to(victim)
    display.write_csv(pd.DataFrame({"model": ["=HYPERLINK(1)"], "speedup": [1.5]}), out / "cells.csv")
    build.copy_method(out)
    assert victim.read_text() == "precious\n"
    assert not (out / "cells.csv").is_symlink() and "'=HYPERLINK(1)" in (out / "cells.csv").read_text()
    assert (out / "method.md").read_text() == (build.repo_root() / "docs" / "method.md").read_text()
    assert _mode(out / "cells.csv") == _mode(out / "method.md") == 0o644


def test_a_trace_names_itself_by_its_file_name_only(tmp_path):
    import json

    import torch
    from torch.profiler import profile

    from bench_utils.measure.profiling import write_trace

    with profile() as prof:
        torch.ones(3).add_(1)
    trace = tmp_path / "reports" / "cpu" / "traces" / "vit-bs1-eager-r0.json"
    write_trace(prof, trace)
    text = trace.read_text()
    assert json.loads(text)["traceName"] == "vit-bs1-eager-r0.json"
    assert "/tmp" not in text and str(tmp_path) not in text and _mode(trace) == 0o644


def test_logs_or_traces_that_are_a_link_out_of_the_results_folder_are_refused(tmp_path):
    from bench_utils.config.bench_config import BenchConfig, ConfigError
    from bench_utils.measure.task import CELL, Job, Task, log_path

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    results = tmp_path / "reports" / "cpu" / "results.jsonl"
    results.parent.mkdir(parents=True)
    (results.parent / "logs").symlink_to(elsewhere)
    (results.parent / "traces").symlink_to(elsewhere)
    job = Job(CELL, "vit", 1, "eager")
    with pytest.raises(ConfigError, match="outside"):
        log_path(results, job)
    with pytest.raises(ConfigError, match="outside"):
        Task(BenchConfig(), job, results).trace_path(0)
    assert list(elsewhere.iterdir()) == []


def test_run_refuses_a_profile_folder_that_is_a_link_out_of_the_reports_folder(tmp_path):
    from conftest import one_error_line, run_cli, tiny_params

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "test").symlink_to(elsewhere)
    line = one_error_line(run_cli("run", tiny_params(tmp_path), env={"BENCH_REPORTS_DIR": str(reports)}))
    assert line.startswith(f"error: {reports / 'test' / 'results.jsonl'}: outside {reports}")
    assert list(elsewhere.iterdir()) == []


def test_a_fifo_planted_at_a_lock_a_log_or_the_marker_neither_hangs_nor_crashes(tmp_path):
    """Opening a FIFO waits for its other end: every open here is non-blocking and wants a regular
    file, so a FIFO is one line (the lock), replaced (our log), or not believed (the marker)."""
    os.mkfifo(tmp_path / "r.jsonl.lock")
    with pytest.raises(OSError, match="not a regular file"):
        ResultsWriter(tmp_path / "r.jsonl")
    log = tmp_path / "logs" / "x.log"
    log.parent.mkdir()
    os.mkfifo(log)
    os.close(files.open_fresh(log))
    assert log.is_file()
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / files.MARKER)
    assert not files.written_here(out / "index.html")
    assert files.read_tail(out / files.MARKER, 100) == ""


def test_a_logs_tail_is_read_from_its_end_only(tmp_path):
    from bench_utils.sweep.workers import LOG_TAIL_CHARS, log_tail

    log = tmp_path / "w.log"
    with open(log, "w") as fh:
        fh.write("early line\n" * 2_000_000)  # ~22 MB a runner must not read whole
        fh.write("the last line\n")
    assert log_tail(log).endswith("early line | the last line") and len(log_tail(log)) <= LOG_TAIL_CHARS
    assert files.read_tail(log, 14) == "the last line\n"


def test_a_folder_where_an_output_goes_is_refused_before_the_sweep_naming_it(tmp_path):
    """An `index.html` that is a folder (its name listed by the marker) failed only after the sweep,
    naming a temporary file ("IsADirectoryError: .index.html.x1y2 -> index.html"). It is refused first,
    in one line naming the folder, nothing measured."""
    from bench_utils.files import MARKER, NotOursError, check_ours
    from conftest import one_error_line, run_cli, tiny_params

    out = tmp_path / "out"
    (out / "index.html").mkdir(parents=True)
    (out / MARKER).write_text("index.html\n")  # written by an earlier report, then replaced by a folder
    with pytest.raises(NotOursError, match="a folder where compile-bench writes a file"):
        check_ours(out / "index.html")
    line = one_error_line(run_cli("report", tiny_params(tmp_path), "--out", out))
    assert line == (f"error: {out / 'index.html'}: a folder where compile-bench writes a file, so it is left alone: "
                    "move it, or choose another folder")
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "index.html"]
