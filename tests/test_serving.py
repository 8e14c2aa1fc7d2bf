"""The serving study on a real tiny ResNet and real torch.compile on CPU: which requests compile, why,
what the row holds; failures as rows; the whole study through the runner's workers."""

import pytest
import torch

import bench_utils.measure.cell as measure
import bench_utils.studies.serving as serving
from bench_utils.config.bench_config import BenchConfig
from bench_utils.measure.models import LoadedModel
from bench_utils.results.rows import read_rows
from bench_utils.results.stats import summarize
from bench_utils.studies.serving import STUDY as SERVING, ServingResult
from bench_utils.sweep.loop import run_sweep

SEQUENCE = (2, 3, 2)  # a size seen again; no 1: dynamo specializes size 1 even with dynamic=True
FAST = dict(target_halfwidth=0.0, models=("resnet",), size="tiny", device="cpu", weights="random", iterations=2, min_time_s=0.0, warmup=0,
            max_warmup_s=0.0)  # seconds: behaviour, not figures
SIZE_CHANGED = "size mismatch at index 0"  # dynamo's guard failure when the batch dimension changed


def measure_serving(cfg: BenchConfig, model: str, setting: str) -> ServingResult:
    return SERVING.measure(cfg, model, setting, None)


def serving_config(**values) -> BenchConfig:
    return BenchConfig(**{**FAST, "serving_batch_sizes": SEQUENCE, **values})


@pytest.fixture(scope="module")
def rows() -> dict:
    """One row per setting, measured in this process (compiles use the user's warm compiler cache)."""
    cfg = serving_config()
    return {setting: measure_serving(cfg, "resnet", setting) for setting in ("eager", "static", "dynamic", "auto")}


def test_every_row_holds_its_sequence_and_steady_state(rows):
    for setting, row in rows.items():
        assert row.status == "ok", (setting, row.error)
        assert row.sequence == list(SEQUENCE) and row.setting == setting
        assert len(row.step_ms) == len(row.step_compiled) == 3 and all(ms > 0 for ms in row.step_ms)
        assert sorted(row.steady_ms) == ["2", "3"]  # every distinct size, once
        assert all(len(row.steady_samples_s[size]) >= 2 for size in row.steady_ms)  # iterations
        assert row.steady_ms["3"] == pytest.approx(summarize(row.steady_samples_s["3"]).median_ms)
        expected_compile_s = sum(ms for ms, c in zip(row.step_ms, row.step_compiled) if c) / 1000
        assert row.compile_total_s == pytest.approx(expected_compile_s)
        assert row.weights == "random" and row.env["torch"] == torch.__version__ and row.duration_s > 0
    assert rows["eager"].configuration == "eager" and rows["static"].configuration == "default"


def test_measured_rows_read_back_whole_through_the_row_schema(rows, tmp_path):
    from bench_utils.results.writer import ResultsWriter

    path = SERVING.path(tmp_path / "results.jsonl")
    with ResultsWriter(path) as writer:
        for row in rows.values():
            writer.append(row)
    loaded = read_rows(path, ServingResult)
    assert loaded.rows == list(rows.values()) and loaded.skipped_lines == []  # no real row taken for a lie


def test_eager_compiles_nothing(rows):
    eager = rows["eager"]
    assert eager.compiles == 0 and eager.step_compiled == [False] * 3 and eager.compile_total_s == 0
    assert eager.recompile_reasons == []


def test_static_recompiles_on_each_new_size_and_reuses_repeats(rows):
    static = rows["static"]
    assert static.step_compiled == [True, True, False] and static.compiles == 2
    assert any(SIZE_CHANGED in reason and "expected 2, actual 3" in reason for reason in static.recompile_reasons)
    assert not any(reason[0].isdigit() for reason in static.recompile_reasons)  # no "0/1: " compile ids
    assert not any(reason.startswith("recompile_limit") for reason in static.recompile_reasons)


def test_dynamic_compiles_once_auto_once_more_to_go_dynamic(rows):
    assert rows["dynamic"].step_compiled == [True, False, False]
    assert rows["dynamic"].compiles == 1 < rows["static"].compiles
    assert rows["auto"].step_compiled == [True, True, False]  # 2 static, then symbolic from 3 on
    assert rows["auto"].compiles == 2
    assert any(SIZE_CHANGED in reason for reason in rows["auto"].recompile_reasons)


def test_recompile_limit_is_reported_not_silent():
    with torch._dynamo.config.patch(recompile_limit=1):  # one graph per frame: size 3 is past it
        row = measure_serving(serving_config(), "resnet", "static")
    assert row.status == "ok", row.error
    assert row.step_compiled == [True, False, False] and row.compiles == 1  # size 3 ran eagerly
    assert row.recompile_limit_hit


def test_a_compile_in_the_steady_state_is_reported(monkeypatch):
    serve = serving._serve_sequence  # serve the first request only: size 3 first comes in the steady state
    monkeypatch.setattr(serving, "_serve_sequence", lambda run, sequence, *rest: serve(run, sequence[:1], *rest))
    row = measure_serving(serving_config(), "resnet", "static")
    assert row.status == "ok", row.error
    assert row.step_compiled == [True] and row.compiles == 1 and sorted(row.steady_ms) == ["2", "3"]
    assert row.steady_compiles == 1 and not row.recompile_limit_hit
    assert any(SIZE_CHANGED in reason for reason in row.recompile_reasons)  # and why it compiled


def test_guard_failures_are_cut_to_the_failed_check():
    from torch._dynamo.utils import guard_failures

    guard_failures.clear()
    guard_failures["code"] += ["0/1: tensor 'x' size mismatch at index 0. expected 1, actual 4\nmore",
                               "[0/2]: 2 <= x.size()[0] <= 15  # n = x.shape[1]  # modeling.py:86 in forward (why)"]
    try:
        assert serving._failed_guards() == ["tensor 'x' size mismatch at index 0. expected 1, actual 4",
                                            "2 <= x.size()[0] <= 15"]
    finally:
        guard_failures.clear()


class FailsAtBatch(torch.nn.Module):
    """Raises `error` on a batch of `batch_size` images; otherwise a cheap forward."""

    def __init__(self, batch_size: int, error: Exception):
        super().__init__()
        self.batch_size, self.error = batch_size, error

    def forward(self, pixel_values):
        if pixel_values.shape[0] == self.batch_size:
            raise self.error
        return pixel_values.mean()


@pytest.mark.parametrize("error, status", [(RuntimeError("boom"), "error"),
                                           (RuntimeError("DefaultCPUAllocator: can't allocate memory"), "oom")])
def test_a_failing_model_is_a_row_with_the_requests_before(monkeypatch, error, status):
    failing = LoadedModel(FailsAtBatch(3, error), "random", "fixture", 0)
    monkeypatch.setattr(measure, "load_model", lambda *args: failing)  # every measuring process loads through it
    row = measure_serving(serving_config(), "resnet", "eager")
    assert row.status == status and row.error.startswith(f"RuntimeError: {error}")
    assert len(row.step_ms) == 1 and row.step_compiled == [False]  # the request of size 2 was served
    assert row.steady_ms == {} and row.compiles is None and row.weights == "random"


def test_a_bad_setting_is_refused():
    with pytest.raises(ValueError, match="setting: 'fast' is not allowed"):
        measure_serving(serving_config(), "resnet", "fast")


@pytest.mark.slow
def test_the_loop_runs_each_setting_in_a_worker_of_its_own(tmp_path, monkeypatch):
    # two of the four settings: each study process compiles from an empty compiler cache (~30-60 s
    # here), and the behaviour of every setting is checked in-process above
    monkeypatch.setattr(serving, "SETTINGS", ("eager", "dynamic"))
    cfg = serving_config(serving_batch_sizes=(2, 3), configurations=("eager",), repeats=1)
    results = tmp_path / "results.jsonl"
    line = run_sweep(cfg, results, progress=False).line()  # one eager round, then the study
    assert line.startswith("1 round and 2 study processes measured, 0 already done") and line.endswith(f" -> {results}")
    rows = {row.setting: row for row in read_rows(SERVING.path(results), ServingResult).rows}
    assert sorted(rows) == ["dynamic", "eager"]
    assert all(row.status == "ok" and row.sequence == [2, 3] and sorted(row.steady_ms) == ["2", "3"]
               for row in rows.values()), {s: r.error for s, r in rows.items()}
    assert rows["dynamic"].step_compiled == [True, False] and rows["dynamic"].compiles == 1
    assert rows["eager"].compiles == 0 and rows["dynamic"].settings == cfg.settings_fingerprint()
    assert (tmp_path / "logs" / "serving-resnet-dynamic.log").is_file()
    assert run_sweep(cfg, results, progress=False).line() == f"nothing measured, 3 already done -> {results}"
