"""The verdict rules on fixture rows: compile, don't compile, inconclusive, no data."""

import pytest

from bench_utils.results.frame import to_dataframe
from bench_utils.report.verdict import COMPILE, DONT, INCONCLUSIVE, NO_DATA, verdict_markdown, verdicts
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
    assert "paid back after 6,000 calls" in table.loc["vit", "summary"]
    assert table.loc["vit", "summary"].startswith("**Image Classification/ViT: compile** (default, float32, batch 1): ×2.00")
    assert table.loc["resnet", "verdict"] == DONT and "slower than eager at default bs 1" in table.loc["resnet", "caveats"]
    assert "never pays back" in table.loc["resnet", "summary"]
    assert table.loc["convnext", "verdict"] == INCONCLUSIVE
    assert ("disturbed: round(s) 4 disagree with the others more than their spread explains"
            in table.loc["convnext", "caveats"])
    assert table.loc["beit", "verdict"] == NO_DATA and "OOM" in table.loc["beit", "summary"]
    assert "random weights" in table.loc["vit", "caveats"]


def test_a_faster_but_wrong_compile_is_not_recommended():
    rows = cell("vit", "eager", 10.0, (1.0, 1.01)) + cell("vit", "default", 5.0, (1.0, 1.01), accuracy_ok=False,
                                                         max_abs_diff=0.5, compile_s=3.0)
    table = verdicts(to_dataframe(rows))
    assert table.loc[0, "verdict"] == DONT and "output differs from eager by 0.5" in table.loc[0, "caveats"]


def test_one_process_per_cell_is_a_caveat_and_markdown_lists_every_model():
    rows = cell("vit", "eager", 10.0) + cell("vit", "default", 5.0, compile_s=3.0)
    df = to_dataframe(rows)
    assert "one process per cell" in verdicts(df).loc[0, "caveats"]
    assert verdict_markdown(df).startswith("- **Image Classification/ViT: compile**")
    assert verdict_markdown(to_dataframe([])) == "No measured cells yet: no verdict."
