"""The start-up table's numbers (results/startup.py), from fixture rows: every start of every cell, what
it pays before its first answer, and the calls after which it pays back against eager started the same
way."""

import math

import pytest

from bench_utils.results.aggregate import to_dataframe
from bench_utils.results.startup import payback_calls, soonest, start_rows, starts_of, timed
from conftest import make_row


def fixture_rows() -> list:
    """Eager starts in 1.0 s and takes 30 ms a call; default builds in 1 s and compiles cold in 40 s, a new
    process starts it warm in 6 s, 20 ms a call; an AOTInductor package starts in 0.5 s, 18 ms; ONNX
    Runtime in 0.8 s but 35 ms a call; cache artifacts in 16 s."""
    return [make_row(configuration="eager", ms=30.0, build_s=0.9, first_answer_s=1.0),
            make_row(configuration="default", ms=20.0, build_s=1.0, compile_s=40.0, first_answer_s=6.0,
                     compile_warm_s=5.0, accuracy_ok=True),
            make_row(configuration="default+artifacts", ms=20.0, build_s=1.0, compile_s=41.0, first_answer_s=16.0,
                     compile_warm_s=15.0, ships_bytes=2_000_000, accuracy_ok=True),
            make_row(configuration="aot-inductor+freezing", ms=18.0, compile_s=50.0, first_answer_s=0.5,
                     compile_warm_s=0.5, ships_bytes=110_000_000, accuracy_ok=True),
            make_row(configuration="onnxruntime", ms=35.0, compile_s=9.0, first_answer_s=0.8, compile_warm_s=0.8,
                     ships_bytes=350_000_000, accuracy_ok=True),
            make_row(configuration="precompile", status="error", error="PrecompileError: a tensor baked as a constant")]


def test_each_configuration_gives_its_starts():
    assert starts_of("eager") == ("eager",) and starts_of("default+freezing") == ("cold", "warm")
    assert starts_of("default+regional") == ("cold", "warm")
    assert starts_of("default+artifacts") == starts_of("aot-inductor") == starts_of("precompile") == ("shipped",)


def test_a_start_pays_back_once_its_extra_seconds_are_saved_a_call_at_a_time():
    assert payback_calls(6.0, 1.0, 20.0, 30.0) == pytest.approx(500)  # 5 s more, 10 ms saved a call
    assert payback_calls(0.5, 1.0, 18.0, 30.0) == 0  # answers first and faster: from its first call
    assert math.isinf(payback_calls(0.8, 1.0, 35.0, 30.0))  # slower a call: never
    assert math.isnan(payback_calls(math.nan, 1.0, 20.0, 30.0))


def test_the_start_rows_hold_every_start_with_its_figures():
    df = to_dataframe(fixture_rows())
    assert timed(df) and not timed(df.drop(columns=["first_answer_s"]))
    rows = start_rows(df).set_index(["configuration", "start"])
    assert list(rows.index) == [("eager", "eager"), ("default", "cold"), ("default", "warm"),
                                ("default+artifacts", "shipped"), ("aot-inductor+freezing", "shipped"),
                                ("onnxruntime", "shipped"), ("precompile", "shipped")]
    cold, warm = rows.loc[("default", "cold")], rows.loc[("default", "warm")]
    assert cold["first_answer_s"] == 41.0 and warm["first_answer_s"] == 6.0  # build + cold compile; a new process
    assert cold["payback_calls"] == pytest.approx(4000) and warm["payback_calls"] == pytest.approx(500)
    assert cold["latency_ms"] == warm["latency_ms"] == 20.0 and cold["eager_ms"] == 30.0
    shipped = rows.loc[("aot-inductor+freezing", "shipped")]
    assert (shipped["ships_bytes"], shipped["built_s"], shipped["payback_calls"]) == (110_000_000, 50.0, 0)
    failed = rows.loc[("precompile", "shipped")]
    assert failed["status"] == "error" and "baked as a constant" in failed["error"] and math.isnan(failed["first_answer_s"])


def test_the_soonest_start_is_the_first_answer_among_those_faster_than_eager():
    rows = start_rows(to_dataframe(fixture_rows()))
    best = soonest(rows)
    assert (best["configuration"], best["start"]) == ("aot-inductor+freezing", "shipped")  # ONNX Runtime answers
    # sooner than eager too, but runs slower a call
    slower = rows[rows["configuration"].isin(["eager", "onnxruntime"])]
    assert soonest(slower) is None
