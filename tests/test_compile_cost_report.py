"""The compile-time study's frame, table, chart and verdict, from hand-built rows with exact numbers."""

import math

import pytest

from bench_utils.studies.compile_cost.page import (COLUMNS, SPEED_CAVEAT, compile_cost_chart, compile_cost_frame,
                                                    compile_cost_table, eager_medians)
from bench_utils.results.aggregate import to_dataframe
from bench_utils.studies.compile_cost import STUDY as COMPILE_COST, CompileCostResult
from bench_utils.results.writer import ResultsWriter
from conftest import figure_texts, make_row

NO_BLOCKS = "no repeated blocks: (why, in words)"
EAGER_MS = {("vit", 1): 3.0, ("resnet", 1): 1.5}


def _row(model: str, strategy: str, status: str = "ok", **values) -> CompileCostResult:
    return CompileCostResult(label="CPU", model=model, checkpoint="hub/id", task="image-classification", size="tiny",
                             batch_size=1, configuration="default", strategy=strategy, device="cpu",
                             settings="abc", status=status, **values)


ROWS = [  # resnet first and strategies shuffled: the frame orders them
    _row("resnet", "cache-artifacts", status="error", error="MissingArtifactsError: run whole first"),
    _row("resnet", "whole", compile_s=5.0, latency_ms_median=1.0, graph_count=1, fx_cache_hits=0, fx_cache_misses=1,
         artifact_bytes=1_000_000, accuracy_ok=True),
    _row("resnet", "regional", applicable=False, note=NO_BLOCKS),
    _row("vit", "cache-artifacts", compile_s=6.0, artifact_load_s=0.5, latency_ms_median=2.0, graph_count=1,
         fx_cache_hits=1, fx_cache_misses=0, artifact_bytes=2_500_000, accuracy_ok=True, note="loaded 1 inductor"),
    _row("vit", "regional", compile_s=4.0, latency_ms_median=2.5, graph_count=1, fx_cache_hits=0, fx_cache_misses=1,
         accuracy_ok=True, note="2 x ViTLayer at vit.layers; the rest runs eagerly"),
    _row("vit", "whole", compile_s=10.0, latency_ms_median=2.0, graph_count=1, fx_cache_hits=0, fx_cache_misses=1,
         artifact_bytes=2_500_000, accuracy_ok=True),
]


@pytest.fixture
def frame():
    return compile_cost_frame(ROWS, EAGER_MS)


def test_frame_savings_and_speedups_use_the_sweeps_eager_number(frame):
    assert list(frame.columns) == COLUMNS
    assert list(zip(frame["model"], frame["strategy"])) == [
        ("vit", "whole"), ("vit", "regional"), ("vit", "cache-artifacts"),
        ("resnet", "whole"), ("resnet", "regional"), ("resnet", "cache-artifacts")]
    vit = frame[frame["model"] == "vit"]
    assert list(vit["compile_total_s"]) == [10.0, 4.0, 6.5]  # cache-artifacts: 6.0 s compile + 0.5 s loading
    assert list(vit["compile_saving_s"]) == [0.0, 6.0, 3.5]
    assert list(vit["compile_saving_pct"]) == [0.0, 60.0, 35.0]
    assert list(vit["eager_ms_median"]) == [3.0] * 3 and list(vit["speedup"]) == [1.5, 1.2, 1.5]
    resnet = frame[frame["model"] == "resnet"].reset_index(drop=True)
    assert resnet.loc[0, "speedup"] == 1.5 and resnet.loc[0, "task_model"] == "ResNet-50"
    assert list(frame["applicable"]) == [True, True, True, True, False, True]
    for i in (1, 2):  # not applicable, failed: no numbers
        assert math.isnan(resnet.loc[i, "compile_total_s"]) and math.isnan(resnet.loc[i, "speedup"])
        assert math.isnan(resnet.loc[i, "compile_saving_pct"])


def test_no_eager_cell_no_speedup():
    frame = compile_cost_frame(ROWS, {("vit", 1): 3.0})
    assert frame[frame["model"] == "resnet"]["speedup"].isna().all()
    assert "×" not in COMPILE_COST.verdict(frame).splitlines()[1]  # resnet: its latency in ms instead
    assert "(5.0 s, 1.00 ms)" in COMPILE_COST.verdict(frame)


def test_table_shows_numbers_status_and_not_applicable(frame):
    table = compile_cost_table(frame)
    assert list(table["compile (s)"]) == ["10.0", "4.0", "6.5", "5.0", "N/A", "ERROR"]
    assert list(table["compile vs whole"]) == ["baseline", "-6.0 s (-60%)", "-3.5 s (-35%)", "baseline", "", ""]
    assert list(table["speedup vs eager"]) == ["1.50", "1.20", "1.50", "1.50", "", ""]
    assert list(table["FX cache hits/misses"]) == ["0/1", "0/1", "1/0", "0/1", "", ""]
    assert list(table["artifacts (MB)"]) == ["2.50", "", "2.50", "1.00", "", ""]
    assert table["note"].iloc[4] == NO_BLOCKS and table["note"].iloc[5] == "MissingArtifactsError: run whole first"


def test_verdict_names_the_biggest_cut_and_its_cost_in_speed(frame):
    assert COMPILE_COST.verdict(frame).splitlines() == [
        "- **ViT-B/16**: regional cuts compile time the most, 10.0 s → 4.0 s (−60%), at ×1.20 vs "
        "eager (whole: ×1.50 vs eager)",
        "- **ResNet-50**: nothing cut compile time below whole-model compile (5.0 s, ×1.50 vs "
        "eager); regional: not applicable (no repeated blocks); cache-artifacts: error",
        "", SPEED_CAVEAT]


def test_chart_bars_are_compile_times_with_speedups_written(frame):
    fig = compile_cost_chart(frame)
    ax = fig.axes[0]
    assert [[patch.get_width() for patch in bars.patches] for bars in ax.containers] == [[10.0, 5.0], [4.0], [6.5]]
    texts = figure_texts(fig)
    assert sorted(t.strip() for t in texts if t.strip().startswith("×")) == ["×1.20", "×1.50", "×1.50", "×1.50"]
    assert "N/A" in texts and "ERROR" in texts


def test_empty_study():
    frame = compile_cost_frame([], {})
    assert list(frame.columns) == COLUMNS and frame.empty
    assert COMPILE_COST.verdict(frame) == "No compile-time study rows: no verdict."
    assert figure_texts(compile_cost_chart(frame)) == ["compile-time study: no successful cells"]


def test_eager_medians_from_the_sweep_and_the_study_file(tmp_path):
    sweep = to_dataframe([make_row("vit", 1, "eager", 3.0), make_row("vit", 1, "default", 2.0),
                          make_row("resnet", 1, "eager", status="oom")])
    assert eager_medians(sweep) == {("vit", 1): 3.0}
    with pytest.raises(ValueError, match="several labels"):
        eager_medians(to_dataframe([make_row("vit", label="A"), make_row("vit", label="B")]))
    results = tmp_path / "results.jsonl"
    with ResultsWriter(COMPILE_COST.path(results)) as writer:
        for row in ROWS:
            writer.append(row)
    loaded = COMPILE_COST.frame(results, sweep)
    assert list(loaded[loaded["model"] == "vit"]["speedup"]) == [1.5, 1.2, 1.5]
