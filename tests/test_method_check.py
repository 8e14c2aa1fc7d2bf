"""The CUDA method check's reading (benchmarks/method_check.py, cuda_main): the engine's rows beside a
reference process's clocks, each latency and speedup said within 10% of Timer's or not. The reference
process is a stand-in here (it needs a GPU): its JSON as the real one prints it."""

import math
import sys
from pathlib import Path

from bench_utils.results.writer import ResultsWriter
from conftest import REPO, fixture_samples, make_row

sys.path.insert(0, str(REPO / "benchmarks"))
import method_check  # noqa: E402


def _engine(path: Path) -> None:
    """ResNet-50 at batch 1, two rounds: eager's own worker at 4 ms; default at 2.5 ms and reduce-overhead
    at 0.8 ms, each with eager timed beside it at 4.4 ms (two blocks each)."""
    rows = [make_row("resnet", 1, "eager", 4.0, label="GPU probe")]
    for repeat in (0, 1):
        for name, ms in (("default", 2.5), ("reduce-overhead", 0.8)):
            rows.append(make_row("resnet", 1, name, ms, repeat=repeat, label="GPU probe",
                                 eager_samples_s=fixture_samples(4.4, 10), eager_block_lengths=[5, 5]))
    with ResultsWriter(path) as writer:
        for row in rows:
            writer.append(row)


def test_each_latency_and_speedup_is_said_within_ten_percent_of_timers_or_not(tmp_path, monkeypatch, capsys):
    _engine(tmp_path / "results.jsonl")
    clocks = lambda ms: {"timer_ms": ms, "do_bench_ms": ms, "queued_device_ms": ms * 0.8}  # noqa: E731
    measured = {"cell": "resnet/1", "eager": clocks(4.2), "default": clocks(2.6), "reduce-overhead": clocks(1.0),
                "eager again": clocks(4.2)}
    asked = []

    def reference_lines(cells, min_run_time):
        asked.append(cells)
        return iter([("resnet/1", {k: v for k, v in measured.items() if k != "cell"}),
                     ("vit/16", {"error": "OutOfMemoryError: CUDA out of memory"})])

    monkeypatch.setattr(method_check, "reference_lines", reference_lines)
    args = method_check.argparse.Namespace(params=REPO / "benchmarks" / "gpu-probe-resnet.yaml", params_given=True,
                                           engine_results=tmp_path / "results.jsonl", min_run_time=0.5)
    method_check.cuda_main(args)
    out = capsys.readouterr().out
    # one reference process for every cell, each with the configurations its rows hold
    assert asked == [[("resnet", 1, ["default", "reduce-overhead"])]]
    assert "eager, its own worker: 4.000 | 4.200" in out and "engine / Timer 0.952: within 10% yes" in out
    # reduce-overhead reads 0.8 ms where Timer reads 1.0: 20% apart, said so; its speedup 5.5 against 4.2
    assert "reduce-overhead: 0.800 | 1.000 | 1.000 | 0.800; engine / Timer 0.800: within 10% NO" in out
    assert "eager beside it 4.400 (engine / Timer 1.048: yes)" in out
    assert "vit, batch 16 (CUDA): the reference failed: OutOfMemoryError" in out  # one cell lost, not the check
    # latencies: eager's own, then each configuration's and the eager timed beside it; speedups: one each
    assert "within 10% of Timer's: latencies 4 of 5, speedups 1 of 2" in out


def test_the_reference_process_prints_a_line_per_cell_as_it_ends(monkeypatch):
    # read as the lines arrive: a reference cut by gpu_probe.sh's cap keeps the cells it finished
    lines = ['{"cell": "resnet/1", "eager": {}}\n', "a warning from torch\n", '{"cell": "resnet/16", "error": "x"}\n']

    class Process:
        stdout = iter(lines)

        def __init__(self, command, **kwargs):
            self.command = command

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(method_check.subprocess, "Popen", Process)
    got = list(method_check.reference_lines([("resnet", 1, ["default"]), ("resnet", 16, [])], 0.5))
    assert got == [("resnet/1", {"eager": {}}), ("resnet/16", {"error": "x"})]


def test_rows_without_an_ok_eager_cell_start_no_reference_and_say_so(tmp_path, monkeypatch, capsys):
    # a profile whose cells all failed: an empty reference list would read as the CPU check (minutes)
    with ResultsWriter(tmp_path / "results.jsonl") as writer:
        writer.append(make_row("resnet", 1, "eager", None, status="error", error="RuntimeError: x", label="GPU probe"))
    monkeypatch.setattr(method_check, "reference_lines", lambda *a: (_ for _ in ()).throw(AssertionError("started")))
    args = method_check.argparse.Namespace(params=REPO / "benchmarks" / "gpu-probe-resnet.yaml", params_given=True,
                                           engine_results=tmp_path / "results.jsonl", min_run_time=0.5)
    method_check.cuda_main(args)
    assert "has an ok eager row: nothing to check the engine against" in capsys.readouterr().out


def test_an_empty_cuda_reference_list_is_a_reference_of_no_cells_not_the_cpu_check(monkeypatch):
    started = []
    monkeypatch.setattr(method_check, "cuda_reference", lambda cells, min_run_time: started.append(cells))
    monkeypatch.setattr(method_check, "cuda_main", lambda args: started.append("cuda_main"))
    monkeypatch.setattr(sys, "argv", ["method_check.py", "--cuda-reference", "--min-run-time", "0.5"])
    method_check.main()
    assert started == [[]]


def test_the_reference_interval_is_a_t_interval_over_its_processes_and_agreement_counts_both_intervals():
    low, high = method_check.reference_interval([2.081, 2.112, 2.115, 2.101])
    assert low < 2.102 < high and 1.005 < high / low < 1.05  # 4 processes 2% apart: about +-1.3%
    assert all(math.isnan(bound) for bound in method_check.reference_interval([2.0]))  # one process: no spread
    # 2026-12-04's second check: the reference (2.125) 0.3% past the engine's upper bound (2.119), inside the joint test
    ref_low, ref_high = method_check.reference_interval([2.142, 2.112, 2.151, 2.095])
    assert method_check.agree_within_both(2.086, 2.053, 2.119, 2.125, ref_low, ref_high)
    # the session before's: 3.4% apart, its four processes 2.073-2.082, the engine +-1.1%: a disagreement
    ref_low, ref_high = method_check.reference_interval([2.073, 2.075, 2.080, 2.082])
    assert not method_check.agree_within_both(2.006, 1.983, 2.029, 2.077, ref_low, ref_high)
    # the root sum of squares, not the plain sum: half-widths 1.5% and 2%, 3% apart (within 3.5%, past 2.5%)
    assert not method_check.agree_within_both(1.0, 1 / 1.015, 1.015, 1.03, 1.03 / 1.02, 1.03 * 1.02)
    assert method_check.agree_within_both(1.0, 1 / 1.015, 1.015, 1.02, 1.02 / 1.02, 1.02 * 1.02)
    # one reference process: no interval, no verdict
    assert method_check.agree_within_both(2.0, 1.9, 2.1, 2.0, *method_check.reference_interval([2.0])) is None
