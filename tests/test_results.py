import json
import multiprocessing

import pytest

from bench_utils.results import (BenchResult, ResultsLockedError, ResultsWriter, load_dataframe,
                                 read_results, to_dataframe)


def make_row(model="vit", batch_size=1, mode="eager", status="ok", **extra):
    base = dict(label="CPU", model=model, checkpoint="google/vit-base-patch16-224",
                task="image-classification", size="tiny", batch_size=batch_size, mode=mode,
                fullgraph=False, dtype="float32", device="cpu", settings="abc", status=status,
                latency_ms_median=2.0 if status == "ok" else None, samples_s=[0.002, 0.002],
                env={"device_name": "Test CPU", "torch": "2.x", "hostname": "h"})
    base.update(extra)
    return BenchResult(**base)


def test_rows_round_trip_and_later_row_of_a_cell_wins(tmp_path):
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(make_row(mode="eager"))
        writer.append(make_row(mode="default", status="error", error="boom"))
        writer.append(make_row(mode="default", latency_ms_median=1.5))  # retried cell
    loaded = read_results(path)
    assert loaded.skipped_lines == []
    assert [(r.mode, r.status, r.latency_ms_median) for r in loaded.rows] == [
        ("eager", "ok", 2.0), ("default", "ok", 1.5)]
    assert loaded.rows[0] == make_row(mode="eager")


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
    path.write_text("\n".join([good, "{not json", "[1, 2]", bad_status, "\x00\x01"]) + "\n")
    with pytest.warns(UserWarning):
        loaded = read_results(path)
    assert len(loaded.rows) == 1 and loaded.skipped_lines == [2, 3, 4, 5]


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
    rows = [make_row(batch_size=b, mode=m) for b in (1, 4) for m in ("eager", "default")]
    frame = to_dataframe(rows)
    assert frame.shape[0] == 4
    assert {"latency_ms_median", "compile_s", "peak_mem_mb", "hardware", "torch"} <= set(frame.columns)
    assert "samples_s" not in frame.columns and "env" not in frame.columns
    assert frame["hardware"].unique().tolist() == ["Test CPU"]
    assert to_dataframe(rows, with_samples=True)["samples_s"].iloc[0] == [0.002, 0.002]
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path) as writer:
        for row in rows:
            writer.append(row)
    assert load_dataframe(path).equals(frame)


def test_missing_results_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="results file not found"):
        read_results(tmp_path / "nope.jsonl")
