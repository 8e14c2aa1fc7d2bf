"""A cell from its process rows (aggregate.py): the declared record combined round by round, and the
codes of what a compile mode did not do (in words through report/notes.py). Rows are made with the
test row builder; the rules read the row fields a CUDA process writes."""

import math

import pytest

from bench_utils.report.notes import compile_note_words
from bench_utils.results.aggregate import COMBINE, bf16_compiles, cells, kernels_outside_graphs, to_dataframe
from bench_utils.results.record import COLUMNS, COMBINES, RECORD
from conftest import COMPILED_FIXTURE, FIXTURE_ENV, make_row

GPU_ENV = {"device": "cuda", "device_name": "NVIDIA T4", "torch": "2.fixture", "transformers": "5.fixture",
           "compute_capability": "7.5"}


def _note(mode: str = "reduce-overhead", device: str = "cuda", **fields) -> str:
    row = make_row("vit", 1, mode, 1.0, device=device, env=GPU_ENV, **(COMPILED_FIXTURE | fields))
    (record,) = cells([row])
    assert all(isinstance(code, str) and " " not in code for code in record["compile_notes"])  # codes, not words
    return compile_note_words(record)


def test_full_cuda_graph_coverage_leaves_no_note():
    # 200 kernels per call, 2 replays each copying its inputs (one launch), nothing else launched
    assert _note(cudagraphs_recorded=2, cudagraph_skips=0, profile_kernels_per_call=200.0,
                 profile_launches_per_call=2.0, profile_graph_replays_per_call=2.0) == ""


def test_kernels_launched_outside_graph_replays_are_partial_coverage():
    note = _note(cudagraphs_recorded=1, cudagraph_skips=0, profile_kernels_per_call=200.0,
                 profile_launches_per_call=61.0, profile_graph_replays_per_call=1.0)
    assert note == "partial CUDA-graph coverage: 60 of 200 kernels per call launched outside CUDA graphs"
    assert _note(cudagraphs_recorded=1, cudagraph_skips=0, profile_kernels_per_call=200.0,
                 profile_launches_per_call=0.0, profile_graph_replays_per_call=0.0) == (
        "no CUDA-graph replay in the profiled calls")


def test_recorded_nothing_or_skipped_is_said_and_default_mode_gets_no_graph_note():
    assert _note(cudagraphs_recorded=0) == "ran without CUDA graphs (none recorded)"
    assert _note(cudagraphs_recorded=1, cudagraph_skips=2) == "2 graph(s) skipped CUDA graphs"
    assert _note("default", cudagraphs_recorded=0, profile_kernels_per_call=200.0, profile_launches_per_call=200.0,
                 profile_graph_replays_per_call=0.0) == ""
    assert _note(device="cpu", cudagraphs_recorded=None) == ""  # CPU: no CUDA graphs to expect


def test_a_compile_that_made_no_graph_ran_eager_and_bfloat16_below_sm80_says_why():
    assert _note("default", device="cpu", graph_count=0) == "compiled no graph, ran eager"
    assert _note("default+bf16-autocast", graph_count=0) == (
        "compiled no graph, ran eager; Inductor does not compile bfloat16 below compute capability 8.0 "
        "(this GPU: 7.5)")
    assert _note("max-autotune+bf16-autocast", graph_count=0, cudagraphs_recorded=0).startswith(
        "compiled no graph, ran eager; Inductor does not compile bfloat16")
    assert _note("default+bf16-autocast", graph_count=1) == ""


@pytest.mark.parametrize("dtype, device, capability, compiles", [
    ("bfloat16", "cuda", "7.5", False), ("bfloat16", "cuda", "7.0", False), ("bfloat16", "cuda", "8.0", True),
    ("bfloat16", "cuda", "9.0", True), ("bfloat16", "cpu", "", True), ("float16", "cuda", "7.5", True),
    ("bfloat16", "cuda", "", True)])
def test_bf16_compiles_from_compute_capability_8(dtype, device, capability, compiles):
    assert bf16_compiles(dtype, device, capability) is compiles


def test_kernels_outside_graphs_needs_a_cuda_profile():
    assert kernels_outside_graphs({"profile_launches_per_call": 5.0, "profile_graph_replays_per_call": 2.0}) == 3.0
    assert kernels_outside_graphs({"profile_launches_per_call": 1.0, "profile_graph_replays_per_call": 2.0}) == 0.0
    assert kernels_outside_graphs({"profile_launches_per_call": None, "profile_graph_replays_per_call": None}) is None


def test_every_declared_column_is_in_the_frame_and_combines_by_its_rule():
    assert set(COMBINE) | {"computed"} == set(COMBINES)
    rows = [make_row("vit", 1, "default", 2.0, repeat=r, peak_mem_mb=mem, break_reasons=reasons, accuracy_ok=ok,
                     task_agreement=agreement, duration_s=10.0, compile_s=compile_s, **{"env": {
                         "device_name": "CPU", "torch": "2", "hostname": host}})
            for r, (mem, reasons, ok, agreement, compile_s, host) in enumerate(
                [(500.0, ["b"], True, 1.0, 30.0, "h1"), (700.0, ["a", "b"], True, 0.9, 5.0, "h2"),
                 (600.0, [], None, None, None, "h1")])]
    frame = to_dataframe(rows)
    assert list(frame.columns) == [c for c in COLUMNS if c != "samples_s"]
    cell = frame.iloc[0]
    assert cell["peak_mem_mb"] == 700.0 and cell["break_reasons"] == ["a", "b"]  # largest; union
    assert bool(cell["accuracy_ok"]) and cell["task_agreement"] == 0.9  # all of those checked; least
    assert cell["duration_s"] == 30.0 and cell["repeats"] == 3  # sum over every process
    assert (cell["compile_s"], cell["compile_warm_s"]) == (30.0, 5.0)  # round 0's; the later ones' median
    assert cell["hostname"] == "h1, h2" and cell["hardware"] == "CPU"


def test_an_eager_cell_carries_its_own_numbers_and_no_made_up_speedup():
    frame = to_dataframe([make_row("vit", 1, "eager", 2.0), make_row("vit", 1, "default", 1.0)])
    eager, compiled = frame.iloc[0], frame.iloc[1]
    assert math.isnan(eager["speedup"]) and math.isnan(eager["speedup_ci95_low"]) and not eager["significant"]
    assert eager["eager_ms_median"] == eager["latency_ms_median"] == 2.0
    assert compiled["speedup"] == pytest.approx(2.0)


def test_a_failed_process_is_counted_and_the_cell_keeps_its_other_rounds():
    rows = [make_row("vit", 1, "eager", 2.0, repeat=0), make_row("vit", 1, "eager", status="oom", repeat=1),
            make_row("vit", 1, "eager", 2.0, repeat=2, exit_code=-11)]
    (record,) = cells(rows)
    assert (record["status"], record["failed_processes"], record["error"]) == ("ok", 1, "oom: fixture")
    assert (record["exited_processes"], record["exit_codes"]) == (1, [-11])
    (failed,) = cells([make_row("vit", 1, "eager", status="timeout")])
    assert (failed["status"], failed["error"]) == ("timeout", "timeout: fixture")


def test_each_record_column_is_declared_once_with_a_meaning():
    assert len({c.name for c in RECORD}) == len(RECORD)
    assert all(c.meaning for c in RECORD)


def test_a_cell_holds_its_reserved_peak_on_cuda_and_its_resident_peak_on_cpu():
    gpu = make_row("vit", 1, "reduce-overhead", 1.0, device="cuda", env=GPU_ENV, peak_mem_mb=60.0,
                   peak_reserved_mb=420.0)
    (cuda,) = cells([gpu])
    (cpu,) = cells([make_row("vit", 1, "eager", 1.0, peak_mem_mb=900.0)])
    assert (cuda["held_mem_mb"], cpu["held_mem_mb"]) == (420.0, 900.0)


def test_a_dropped_configurations_eager_p90_is_over_the_rounds_beside_its_median():
    """Dropped after round 0: its row's eager median and eager p90 are both round 0's, not every round's."""
    from bench_utils.report.tables import main_table

    rows = [make_row("vit", 1, "eager", 10.0, repeat=0), make_row("vit", 1, "eager", 20.0, repeat=1),
            make_row("vit", 1, "eager", 20.0, repeat=2), make_row("vit", 1, "default", 5.0, repeat=0)]
    df = to_dataframe(rows).set_index("configuration")
    alone = to_dataframe(rows[:1]).set_index("configuration")
    assert df.loc["default", "eager_ms_median"] == pytest.approx(10.0, rel=0.05)
    assert df.loc["default", "eager_ms_p90"] == pytest.approx(alone.loc["eager", "latency_ms_p90"])
    assert main_table(df.reset_index()).iloc[0]["eager_ms_p90"] == pytest.approx(alone.loc["eager", "latency_ms_p90"])


def test_a_dropped_configurations_eager_memory_is_over_the_rounds_beside_its_median():
    """Eager's peak memory beside a configuration dropped after round 0 is round 0's, as its median is:
    the later rounds' larger peak belongs to rounds the configuration did not run."""
    from bench_utils.report.tables import main_table

    rows = [make_row("vit", 1, "eager", 10.0, repeat=0, peak_mem_mb=500.0),
            make_row("vit", 1, "eager", 20.0, repeat=1, peak_mem_mb=900.0),
            make_row("vit", 1, "default", 5.0, repeat=0, peak_mem_mb=700.0),
            make_row("vit", 1, "default+freezing", 6.0, repeat=0, peak_mem_mb=650.0),
            make_row("vit", 1, "default+freezing", 6.0, repeat=1, peak_mem_mb=660.0)]
    df = to_dataframe(rows).set_index("configuration")
    assert df.loc["eager", "held_mem_mb"] == 900.0  # eager's own cell: every round
    assert df.loc["default", "eager_held_mem_mb"] == 500.0  # beside one round: that round's
    assert df.loc["default+freezing", "eager_held_mem_mb"] == 900.0
    table = main_table(df.reset_index()).set_index("configuration")
    assert table.loc["default", "eager_held_mem_mb"] == 500.0 and table.loc["default", "compiled_peak_mem_mb"] == 700.0


def test_a_profile_measured_in_round_one_reaches_the_cell():
    """The profiler's pass runs in the first round after the selection round (sweep/jobs.profiled): the
    cell takes the first round's profile that has one, not round 0's empty list and trace name."""
    rows = [make_row("vit", 1, "default", 5.0, repeat=0, compile_s=12.0),
            make_row("vit", 1, "default", 5.0, repeat=1, profile_calls=3, profile_top_ops=[["aten::mm", 1.5]],
                     profile_trace="vit-bs1-default-r1.pt.trace.json", profile_ops_per_call=40.0)]
    cell = next(c for c in cells(rows) if c["configuration"] == "default")
    assert cell["profile_top_ops"] == [["aten::mm", 1.5]] and cell["profile_trace"] == "vit-bs1-default-r1.pt.trace.json"
    assert cell["profile_calls"] == 3 and cell["compile_s"] == 12.0  # round 0's compile, round 1's profile


def test_eager_timed_beside_a_configuration_in_its_own_processes_is_what_its_speedup_is_over():
    """eager_in_process: a compiled row carries eager's blocks timed in its own process; its speedup and
    its eager columns are over those, not over eager's worker, whose host ran at another speed (a GPU's
    launch-bound eager: docs/gpu.md). A row without them is paired with eager's worker as before."""
    from conftest import fixture_samples

    rows, beside = [], []
    for repeat in range(3):
        rows.append(make_row("vit", 1, "eager", 30.0, repeat=repeat))  # eager's own worker: a slow host
        own = make_row("vit", 1, "default", 5.0 * (1 + 0.01 * repeat), repeat=repeat,
                       eager_samples_s=fixture_samples(10.0, 10, 0.01), eager_block_lengths=[5, 5])
        rows.append(own)
        beside.append(own.eager_samples_s)
        rows.append(make_row("vit", 1, "default+freezing", 5.0, repeat=repeat))  # paired with eager's worker
    records = {record["configuration"]: record for record in cells(rows)}
    paired = records["default"]
    assert paired["eager_beside"] and not records["default+freezing"]["eager_beside"]
    assert paired["speedup"] == pytest.approx(2.0, rel=0.03)  # 10 ms beside it, not eager's worker's 30
    assert paired["eager_ms_median"] == pytest.approx(10.0, rel=0.02)
    assert paired["speedup_ci95_low"] < paired["speedup"] < paired["speedup_ci95_high"]
    assert records["default+freezing"]["speedup"] == pytest.approx(6.0, rel=0.03)
    assert records["default+freezing"]["eager_ms_median"] == pytest.approx(30.0, rel=0.02)
    assert paired["held_mem_mb"] is not None and paired["eager_held_mem_mb"] == records["eager"]["held_mem_mb"]


def test_a_row_whose_eager_blocks_do_not_match_its_own_is_refused():
    from bench_utils.results.row_schema import field_types, row_problem
    from bench_utils.results.rows import BenchResult

    row = make_row("vit", 1, "default", 5.0, eager_samples_s=[0.01] * 9, eager_block_lengths=[5, 4])
    assert row_problem(vars(row), field_types(BenchResult)) == ""
    for lengths, problem in (([5, 5], "eager_block_lengths: 10 calls in blocks, 9 samples"),
                             ([9], "eager_block_lengths: 1 blocks beside 2")):
        values = vars(row) | {"eager_block_lengths": lengths}
        assert row_problem(values, field_types(BenchResult)) == problem


def test_two_files_under_one_label_are_two_runs_named_apart(tmp_path):
    # `report --compare` of one profile under two torch versions: a page names runs by label, so the
    # label gains what tells the files apart (the torch, else the folder, else the file's place)
    from bench_utils.results.aggregate import load_dataframe

    def write(folder: str, torch: str, name: str = "results.jsonl"):
        path = tmp_path / folder / name
        path.parent.mkdir(exist_ok=True)
        env = {**FIXTURE_ENV, "torch": torch}
        rows = [make_row(env=env), make_row(configuration="default", ms=1.0, env=env),
                make_row(configuration="reduce-overhead", status="skipped", ms=None,  # measured nothing: no torch
                         env={"device": "cpu"})]
        path.write_text("".join(row.to_json() + "\n" for row in rows))
        return path

    old, new = write("old", "2.11.0"), write("new", "2.14.1")
    assert sorted(set(load_dataframe(old, new)["label"])) == ["CPU, torch 2.11.0", "CPU, torch 2.14.1"]
    assert sorted(set(load_dataframe(old, write("again", "2.11.0"))["label"])) == ["CPU (again)", "CPU (old)"]
    assert sorted(set(load_dataframe(old, write("old", "2.11.0", "copy.jsonl"))["label"])) == [
        "CPU (file 1)", "CPU (file 2)"]
    assert set(load_dataframe(old)["label"]) == {"CPU"}  # one file: its own label
