"""The display layer: how numbers, names and column labels read on a page, and which columns of a
report table show at first (the itables options that hide the rest)."""

import math

import pandas as pd
import pytest

from bench_utils.report.display import (MISSING, NEVER, cell_text, hidden_columns, label, model_text, number,
                                        page_columns, percent, readable, status_text, table_options, write_csv)


@pytest.mark.parametrize("value, text", [
    (212.420, "212"), (-13.593, "−13.6"), (829.769, "830"), (1.051326, "1.05"), (9.9997, "10.0"), (0.5, "0.500"),
    (12345.6, "12,300"), (1.2e-6, "1.20e−06"), (0, "0"), (0.00106, "1.06e−03"), (0.0123, "0.0123"), (math.inf, NEVER), (math.nan, MISSING), (None, MISSING),
    (True, "yes"), (False, "no")])
def test_numbers_keep_three_significant_figures(value, text):
    assert number(value) == text


@pytest.mark.parametrize("value, text", [
    (43.74, "43.7"), (-0.0865, "−0.1"), (0.736, "0.7"), (-0.04, "0.0"), (0.0, "0.0"), (1234.56, "1,234.6"),
    (math.nan, MISSING), (None, MISSING)])
def test_per_cent_columns_keep_one_decimal_in_every_row(value, text):
    """An improvement of 43.7% beside one of −0.1%, not −0.0865 (3 significant figures); no "−0.0"."""
    assert percent(value) == text
    assert cell_text(value, "improvement_pct") == text
    assert cell_text(value, "race_speedup") == number(value)  # a column in × keeps its 3 figures


def test_counts_are_integers():
    assert number(3.0, integer=True) == "3" and number(1493.4, integer=True) == "1,493"


def test_models_go_by_one_name_with_their_checkpoint():
    assert model_text("deeplabv3-mobilenet") == "DeepLabV3-MobileNetV2"
    assert model_text("vit", with_checkpoint=True) == "ViT-B/16 (google/vit-base-patch16-224)"
    assert model_text("my-own") == "my-own"  # a user's checkpoint keeps its own name


def test_readable_frames_have_labels_in_words_and_text_values():
    frame = pd.DataFrame({"model": ["vit"], "task_model": ["ViT-B/16"], "batch_size": [1.0], "race_speedup": [1.051326],
                          "breakeven_calls": [math.inf], "graph_breaks": [0.0], "break_reasons": [["a", "b"]],
                          "compile_warm_s": [math.nan], "some_new_column": [2]})
    shown = readable(frame, page_columns(frame.columns))
    assert list(shown.columns) == ["Model", "Batch (images)", "Speedup (×)", "Pays back after (calls, cold)",
                                   "Graph breaks", "Why the graph broke", "Warm compile (s)", "Some new column"]
    assert shown.iloc[0].tolist() == ["ViT-B/16", "1", "1.05", NEVER, "0", "a; b", MISSING, "2"]


def test_a_peak_memory_label_says_what_it_holds_on_the_tables_devices():
    # a CPU page's memory is the process's peak resident memory: "GPU: reserved" there misleads
    cpu = pd.DataFrame({"device": ["cpu"], "compiled_peak_mem_mb": [900.0]})
    assert list(readable(cpu, ["compiled_peak_mem_mb"]).columns) == ["Compiled peak memory (MiB; process peak)"]
    assert label("eager_held_mem_mb", {"cuda"}) == "Eager peak memory (MiB; GPU reserved)"
    assert label("eager_held_mem_mb", {"cpu", "cuda"}) == label("eager_held_mem_mb") == \
        "Eager peak memory (MiB; CPU: process peak; CUDA: GPU reserved)"


def test_csv_keeps_unrounded_numbers_and_adds_the_checkpoint(tmp_path):
    write_csv(pd.DataFrame({"model": ["vit"], "speedup": [1.051326]}), tmp_path / "cells.csv")
    assert (tmp_path / "cells.csv").read_text().splitlines() == ["model,checkpoint,speedup",
                                                                 "vit,google/vit-base-patch16-224,1.051326"]


def test_the_csv_shows_formulas_as_text(tmp_path):
    import pandas as pd

    from bench_utils.report.display import write_csv

    frame = pd.DataFrame({"label": ["=HYPERLINK(\"http://x\")", "CPU"], "error": ["-1+2", ""], "speedup": [-1.5, 2.0]})
    write_csv(frame, tmp_path / "cells.csv")
    assert (tmp_path / "cells.csv").read_text().splitlines() == [
        "label,error,speedup", "\"'=HYPERLINK(\"\"http://x\"\")\",'-1+2,-1.5", "CPU,,2.0"]


# --- a table on a page: its key columns shown, the rest behind a button ------------------------------

def test_key_columns_stay_visible_and_the_rest_hide_behind_a_button():
    frame = pd.DataFrame(columns=["label", "task_model", "batch_size", "configuration", "status", "hostname",
                                  "duration_s", "hardware"])
    options = table_options(frame, "placement", "Where")
    assert options["columnDefs"] == [{"visible": False, "targets": [0, 7]},  # label, hardware
                                     {"className": "dt-nowrap", "targets": [0, 1]}]  # the run's and model's names
    assert options["buttons"] == [{"extend": "colvis", "text": "Columns (2 more)"}]
    assert options["caption"] == "Where" and options["showIndex"] is False


def test_a_table_of_key_columns_only_has_no_button():
    frame = pd.DataFrame(columns=["task_model", "batch_size", "configuration", "status", "error"])
    options = table_options(frame, "failures", "Failed", column_filters="header")
    assert "buttons" not in options and options["column_filters"] == "header"
    assert options["columnDefs"] == [{"className": "dt-nowrap", "targets": [0]}]  # nothing hidden


def test_the_guides_tables_show_every_configuration_with_the_models_name_on_one_line():
    frame = pd.DataFrame(columns=["Model", "eager: mean / median (ms)", "default: mean / median (ms)"])
    options = table_options(frame, "guide", "Batch size 1")
    assert "buttons" not in options and options["columnDefs"] == [{"className": "dt-nowrap", "targets": [0]}]


def test_a_table_naming_none_of_its_keys_shows_everything():
    assert hidden_columns(["a", "b"], ["x"]) == []


def test_unknown_table_is_refused():
    with pytest.raises(ValueError, match="table: 'latency' is not allowed; allowed: main, improvement"):
        table_options(pd.DataFrame(), "latency", "x")


def test_a_shown_table_reads_in_words_with_its_key_columns_first_in_view(monkeypatch):
    import itables

    from bench_utils.report.display import show_table

    shown = {}
    monkeypatch.setattr(itables, "show", lambda frame, **options: shown.update(frame=frame, options=options))
    frame = pd.DataFrame({"model": ["vit"], "task_model": ["ViT-B/16"], "batch_size": [4.0], "configuration": ["default"],
                          "status": ["oom"], "error": ["CUDA out of memory"], "hostname": ["h"]})
    show_table(frame, "failures", "Failed cells")
    assert list(shown["frame"].columns) == ["Model", "Batch (images)", "Configuration", "Status", "Error", "Host"]
    assert shown["frame"].iloc[0].tolist() == ["ViT-B/16", "4", "default", "OOM", "CUDA out of memory", "h"]
    assert shown["options"]["columnDefs"] == [{"visible": False, "targets": [5]},  # the host, one click away
                                              {"className": "dt-nowrap", "targets": [0]}]  # the model's name


def test_a_trace_file_is_a_link_and_every_other_cell_is_escaped():
    from bench_utils.report.display import readable

    frame = pd.DataFrame({"model": ["resnet"], "why": ["<lambda> broke the graph"],
                          "trace": ["resnet-bs1-default-r1.pt.trace.json"]})
    shown = readable(frame, as_html=True).iloc[0].tolist()
    assert shown[1] == "&lt;lambda&gt; broke the graph"  # text stays text
    assert shown[2] == ('<a href="traces/resnet-bs1-default-r1.pt.trace.json" download>'
                        "resnet-bs1-default-r1.pt.trace.json</a>")
    assert readable(frame).iloc[0].tolist()[2] == "resnet-bs1-default-r1.pt.trace.json"  # plain where no HTML
    assert readable(frame.assign(trace=[""]), as_html=True).iloc[0].tolist()[2] == "—"


def test_a_signed_percent_reads_plus_or_minus_and_none_as_plus_minus_zero():
    from bench_utils.report.display import signed_percent

    assert [signed_percent(v) for v in (-14.63, 4.224, 0.0, -0.0, float("nan"))] == [
        "−14.6%", "+4.22%", "±0%", "±0%", "—"]
    assert [signed_percent(v, integer=True) for v in (-0.4, 0.4, 1234.4, -89.4)] == [
        "±0%", "±0%", "+1,234%", "−89%"]


def test_a_status_reads_in_the_same_words_in_a_table_and_on_a_chart():
    from bench_utils.report.grouped_bars import NOT_HERE, status_notes

    statuses = ["ok", "unsupported", "skipped", "oom", "timeout"]
    shown = readable(pd.DataFrame({"status": statuses}))["Status"].tolist()
    assert shown == ["ok", "not supported here", "skipped", "OOM", "TIMEOUT"]
    # a chart's note is the table's words in capitals, and none for a cell that ran
    assert status_notes(statuses) == ["", NOT_HERE, "SKIPPED", "OOM", "TIMEOUT"]
    assert NOT_HERE == "NOT SUPPORTED HERE"
    assert status_text(None) == MISSING
