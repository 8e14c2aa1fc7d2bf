import json
import math
import multiprocessing
from pathlib import Path

import numpy as np
import pytest
from conftest import make_row as fixture_row

from bench_utils.results.aggregate import load_dataframe, to_dataframe
from bench_utils.results.rows import read_results
from bench_utils.results.writer import ResultsLockedError, ResultsWriter

ENV = {"device_name": "Test CPU", "torch": "2.x", "hostname": "h"}


def make_row(model="vit", batch_size=1, configuration="eager", status="ok", **extra):
    return fixture_row(model=model, batch_size=batch_size, configuration=configuration, status=status, label="CPU",
                       env=ENV, **extra)


def test_rows_round_trip_and_later_row_of_a_cell_wins(tmp_path):
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(make_row(configuration="eager"))
        writer.append(make_row(configuration="default", status="error", error="boom"))
        writer.append(make_row(configuration="default", ms=1.5))  # retried cell
        writer.append(make_row(configuration="eager", repeat=1, ms=2.5))  # another process of a cell: kept
    loaded = read_results(path)
    assert loaded.skipped_lines == []
    assert [(r.configuration, r.repeat, r.status, r.latency_ms_median) for r in loaded.rows] == [
        ("eager", 0, "ok", 2.0), ("default", 0, "ok", 1.5), ("eager", 1, "ok", 2.5)]
    assert loaded.rows[0] == make_row(configuration="eager")


def test_truncated_last_line_is_skipped_and_reported_then_repaired(tmp_path):
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(make_row(batch_size=1))
    path.write_text(path.read_text() + make_row(batch_size=2).to_json()[:40])  # killed mid-write
    with pytest.warns(UserWarning, match="skipped 1 unreadable line"):
        loaded = read_results(path)
    assert [r.batch_size for r in loaded.rows] == [1] and loaded.skipped_lines == [2]
    with ResultsWriter(path) as writer:  # the next run starts on a fresh line
        writer.append(make_row(batch_size=4))
    with pytest.warns(UserWarning):
        assert [r.batch_size for r in read_results(path).rows] == [1, 4]


def test_garbage_and_unknown_status_lines_do_not_crash_loading(tmp_path):
    path = tmp_path / "r.jsonl"
    good = make_row().to_json()
    bad_status = json.dumps({**json.loads(good), "status": "weird"})
    no_repeat = json.dumps({k: v for k, v in json.loads(good).items() if k != "repeat"} | {"batch_size": 4})
    stray = json.dumps({"foo": 1})  # JSON, but no row at all: a skipped line, not a file of another version
    path.write_text("\n".join([good, "{not json", "[1, 2]", bad_status, "\x00\x01", no_repeat, stray]) + "\n")
    with pytest.warns(UserWarning, match="skipped 6 unreadable"):
        loaded = read_results(path)
    assert loaded.skipped_lines == [2, 3, 4, 5, 6, 7]  # a row without its repeat is not one of ours either
    assert [(r.batch_size, r.repeat) for r in loaded.rows] == [(1, 0)]


@pytest.mark.parametrize("written, words", [(None, "an older"), (1, "an older"), (99, "a newer")])
def test_a_file_written_by_another_version_is_refused_in_one_line(tmp_path, written, words):
    from bench_utils.results.rows import OtherFormatError

    path = tmp_path / "r.jsonl"
    values = json.loads(make_row().to_json())
    if written is None:
        del values["format"]  # files from before rows said their format
    else:
        values["format"] = written
    path.write_text(make_row(batch_size=2).to_json() + "\n" + json.dumps(values) + "\n")
    with pytest.raises(OtherFormatError) as refused:
        read_results(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: written by {words} compile-bench (line 2: results format ")
    assert message.endswith("); measure again into a new results file") and "\n" not in message


def _hold_lock(path, ready, release):
    with ResultsWriter(path):
        ready.set()
        release.wait(10)


def test_second_writer_is_refused_while_first_holds_the_file(tmp_path):
    path = tmp_path / "r.jsonl"
    ready, release = multiprocessing.Event(), multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_lock, args=(path, ready, release))
    holder.start()
    try:
        assert ready.wait(10)
        with pytest.raises(ResultsLockedError, match="being written by another run"):
            ResultsWriter(path)
    finally:
        release.set()
        holder.join()
    ResultsWriter(path).close()  # free again once the first writer is gone


def test_dataframe_has_one_row_per_cell_with_env_columns(tmp_path):
    rows = [make_row(batch_size=b, configuration=m) for b in (1, 4) for m in ("eager", "default")]
    frame = to_dataframe(rows)
    assert frame.shape[0] == 4
    assert {"latency_ms_median", "compile_s", "peak_mem_mb", "hardware", "torch"} <= set(frame.columns)
    assert "samples_s" not in frame.columns and "env" not in frame.columns
    assert frame["hardware"].unique().tolist() == ["Test CPU"]
    assert to_dataframe(rows, with_samples=True)["samples_s"].iloc[0] == [rows[0].samples_s]  # one list a process
    assert frame["repeats"].tolist() == [1] * 4 and frame["latency_ms_median"].tolist() == [2.0] * 4
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path) as writer:
        for row in rows:
            writer.append(row)
    assert load_dataframe(path).equals(frame)


def test_repeats_of_a_cell_combine_into_one_row_paired_with_its_eager_cell():
    rows = [make_row(configuration="eager", ms=2.0, repeat=0), make_row(configuration="default", ms=1.0, repeat=0),
            make_row(configuration="eager", ms=2.2, repeat=1), make_row(configuration="default", ms=1.1, repeat=1)]
    frame = to_dataframe(rows, with_samples=True)
    assert frame["mode"].tolist() == ["eager", "default"] and frame["repeats"].tolist() == [2, 2]
    assert frame["repeats_ok"].tolist() == [2, 2] and frame["between_process"].tolist() == [True, True]
    eager, compiled = frame.iloc[0], frame.iloc[1]
    assert eager.samples_s == [rows[0].samples_s, rows[2].samples_s]  # each process's samples, in repeat order
    pooled = np.concatenate(eager.samples_s) * 1000
    assert eager.latency_ms_mean == pytest.approx(pooled.mean()) and eager.latency_ms_mean == pytest.approx(2.1)
    # p10 as the median: each process's own, their geometric mean (pooled, a long process outvotes a short one)
    own = [np.percentile(np.asarray(r.samples_s) * 1000, 10) for r in (rows[0], rows[2])]
    assert eager.latency_ms_p10 == pytest.approx(math.sqrt(own[0] * own[1]))
    assert eager.latency_ms_median == pytest.approx((2.0 * 2.2) ** 0.5)  # geometric mean of the process medians
    assert eager.process_spread == pytest.approx(0.1)
    assert eager.latency_ms_ci95_low < eager.latency_ms_median < eager.latency_ms_ci95_high
    assert compiled.eager_ms_median == eager.latency_ms_median  # one eager number per cell, exactly
    assert compiled.eager_ms_mean == eager.latency_ms_mean
    assert compiled.speedup == pytest.approx(eager.latency_ms_median / compiled.latency_ms_median)
    assert compiled.speedup == pytest.approx(2.0)
    assert compiled.improvement_pct == pytest.approx(50.0)
    assert np.isnan(eager.speedup) and np.isnan(eager.improvement_pct)  # nothing made up for the baseline


def test_failed_processes_are_left_out_of_the_numbers_and_counted():
    rows = [make_row(ms=2.0, repeat=0), make_row(status="crashed", repeat=1), make_row(ms=3.0, repeat=2)]
    cell = to_dataframe(rows).iloc[0]
    assert (cell.status, cell.repeats, cell.repeats_ok) == ("ok", 3, 2)
    assert (cell.failed_processes, cell.error) == (1, "crashed: fixture")  # the count; the last failure's text
    assert cell.latency_ms_median == pytest.approx((2.0 * 3.0) ** 0.5)
    failed = to_dataframe([make_row(status="oom", repeat=r) for r in range(2)]).iloc[0]
    assert (failed.status, failed.repeats_ok) == ("oom", 0) and failed.latency_ms_median is None


def test_missing_results_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="results file not found"):
        read_results(tmp_path / "nope.jsonl")


def test_an_ok_row_without_samples_counts_as_a_failed_process():
    from conftest import make_row as row

    only = to_dataframe([row(configuration="eager", samples_s=[])])
    assert only.loc[0, "status"] == "error" and "status ok but no samples" in only.loc[0, "error"]
    mixed = to_dataframe([row(configuration="eager", samples_s=[]), row(configuration="eager", repeat=1)])
    assert mixed.loc[0, "status"] == "ok" and mixed.loc[0, "repeats_ok"] == 1
    assert mixed.loc[0, "failed_processes"] == 1 and mixed.loc[0, "error"] == "the row has status ok but no samples"


FULL_DISK_CHILD = """
import resource, signal, sys
sys.path.insert(0, {tests!r})
from conftest import make_row
from bench_utils.results.writer import ResultsWriter
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of a kill
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, resource.RLIM_INFINITY))
with ResultsWriter({path!r}) as writer:
    for repeat in range(100):
        try:
            writer.append(make_row(repeat=repeat))
        except OSError as err:
            print(err.errno, repeat, err.filename == {path!r})  # the error names the file ("error: PATH: ...")
            break
"""


def test_a_full_disk_leaves_whole_rows_only(tmp_path):
    """A write that runs out of room (here: a file-size limit, EFBIG, standing in for ENOSPC) takes
    its half row back: the file holds the rows written before, each whole, and the next append starts
    on a line of its own."""
    import errno
    import subprocess
    import sys

    path = tmp_path / "results.jsonl"
    row_bytes = len((fixture_row().to_json() + "\n").encode())  # the child's rows: conftest's make_row
    script = FULL_DISK_CHILD.format(tests=str(Path(__file__).parent), limit=int(row_bytes * 3.5), path=str(path))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(errno.EFBIG), "3", "True"]  # the fourth row did not fit
    assert path.read_bytes().endswith(b"\n") and path.stat().st_size == 3 * row_bytes
    loaded = read_results(path)
    assert [row.repeat for row in loaded.rows] == [0, 1, 2] and loaded.skipped_lines == []


# --- rounds measured in blocks: block i of eager and compiled paired, the rounds averaged -------------

def blocked_row(mode: str, repeat: int, block_ms: tuple, **extra):
    """One process of vit bs1 whose blocks of five calls have exactly the medians `block_ms`."""
    from conftest import fixture_samples

    samples = [s for ms in block_ms for s in fixture_samples(ms, 5)]
    return fixture_row(configuration=mode, ms=block_ms[0], repeat=repeat, samples_s=samples,
                       block_lengths=[5] * len(block_ms), **extra)


def test_rounds_pair_their_blocks_and_the_interval_is_over_rounds():
    from bench_utils.results.aggregate import cells
    from bench_utils.results.stats import relative_halfwidth, speedup_over_rounds

    # round 2 ran in a slower stretch for both modes: pairing cancels it
    eager = {0: (2.0, 2.2), 1: (2.0, 2.0), 2: (3.0, 3.0)}
    compiled = {0: (1.0, 1.0), 1: (1.0, 1.1), 2: (1.5, 1.5)}
    rows = [blocked_row(m, r, ms[r]) for r in range(3) for m, ms in (("eager", eager), ("default", compiled))]
    record = next(r for r in cells(rows) if r["mode"] == "default")
    logs = [np.log(np.array(eager[r]) / np.array(compiled[r])) for r in range(3)]
    expected = speedup_over_rounds(logs)
    assert record["paired_rounds"] == 3 and record["outlying_rounds"] == []
    means = [np.mean(x) for x in logs]  # log 2.0976, log 1.9069, log 2
    assert record["speedup"] == pytest.approx(np.exp(np.mean(means))) == pytest.approx(expected.speedup)
    assert (record["speedup_ci95_low"], record["speedup_ci95_high"]) == (
        pytest.approx(expected.ci95_low), pytest.approx(expected.ci95_high))
    assert record["speedup_halfwidth"] == pytest.approx(relative_halfwidth(expected))
    assert record["significant"] and not record["disturbed"]
    frame = to_dataframe(rows).set_index("mode")
    assert frame.loc["default", "speedup"] == pytest.approx(expected.speedup)
    assert frame.loc["default", "eager_ms_median"] == frame.loc["eager", "latency_ms_median"]


def test_only_rounds_both_modes_measured_are_paired():
    from bench_utils.results.aggregate import cells

    rows = [blocked_row("eager", r, (2.0, 2.0)) for r in range(3)] + [
        blocked_row("default", 0, (1.0, 1.0)), blocked_row("default", 1, (1.0, 1.25)),
        fixture_row(configuration="default", status="crashed", repeat=2)]
    record = next(r for r in cells(rows) if r["mode"] == "default")
    assert record["paired_rounds"] == 2 and record["repeats_ok"] == 2
    assert record["speedup"] == pytest.approx(np.exp((np.log(2) + np.log(2) + np.log(2) + np.log(1.6)) / 4))


def test_a_round_that_disagrees_with_the_others_marks_the_cell_disturbed():
    from bench_utils.results.aggregate import cells

    compiled_ms = (1.0, 1.01, 0.99, 1.0, 1.6)  # round 4's speedup is far from the others'
    rows = [blocked_row(m, r, (2.0, 2.0) if m == "eager" else (ms, ms))
            for r, ms in enumerate(compiled_ms) for m in ("eager", "default")]
    record = next(r for r in cells(rows) if r["mode"] == "default")
    assert record["outlying_rounds"] == [4] and record["disturbed"]
    from bench_utils.report.notes import disturbance_words

    assert disturbance_words(record) == "the 5th round disagreed with the others more than their spread explains"
    from bench_utils.report.notes import _rounds_words, disturbance_caveat

    assert disturbance_caveat(record).startswith("unsteady machine: the 5th round")  # no CPU taken: not "busy"
    assert disturbance_caveat(record | {"busy_pct": 30.0}).startswith("busy machine: other processes used 30%")
    assert [_rounds_words(r) for r in ([0], [1, 10], [2, 11, 21])] == [
        "the 1st round", "the 2nd and 11th rounds", "the 3rd, 12th and 22nd rounds"]


def test_the_warm_compile_of_a_cell_is_its_later_rounds_compile():
    rows = [blocked_row("eager", r, (2.0,)) for r in range(4)] + [
        blocked_row("default", r, (1.0,), compile_s=s) for r, s in enumerate((30.0, 5.0, 7.0, 6.0))]
    compiled = to_dataframe(rows).set_index("mode").loc["default"]
    assert compiled.compile_s == 30.0  # round 0's: from the cell's emptied cache
    assert compiled.compile_warm_s == 6.0  # the median of the later rounds', each a new process with the cache
    single = to_dataframe(rows[:1] + rows[4:5]).set_index("mode").loc["default"]
    assert single.compile_s == 30.0 and single.compile_warm_s is None  # one round: no warm compile measured


# --- a study's rows: the same row family, read by the same reader -------------------------------------

def test_a_study_file_reads_like_a_results_file_and_a_missing_one_is_no_rows(tmp_path):
    from bench_utils.config.bench_config import BenchConfig
    from bench_utils.results.rows import read_rows
    from bench_utils.results.runs import MixedRunsError
    from bench_utils.studies.serving import STUDY as SERVING, ServingResult

    cfg = BenchConfig(models=("vit",), serving_batch_sizes=(1, 4))
    path = SERVING.path(tmp_path / "results.jsonl")
    assert read_rows(path, ServingResult).rows == []  # no study asked for
    first = ServingResult(**SERVING.identity(cfg, "vit", "auto", "cpu"), status="crashed", error="lost")
    again = ServingResult(**SERVING.identity(cfg, "vit", "auto", "cpu"), status="ok", compiles=2)
    other = ServingResult(**SERVING.identity(cfg, "vit", "static", "cpu"), status="ok")
    elsewhere = ServingResult(**SERVING.identity(BenchConfig(models=("vit",), serving_batch_sizes=(1, 4),
                                                           label="GPU"), "vit", "auto", "cpu"), status="ok")
    with ResultsWriter(path) as writer:
        for row in (first, other, again):
            writer.append(row)
        with pytest.raises(MixedRunsError, match="holds rows of label 'This machine', cpu; this row is of another "
                                                 r"run \(label 'GPU', cpu\)"):
            writer.append(elsewhere)  # one file, one run: another label's row is refused, nothing written
    loaded = read_rows(path, ServingResult)
    assert loaded.rows == [other, again] and loaded.skipped_lines == []  # the re-run replaces the crash
    older = {k: v for k, v in json.loads(other.to_json()).items() if k != "steady_others_cpu_pct"}
    path.write_text(json.dumps(older) + "\n")  # a row from before a field existed still reads
    assert read_rows(path, ServingResult).rows == [other]


@pytest.mark.parametrize("kind", ["cell", "serving"])
def test_the_row_of_a_lost_process_is_a_proper_row_of_its_type(tmp_path, kind):
    import datetime as dt

    from bench_utils.config.bench_config import BenchConfig
    from bench_utils.results.rows import BenchResult, cell_fields, read_rows
    from bench_utils.studies.serving import STUDY as SERVING, ServingResult

    cfg = BenchConfig(models=("vit",), serving_batch_sizes=(1, 4))
    row_type, identity = {"cell": (BenchResult, cell_fields(cfg, "vit", 1, "default", "cpu", 2)),
                          "serving": (ServingResult, SERVING.identity(cfg, "vit", "auto", "cpu"))}[kind]
    row = row_type.failed(identity, "timeout", "no reply in 300 s", 300.0)
    assert type(row) is row_type and (row.status, row.error, row.duration_s) == ("timeout", "no reply in 300 s", 300.0)
    assert row == row_type(**identity, status="timeout", error="no reply in 300 s", duration_s=300.0,
                           started_at=row.started_at)  # its identity whole, every measured field empty
    started = dt.datetime.fromisoformat(row.started_at)
    assert abs((dt.datetime.now(dt.timezone.utc) - started).total_seconds() - 300.0) < 5  # it started 300 s ago
    path = tmp_path / "rows.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(row)
    assert read_rows(path, row_type).rows == [row]  # believable to the reader: never skipped
    with pytest.raises(ValueError, match="status: 'ok' is not allowed; allowed: oom, error, timeout, crashed"):
        row_type.failed(identity, "ok", "", 1.0)


def test_a_rows_texts_are_written_without_local_paths(tmp_path):
    """Errors, notes and graph-break reasons may quote paths of this machine (a traceback, a log tail,
    a model file): the results file, published beside its page, keeps them relative."""
    from pathlib import Path

    folder = tmp_path / "reports" / "cpu"
    home = Path.home()
    row = make_row(status="crashed", error=f"worker process killed; log: {folder}/logs/vit-bs1-eager-r0.log "
                                           f"and {home}/.cache/x", weights_note=f"{tmp_path}/reports/other/w")
    compiled = make_row(configuration="default", break_reasons=[f"call_function in {home}/models/mine.py:12", "plain"])
    with ResultsWriter(folder / "results.jsonl") as writer:
        writer.append(row)
        writer.append(compiled)
    text = (folder / "results.jsonl").read_text()
    assert str(tmp_path) not in text and str(home) + "/" not in text
    read = read_results(folder / "results.jsonl").rows
    assert read[0].error == "worker process killed; log: logs/vit-bs1-eager-r0.log and ~/.cache/x"
    assert read[0].weights_note == "../other/w" and read[0].label == row.label
    assert read[1].break_reasons == ["call_function in ~/models/mine.py:12", "plain"]


@pytest.mark.parametrize("field, value", [("max_abs_diff", math.nan), ("latency_ms_median", math.inf),
                                          ("peak_mem_mb", -math.inf), ("samples_s", [0.002, math.nan])])
def test_a_measurement_that_is_not_finite_is_kept_as_a_failed_row_that_says_so(tmp_path, field, value):
    """A processor with `image_std: 0` made max_abs_diff NaN: the row was written, then refused when read
    ("not measured"), so every run measured the cell again and the NaN was never reported. Now the row
    is kept as a failure naming the field, its value left out, and a rerun does not measure it again."""
    from bench_utils.sweep.jobs import done_keys

    path = tmp_path / "r.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(fixture_row(configuration="default", **({"max_abs_diff": 1e-6} | {field: value})))
        writer.append(fixture_row(configuration="eager"))
    loaded = read_results(path)
    assert loaded.skipped_lines == []
    failed, eager = loaded.rows
    assert (failed.status, eager.status) == ("error", "ok")
    assert failed.error.startswith(f"a measurement that is not a finite number: {field} {value if field != 'samples_s' else math.nan}")
    assert getattr(failed, field) in (None, []) and "\n" not in failed.error
    assert failed.key in done_keys(loaded.rows) and failed.key not in done_keys(loaded.rows, retry_failed=True)
    timeout = fixture_row(configuration="default", status="timeout", latency_ms_median=math.nan)
    assert timeout.finite().status == "timeout" and timeout.finite().error == "timeout: fixture; and not finite: latency_ms_median nan"


def test_a_results_file_saved_with_a_byte_order_mark_keeps_its_first_row(tmp_path):
    """A file an editor saved with a UTF-8 byte-order mark was refused as "not a results file (line 1 is
    not a results row)": the mark is read past, its first row kept, and a run appends to it."""
    import codecs

    from bench_utils.results.writer import check_is_results_file

    path = tmp_path / "r.jsonl"
    path.write_bytes(codecs.BOM_UTF8 + (fixture_row(repeat=0).to_json() + "\n").encode())
    check_is_results_file(path)
    with ResultsWriter(path) as writer:
        writer.append(fixture_row(repeat=1))
    loaded = read_results(path)
    assert [row.repeat for row in loaded.rows] == [0, 1] and loaded.skipped_lines == []
