"""The serving study's frame, table, chart and verdict from hand-built rows: exact numbers."""

import math

import numpy as np
import pytest

from bench_utils.studies.serving import STUDY as SERVING, serving_chart, serving_frame, serving_table
from bench_utils.studies.serving import ServingResult
from conftest import figure_texts

SEQUENCE = [1, 4, 1]
RESNET = "ResNet-50"


def serving_row(model: str, setting: str, step_ms=(), step_compiled=(), steady=None, status: str = "ok",
                **extra) -> ServingResult:
    """A made-up serving row (report fixtures only): steady is {batch size: median ms}."""
    values = dict(label="CPU", model=model, checkpoint="hub/id", task="image-classification", size="tiny",
                  configuration="eager" if setting == "eager" else "default", setting=setting,
                  device="cpu", settings="abc", status=status, sequence=list(SEQUENCE), step_ms=list(step_ms),
                  step_compiled=list(step_compiled), weights="random")
    if status == "ok":
        values.update(compiles=sum(step_compiled), steady_ms={str(b): ms for b, ms in steady.items()},
                      compile_total_s=sum(ms for ms, c in zip(step_ms, step_compiled) if c) / 1000)
    else:
        values["error"] = "RuntimeError: boom"
    values.update(extra)
    return ServingResult(**values)


def resnet_rows() -> list:
    """eager 60 ms per pass; static 2x eager once warm but 11 s of compiles; dynamic 1.67x, 7 s; auto failed."""
    return [serving_row("resnet", "auto", step_ms=[3000.0], status="error"),  # out of order on purpose
            serving_row("resnet", "eager", [10.0, 40.0, 10.0], [False] * 3, {1: 10.0, 4: 40.0}),
            serving_row("resnet", "static", [5000.0, 6000.0, 5.0], [True, True, False], {1: 5.0, 4: 20.0},
                        recompile_reasons=["tensor 'pixel_values' size mismatch at index 0. expected 1, actual 4"]),
            serving_row("resnet", "dynamic", [4000.0, 3000.0, 6.0], [True, True, False], {1: 6.0, 4: 24.0})]


def vit_rows() -> list:
    """static hit the recompile limit, dynamic is within 5% of eager: use eager."""
    return [serving_row("vit", "eager", [10.0, 40.0, 10.0], [False] * 3, {1: 10.0, 4: 40.0}),
            serving_row("vit", "static", [5000.0, 30.0, 5.0], [True, False, False], {1: 5.0, 4: 20.0},
                        recompile_limit_hit=True),
            serving_row("vit", "dynamic", [4000.0, 40.0, 10.0], [True, False, False], {1: 9.8, 4: 39.2})]


def test_frame_has_the_totals_speedups_and_payback():
    frame = serving_frame(resnet_rows())
    assert list(frame["setting"]) == ["eager", "static", "dynamic", "auto"]  # SERVING_SETTINGS order
    by = frame.set_index("setting")
    assert by.loc["static", "compiles"] == 2 and by.loc["static", "recompiles"] == 1
    assert by.loc["static", "compile_total_s"] == pytest.approx(11.0)
    assert by.loc["static", "sequence_s"] == pytest.approx(11.005)  # 5000 + 6000 + 5 ms
    assert by.loc["eager", "steady_sequence_ms"] == pytest.approx(60.0)  # 10 + 40 + 10
    assert by.loc["static", "steady_sequence_ms"] == pytest.approx(30.0)
    assert by.loc["static", "speedup"] == pytest.approx(2.0)
    assert by.loc["dynamic", "speedup"] == pytest.approx(60 / 36)
    assert by.loc["dynamic", "speedup_bs4"] == pytest.approx(40 / 24)
    assert by.loc["eager", "speedup"] == 1.0 and by.loc["eager", "compiles"] == 0
    # 11 s of compiles / 30 ms saved per pass
    assert by.loc["static", "payback_passes"] == pytest.approx(11.0 / 0.030)
    assert math.isnan(by.loc["eager", "payback_passes"])
    assert by.loc["auto", "status"] == "error" and math.isnan(by.loc["auto", "steady_ms_bs1"])
    assert math.isnan(by.loc["auto", "compiles"]) and by.loc["auto", "step_ms"] == [3000.0]
    assert not by["limit_hit"].any()


def test_frame_refuses_two_rows_of_one_setting():
    rows = resnet_rows()
    with pytest.raises(ValueError, match="more than one row per model and setting"):
        serving_frame(rows + rows[1:2])


def test_table_formats_numbers_and_statuses():
    table = serving_table(serving_frame(resnet_rows() + vit_rows())).set_index(["Model", "Setting"])
    assert table.loc[(RESNET, "static"), "Compile total (s)"] == "11.0"  # 3 significant figures
    assert table.loc[(RESNET, "static"), "Graphs compiled"] == "2"
    assert table.loc[(RESNET, "dynamic"), "Batch 4 (ms)"] == "24.0"
    assert table.loc[(RESNET, "dynamic"), "Speedup (×)"] == "1.67"
    assert table.loc[(RESNET, "auto"), "Batch 1 (ms)"] == "ERROR"
    assert table.loc[(RESNET, "static"), "Why it recompiled"].startswith("tensor 'pixel_values' size mismatch")
    assert table.loc[(RESNET, "eager"), "Why it recompiled"] == "—"
    assert table.loc[("ViT-B/16", "static"), "Why it recompiled"] == (
        "recompile limit hit: dynamo ran later new shapes eagerly, without compiling")


def test_verdict_picks_the_fastest_once_warm_and_names_the_others():
    text = SERVING.verdict(serving_frame(resnet_rows() + vit_rows()))
    lines = text.splitlines()
    assert len(lines) == 2 and lines[0].startswith("- **ViT-B/16: use eager**")
    assert "(best: static 2.00×)" in lines[0]  # fastest, but it hit the recompile limit
    assert lines[1] == (
        f"- **{RESNET}: use static**: 2.00× eager's speed once warm over the sequence (batch 1 2.00×, batch 4 "
        "2.00×); cold "
        "sequence 11.0 s with 2 graph(s) (dynamic 7.01 s, 2 graph(s)); its compiles pay back after 367 passes of "
        "the sequence. Static shapes compile once per new batch size: past dynamo's recompile_limit (8 by "
        "default) new sizes run eagerly. Failed: auto ERROR.")


def test_verdict_prefers_the_cheaper_start_within_5_percent_of_the_fastest():
    rows = resnet_rows()
    rows[3] = serving_row("resnet", "dynamic", [4000.0, 3000.0, 6.0], [True, True, False], {1: 5.1, 4: 20.4})
    assert SERVING.verdict(serving_frame(rows)) == (
        f"- **{RESNET}: use dynamic**: 1.96× eager's speed once warm over the sequence (batch 1 1.96×, batch 4 "
        "1.96×), within 5% of the fastest (static 2.00×); cold sequence 7.01 s with 2 graph(s) (static 11.0 s, 2 graph(s)); its "
        "compiles pay back after 238 passes of the sequence. Failed: auto ERROR.")


def test_verdict_without_eager_or_rows():
    rows = [row for row in resnet_rows() if row.setting != "eager"]
    assert SERVING.verdict(serving_frame(rows)).startswith(f"- **{RESNET}: no verdict**: no eager baseline")
    assert SERVING.verdict(serving_frame([])) == "No serving rows yet: no verdict."
    assert serving_table(serving_frame([])).empty


def test_chart_draws_the_timeline_and_the_steady_bars():
    fig = serving_chart(serving_frame(resnet_rows()), "resnet")
    timeline, steady = fig.axes[:2]
    assert timeline.get_yscale() == "log"
    lines = {line.get_label(): line for line in timeline.get_lines()}
    assert list(lines) == ["eager", "static", "dynamic", "auto"]  # the failed auto drew its one request
    assert list(lines["static"].get_ydata()) == [5000.0, 6000.0, 5.0]
    circles = [c.get_offsets().tolist() for c in timeline.collections]
    assert circles[1] == [[1.0, 5000.0], [2.0, 6000.0]]  # static compiled on requests 1 and 2
    assert [t.get_text() for t in timeline.get_xticklabels()] == ["1", "4", "1"]
    widths = sorted(round(p.get_width(), 6) for p in steady.patches)
    assert widths == [5.0, 6.0, 10.0, 20.0, 24.0, 40.0]  # 3 ok settings x 2 batch sizes
    assert "ERROR" in figure_texts(fig)
    assert np.allclose(lines["eager"].get_xdata(), [1, 2, 3])


def test_chart_of_an_absent_model_says_so():
    fig = serving_chart(serving_frame(resnet_rows()), "vit")
    assert figure_texts(fig) == ["vit: no serving rows"]


def test_verdict_warns_when_other_programs_were_busy_while_timing():
    rows = resnet_rows()
    quiet = SERVING.verdict(serving_frame(rows))
    assert "Caveat" not in quiet
    rows[1] = serving_row("resnet", "eager", [10.0, 40.0, 10.0], [False] * 3, {1: 10.0, 4: 40.0},
                          steady_others_cpu_pct={"1": 3.0, "4": 42.0})
    busy = SERVING.verdict(serving_frame(rows))
    assert busy.endswith("Caveat: other programs used up to 42% of the CPU while timing; "
                         "measure again on a quiet machine.")
