"""The verdict rules on fixture rows: compile, don't compile, inconclusive, no data."""

import pytest

from bench_utils.results.aggregate import to_dataframe
from bench_utils.report.verdict import COMPILE, DONT, INCONCLUSIVE, NO_DATA, LEGEND, page_caveats, verdict_table, verdict_text, verdicts
from conftest import make_row


def cell(model, mode, ms, processes=(1.0,), **extra):
    """A cell measured in len(processes) processes whose medians are ms x each factor."""
    return [make_row(model, 1, mode, ms * k, repeat=r, **extra) for r, k in enumerate(processes)]


# five rounds timed in two blocks each; the fifth ran in a stretch that slowed the compiled mode
# alone: the interval over rounds is too wide to call, and that round disagrees with the others
ROUND_4_OFF = (1.0, 1.01, 0.99, 1.0, 1.6)


def test_verdict_per_model():
    rows = (cell("vit", "eager", 10.0, (1.0, 1.01, 0.99)) + cell("vit", "default", 5.0, (1.0, 1.01, 0.99), compile_s=30.0)
            + cell("resnet", "eager", 10.0, (1.0, 1.01, 0.99)) + cell("resnet", "default", 20.0, (1.0, 1.01, 0.99), compile_s=9.0)
            + cell("convnext", "eager", 10.0, (1.0,) * 5, block_lengths=[5, 5])
            + cell("convnext", "default", 9.5, ROUND_4_OFF, compile_s=5.0, block_lengths=[5, 5])
            + cell("beit", "eager", 10.0) + [make_row("beit", 1, "default", status="oom")])
    table = verdicts(to_dataframe(rows)).set_index("model")
    assert table.loc["vit", "verdict"] == COMPILE and table.loc["vit", "speedup"] == pytest.approx(2.0)
    # 30 s of compiling, 5 ms saved per call: 6,000 calls
    assert table.loc["vit", "breakeven_calls"] == pytest.approx(6000, rel=1e-3)
    # every round of both modes moved together (x1, x1.01, x0.99): paired, the speedup is exactly 2 in each
    assert table.loc["vit", "answer"] == "Compile (default mode): 2.00× faster, 95% sure between 2.00× and 2.00×"
    # the later processes compiled warm (30 s each here): their median is the warm compile
    assert table.loc["vit", "cost"] == ("pays back after 6,000 calls (30.0 s cold compile), 6,000 calls once the "
                                        "cache is warm (30.0 s)")
    assert table.loc["resnet", "verdict"] == DONT and "slower than eager with default mode at batch 1" in table.loc["resnet", "caveats"]
    assert table.loc["resnet", "answer"].startswith("Don't compile: 0.500× (slower, 95% sure between")
    assert table.loc["resnet", "cost"] == "—"  # pay-back only where compiling is significantly faster
    assert table.loc["convnext", "verdict"] == INCONCLUSIVE
    assert table.loc["convnext", "answer"].startswith("Can't tell: between ") and "rerun with more budget" in table.loc["convnext", "answer"]
    assert table.loc["convnext", "cost"] == "—"
    assert "round(s) 4 disagree with the others more than their spread explains" in table.loc["convnext", "caveats"]
    assert table.loc["beit", "verdict"] == NO_DATA and "OOM" in table.loc["beit", "summary"]
    # random weights hold for every model: said once per page, not on each line
    assert "random" not in table.loc["vit", "caveats"]
    assert any(note.startswith("Random weights") for note in page_caveats(to_dataframe(rows)))


def test_absurd_intervals_read_as_bounds_and_a_busy_machine_is_said_once():
    from bench_utils.report.display import times
    from bench_utils.report.notes import disturbance_words

    assert (times(9.46e-06), times(15_100_000), times(1.234)) == ("<0.01×", ">100×", "1.23×")
    # the cell's and its eager cell's shares: the larger, once (results/aggregate.py's busy_pct)
    rows = (cell("vit", "eager", 10.0, (1.0, 1.01, 0.99), others_cpu_pct=85.0)
            + cell("vit", "default", 5.0, (1.0, 1.01, 0.99), others_cpu_pct=86.0))
    (record,) = [r for r in to_dataframe(rows).to_dict("records") if r["mode"] == "default"]
    assert disturbance_words(record) == "other processes used 86% of the CPU"


def test_warm_compile_pays_back_sooner():
    """Finding 2: cold 30 s in the first process, 3 s in the later ones (they find the cache filled)."""
    rows = cell("vit", "eager", 10.0, (1.0, 1.01, 0.99)) + [
        make_row("vit", 1, "default", 5.0 * k, repeat=r, compile_s=30.0 if r == 0 else 3.0)
        for r, k in enumerate((1.0, 1.01, 0.99))]
    row = verdicts(to_dataframe(rows)).iloc[0]
    assert row["compile_warm_s"] == pytest.approx(3.0)
    assert row["breakeven_calls"] == pytest.approx(6000, rel=1e-3)
    assert row["breakeven_warm_calls"] == pytest.approx(600, rel=1e-3)
    assert "600 calls once the cache is warm (3.00 s)" in row["cost"]


def test_a_faster_but_wrong_compile_is_not_recommended():
    rows = cell("vit", "eager", 10.0, (1.0, 1.01)) + cell("vit", "default", 5.0, (1.0, 1.01), accuracy_ok=False,
                                                         max_abs_diff=0.5, compile_s=3.0)
    table = verdicts(to_dataframe(rows))
    assert table.loc[0, "verdict"] == DONT and "output differs from eager by 0.5" in table.loc[0, "caveats"]


def test_one_process_per_cell_is_a_page_caveat_and_the_table_names_models_with_checkpoints():
    rows = cell("vit", "eager", 10.0) + cell("vit", "default", 5.0, compile_s=3.0)
    df = to_dataframe(rows)
    assert any("One process per cell" in note for note in page_caveats(df))
    shown = verdict_table(df)
    assert list(shown.columns) == ["Model", "Answer", "Compile cost", "Watch out"]
    assert shown.loc[0, "Model"] == "ViT-B/16 (google/vit-base-patch16-224)"
    assert verdict_text(df).startswith("  ViT-B/16: Compile (default mode): 2.00× faster")
    assert verdict_text(to_dataframe([])) == "No measured cells yet: no verdict."
    assert "Can't tell" in LEGEND and "warm" in LEGEND


def test_a_warm_up_that_never_settled_reaches_the_page():
    from bench_utils.report.verdict import page_caveats
    from bench_utils.results.aggregate import to_dataframe
    from conftest import speedup_rows

    steady = to_dataframe(speedup_rows("vit", 1, 4.0, 2.0))
    assert not any("warm-up" in note for note in page_caveats(steady))
    unsteady = to_dataframe(speedup_rows("vit", 1, 4.0, 2.0, compiled={"warmup_steady": False}))
    notes = [note for note in page_caveats(unsteady) if "warm-up" in note]
    assert notes == ["The warm-up of 1 cell(s) reached max_warmup_s before the latency settled (ViT-B/16 default "
                     "at batch 1): their timed calls may still include warming up; raise max_warmup_s."]
