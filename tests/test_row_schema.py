"""Rows read back from a results file are checked against the row schema: a row that lies is skipped
with the one-line warning, never turned into a verdict; rows of other settings or labels stay apart."""

import json

import pytest

from bench_utils.results.aggregate import to_dataframe
from bench_utils.results.row_schema import field_types, row_problem
from bench_utils.results.rows import BenchResult, read_results
from conftest import make_row

TYPES = field_types(BenchResult)


def _values(**changes) -> dict:
    row = make_row(configuration="default", ms=2.0, accuracy_ok=True, max_abs_diff=1e-6, compile_s=3.0)
    return json.loads(row.to_json()) | changes


@pytest.mark.parametrize("changes, problem", [
    ({"samples_s": [float("nan")] * 10}, "is not a list of finite numbers"),
    ({"samples_s": [float("inf")] * 10}, "is not a list of finite numbers"),
    ({"samples_s": [-0.002] * 10}, "samples_s: a value outside"),
    ({"samples_s": [0.0] * 10}, "samples_s: a value outside"),
    ({"samples_s": [1e308] * 10}, "samples_s: a value outside"),
    ({"samples_s": [1e-12] * 10}, "samples_s: a value outside"),
    ({"samples_s": [0.002, 0.002], "block_lengths": [1, 1]}, "fewer than the row's own iterations (10)"),
    ({"samples_s": {"a": 1}}, "samples_s: "),
    ({"env": ["a list"]}, "env: "),
    ({"env": {"hostname": {"x": 1}}}, "env.hostname: not text"),
    ({"compile_s": "3.0"}, "compile_s: '3.0' is not a finite number"),
    ({"accuracy_ok": "false"}, "accuracy_ok: 'false' is not true, false or null"),
    ({"fullgraph": 0}, "fullgraph: 0 is not true or false"),
    ({"batch_size": 0}, "batch_size: below 1"),
    ({"batch_size": 1.5}, "batch_size: 1.5 is not a whole number"),
    ({"configuration": "turbo"}, "configuration: 'turbo' is not a known configuration"),
    ({"max_abs_diff": -5.0}, "max_abs_diff: negative"),
    ({"label": 7}, "label: 7 is not text"),
    # round 4: numbers no measurement gives, shapes no writer writes
    ({"duration_s": 1e308}, "duration_s: 1e+308 is outside 0 .. 2.592e+06"),
    ({"graph_breaks": 10**30}, "graph_breaks: 1e+30 is beyond any measurement"),
    ({"peak_mem_mb": -123.0}, "peak_mem_mb: -123 is outside 0 .."),
    ({"steal_pct": -40.0}, "steal_pct: -40 is outside 0 .. 100"),
    ({"others_cpu_pct": 250.0}, "others_cpu_pct: 250 is outside 0 .. 100"),
    ({"task_agreement": 3.0}, "task_agreement: 3 is outside 0 .. 1"),
    ({"profile_top_ops": [["aten::addmm"]]}, "profile_top_ops: [['aten::addmm']] is not a list of [name, ms per call]"),
    ({"profile_top_ops": [[1, "aten::addmm"]]}, "profile_top_ops: "),
    ({"profile_top_ops": "aten::addmm"}, "profile_top_ops: "),
    ({"env": {"cpu_count": [2]}}, "env.cpu_count: [2] is not a whole number >= 1 or null"),
    ({"env": {"compute_capability": 7.5}}, "env.compute_capability: 7.5 is not \"\" or a version"),
    ({"env": {"compute_capability": "<b>"}}, "env.compute_capability: '<b>' is not"),
    ({"model": "vit\x1b]52;c;aGk=\x07\x1b[2J"}, "model: 'vit\\x1b]52;c;aGk=\\x07\\x1b[2J'... is not text of at most 300"),
    ({"label": "x" * 10_000_000}, "label: 'xxxxxxxx"),
    ({"error": "e" * 100_000}, "error: 'eeee"),
    ({"break_reasons": ["r"] * 20_000}, "break_reasons: more than 10,000 texts"),
])
def test_a_row_that_lies_is_named(changes, problem):
    assert problem in row_problem(_values(**changes), TYPES)


def test_a_believable_row_has_no_problem():
    assert row_problem(_values(), TYPES) == ""
    assert row_problem(json.loads(make_row(status="oom", ms=None).to_json()), TYPES) == ""


def test_bad_rows_are_skipped_with_one_line_naming_the_first(tmp_path):
    path = tmp_path / "results.jsonl"
    good = make_row(ms=2.0).to_json()
    lines = [good, json.dumps(_values(accuracy_ok="false", max_abs_diff=5)),
             json.dumps(_values(samples_s=[1e-12] * 10))]
    path.write_text("\n".join(lines) + "\n")
    with pytest.warns(UserWarning, match=r"skipped 2 unreadable line\(s\): \[2, 3\]; line 2: accuracy_ok: 'false'"):
        loaded = read_results(path)
    assert [row.configuration for row in loaded.rows] == ["eager"]


def test_rows_of_other_settings_are_never_merged_into_a_cell(tmp_path):
    path = tmp_path / "results.jsonl"
    rows = [make_row(ms=2.0, repeat=0), make_row(ms=2.0, repeat=1, settings="other"),
            make_row(ms=2.0, repeat=0, settings="other")]
    path.write_text("".join(row.to_json() + "\n" for row in rows))
    with pytest.warns(UserWarning, match="different settings under one label; their rows are kept apart"):
        loaded = read_results(path)
    assert len(loaded.rows) == 3  # none replaced another: same key, other settings
    frame = to_dataframe(loaded.rows)
    assert sorted(zip(frame["label"], frame["settings"], frame["repeats"])) == [("CPU", "abc", 1), ("CPU", "other", 2)]


def test_an_ok_compiled_row_without_its_compile_time_still_gets_a_verdict():
    from bench_utils.report.verdict import verdict_short
    from conftest import speedup_rows

    assert verdict_short(to_dataframe(speedup_rows("vit", 1, 4.0, 2.0)))[0].startswith("ViT-B/16: compile, 2.00×")


def test_every_field_annotation_has_a_check():
    values = {k: v for k, v in _values().items() if k != "format"}
    assert row_problem(json.loads(BenchResult(**{**values, "status": "crashed", "samples_s": [],
                                                 "block_lengths": []}).to_json()), TYPES) == ""


def test_blocks_and_exit_codes_are_checked_for_what_they_are():
    """block_lengths must split the samples; an exit code may be minus a signal."""
    from bench_utils.results.row_schema import field_types, row_problem
    from bench_utils.results.rows import BenchResult

    types = field_types(BenchResult)
    good = json.loads(make_row(n=4, block_lengths=[2, 2], exit_code=-11).to_json())
    assert row_problem(good, types) == ""
    assert row_problem(good | {"block_lengths": [3, 2]}, types) == "block_lengths: 5 calls in blocks, 4 samples"
    assert row_problem(good | {"block_lengths": [4, 0]}, types).startswith("block_lengths:")
    assert row_problem(good | {"exit_code": "11"}, types).startswith("exit_code:")


def _study_rows():
    """A believable row of each study, every field filled (so every field's check runs)."""
    from bench_utils.config.bench_config import BenchConfig
    from bench_utils.studies.serving import STUDY as SERVING, ServingResult

    cfg = BenchConfig(models=("vit",), serving_batch_sizes=(1, 4))
    serving = ServingResult(**SERVING.identity(cfg, "vit", "static", "cpu"), status="ok", step_ms=[90.0, 12.0],
                            step_compiled=[True, True], compiles=2, compile_total_s=0.1,
                            steady_ms={"1": 2.0, "4": 6.0}, steady_samples_s={"1": [0.002] * 3, "4": [0.006] * 3},
                            env={"hostname": "h"}, duration_s=3.0)
    return (serving,)


@pytest.mark.parametrize("kind, lie, problem", [
    ("cell", {"compile_s": "3.0"}, "compile_s: '3.0' is not a finite number"),
    ("serving", {"step_compiled": ["yes", True]}, "step_compiled: ['yes', True] is not a list of true or false"),
    ("serving", {"steady_ms": ["2.0"]}, "steady_ms: ['2.0'] is not a mapping"),
    ("serving", {"configuration": "turbo"}, "configuration: 'turbo' is not a known configuration"),
])
def test_a_study_row_that_lies_is_skipped_and_named_as_a_cell_row_is(tmp_path, kind, lie, problem):
    from bench_utils.results.rows import read_rows

    good = {"cell": make_row(configuration="default", ms=2.0, compile_s=3.0), "serving": _study_rows()[0]}[kind]
    row_type = type(good)
    assert row_problem(json.loads(good.to_json()), field_types(row_type)) == ""  # every field has its check
    path = tmp_path / "rows.jsonl"
    path.write_text(good.to_json() + "\n" + json.dumps(json.loads(good.to_json()) | lie) + "\n")
    with pytest.warns(UserWarning, match=r"skipped 1 unreadable line\(s\): \[2\]; line 2: ") as caught:
        loaded = read_rows(path, row_type)
    assert problem in str(caught[0].message)
    assert loaded.rows == [good] and loaded.skipped_lines == [2]  # the lying line never replaces the good one


def test_rows_of_another_run_in_one_file_are_refused_in_one_line_naming_both(tmp_path):
    """One results file holds one run: rows of another torch, device, machine or label appended to it
    are neither merged into its cells nor allowed to push its own rows out."""
    from bench_utils.results.runs import MixedRunsError

    env = {"device": "cpu", "device_name": "Fixture CPU", "torch": "2.9", "hostname": "h"}
    h100 = env | {"device": "cuda", "device_name": "NVIDIA H100", "torch": "2.10"}
    for other, named in (({"env": h100, "device": "cuda"}, "cuda (NVIDIA H100), torch 2.10"),
                         ({"env": env | {"torch": "2.10"}}, "torch 2.10"),
                         ({"env": env, "label": "H100 official"}, "label 'H100 official'")):
        path = tmp_path / "results.jsonl"
        rows = [make_row(env=env), make_row(configuration="default", env=env), make_row(repeat=1, **other)]
        path.write_text("".join(row.to_json() + "\n" for row in rows))
        with pytest.raises(MixedRunsError, match=r"results.jsonl: line 3 was measured by another run") as err:
            read_results(path)
        assert named in str(err.value) and "label 'CPU', cpu (Fixture CPU), torch 2.9" in str(err.value)


def test_the_row_of_a_lost_worker_states_no_run_and_fits_any(tmp_path):
    env = {"device": "cpu", "device_name": "Fixture CPU", "torch": "2.9"}
    import dataclasses

    lost = dataclasses.replace(make_row(status="crashed", device="auto"), env={})  # as the runner writes it
    path = tmp_path / "results.jsonl"
    path.write_text(lost.to_json() + "\n" + make_row(configuration="default", env=env).to_json() + "\n")
    assert len(read_results(path).rows) == 2


def test_a_huge_results_file_is_refused_in_one_line_reading_a_bounded_part(tmp_path, monkeypatch):
    from bench_utils.results import rows as rows_module

    path = tmp_path / "results.jsonl"
    line = make_row().to_json() + "\n"
    path.write_text(line * 50)
    monkeypatch.setattr(rows_module, "MAX_FILE_ROWS", 40)
    with pytest.raises(rows_module.ResultsTooLargeError, match=r"more than 40 rows or 256 MB \(line 41\)"):
        read_results(path)
    monkeypatch.setattr(rows_module, "MAX_FILE_ROWS", 100_000)
    monkeypatch.setattr(rows_module, "MAX_FILE_BYTES", len(line) * 10)
    with pytest.raises(rows_module.ResultsTooLargeError, match=r"\(line 11\)"):
        read_results(path)


def test_a_line_too_long_is_skipped_without_being_held_whole(tmp_path, monkeypatch):
    from bench_utils.results import rows as rows_module

    monkeypatch.setattr(rows_module, "MAX_LINE_BYTES", 4096)
    path = tmp_path / "results.jsonl"
    good = make_row().to_json()
    huge = json.loads(make_row(configuration="default").to_json()) | {"label": "x" * 10_000}
    path.write_text(good + "\n" + json.dumps(huge) + "\n" + make_row(repeat=1).to_json() + "\n")
    with pytest.warns(UserWarning, match=r"skipped 1 unreadable line\(s\): \[2\]; line 2: longer than"):
        loaded = read_results(path)
    assert [row.repeat for row in loaded.rows] == [0, 1]


@pytest.mark.parametrize("changes, problem", [
    ({"profile_trace": "../../../etc/passwd"}, "profile_trace: '../../../etc/passwd' is not a file name"),
    ({"profile_top_ops": [["x" * 20_000, 1.0]]}, "profile_top_ops: "),
    ({"repeat": 10**9}, "repeat: 1000000000 is not a round from 0 to 1,000"),
    ({"process_round": -1}, "process_round: -1 is not a round"),
    ({"started_at": "not a date"}, "started_at: 'not a date' is not an ISO 8601 time"),
    ({"samples_s": [], "block_lengths": []}, "samples_s: 0 samples, fewer than the row's own iterations"),
])
def test_names_a_page_or_a_loop_uses_are_bounded(changes, problem):
    assert problem in row_problem(_values(**changes), TYPES)


def test_a_line_nested_too_deep_for_the_parser_is_skipped(tmp_path):
    path = tmp_path / "results.jsonl"
    deep = json.dumps(_values())[:-1] + ', "extra": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path.write_text(make_row().to_json() + "\n" + deep + "\n")
    with pytest.warns(UserWarning, match=r"skipped 1 unreadable line\(s\): \[2\]"):
        assert len(read_results(path).rows) == 1
