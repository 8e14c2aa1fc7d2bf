"""Which columns of a report table show at first, and the itables options that hide the rest."""

import pandas as pd
import pytest

from bench_utils.report import page_tables


def test_key_columns_stay_visible_and_the_rest_hide_behind_a_button():
    frame = pd.DataFrame(columns=["label", "task_model", "batch_size", "mode", "status", "hostname", "duration_s",
                                  "hardware"])
    options = page_tables.table_options(frame, "placement", "Where")
    assert options["columnDefs"] == [{"visible": False, "targets": [0, 7]}]  # label, hardware
    assert options["buttons"] == [{"extend": "colvis", "text": "Columns (2 more)"}]
    assert options["caption"] == "Where" and options["showIndex"] is False


def test_a_table_of_key_columns_only_has_no_button():
    frame = pd.DataFrame(columns=["task_model", "batch_size", "mode", "status", "error"])
    options = page_tables.table_options(frame, "failures", "Failed", column_filters="header")
    assert "buttons" not in options and "columnDefs" not in options and options["column_filters"] == "header"


def test_a_table_naming_none_of_its_keys_shows_everything():
    assert page_tables.hidden_columns(["a", "b"], ["x"]) == []


def test_unknown_table_is_refused():
    with pytest.raises(ValueError, match="table: 'latency' is not allowed; allowed: main, improvement"):
        page_tables.table_options(pd.DataFrame(), "latency", "x")
