"""The display layer: how numbers, names and column labels read on a page."""

import math

import pandas as pd
import pytest

from bench_utils.report.display import MISSING, NEVER, label, model_text, number, page_columns, readable, write_csv


@pytest.mark.parametrize("value, text", [
    (212.420, "212"), (-13.593, "−13.6"), (829.769, "830"), (1.051326, "1.05"), (9.9997, "10.0"), (0.5, "0.500"),
    (12345.6, "12,300"), (1.2e-6, "1.20e−06"), (0, "0"), (0.00106, "1.06e−03"), (0.0123, "0.0123"), (math.inf, NEVER), (math.nan, MISSING), (None, MISSING),
    (True, "yes"), (False, "no")])
def test_numbers_keep_three_significant_figures(value, text):
    assert number(value) == text


def test_counts_are_integers():
    assert number(3.0, integer=True) == "3" and number(1493.4, integer=True) == "1,493"


def test_models_go_by_one_name_with_their_checkpoint():
    assert model_text("deeplabv3-mobilenet") == "DeepLabV3-MobileNetV2"
    assert model_text("vit", with_checkpoint=True) == "ViT-B/16 (google/vit-base-patch16-224)"
    assert model_text("my-own") == "my-own"  # a user's checkpoint keeps its own name


def test_readable_frames_have_labels_in_words_and_text_values():
    frame = pd.DataFrame({"model": ["vit"], "task_model": ["ViT-B/16"], "batch_size": [1.0], "speedup": [1.051326],
                          "breakeven_calls": [math.inf], "graph_breaks": [0.0], "break_reasons": [["a", "b"]],
                          "compile_warm_s": [math.nan], "some_new_column": [2]})
    shown = readable(frame, page_columns(frame.columns))
    assert list(shown.columns) == ["Model", "Batch (images)", "Speedup (×)", "Pays back after (calls, cold)",
                                   "Graph breaks", "Why the graph broke", "Warm compile (s)", "Some new column"]
    assert shown.iloc[0].tolist() == ["ViT-B/16", "1", "1.05", NEVER, "0", "a; b", MISSING, "2"]
    assert label("eager_peak_mem_mb") == "Eager peak memory (MB)"


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
