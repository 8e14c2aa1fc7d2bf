import io

import matplotlib

matplotlib.use("Agg")  # tests only: no display; the library itself never picks a backend

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from bench_utils.report import charts, summary_charts  # noqa: E402
from bench_utils.results.aggregate import to_dataframe  # noqa: E402
from conftest import figure_texts, make_row, speedup_rows  # noqa: E402


@pytest.fixture
def df():
    # vit bs 1: 10 -> 8 ms, one process per side: speedup 1.25, significant.
    # vit bs 2: 18 -> 19 ms, three disagreeing processes per side: slower, and not significant.
    return to_dataframe([
        *speedup_rows("vit", 1, 10.0, 8.0, compiled=dict(compile_s=2.0)),
        make_row("resnet", 1, "eager", 20.0),
        make_row("resnet", 1, "default", status="oom"),
        *speedup_rows("vit", 2, 18.0, 19.0, significant=False, compiled=dict(compile_s=2.5)),
    ])


@pytest.fixture
def all_failed():
    return to_dataframe([make_row("vit", 1, "eager", status="error"),
                         make_row("vit", 1, "default", status="timeout")])


@pytest.fixture(autouse=True)
def no_pyplot_figures_leak():
    yield
    assert plt.get_fignums() == []  # charts build Figure objects, never pyplot-managed ones


def _cell(df, model, batch_size, mode):
    return df[(df["model"] == model) & (df["batch_size"] == batch_size) & (df["mode"] == mode)].iloc[0]


def test_fixture_speedups_come_from_the_samples(df):
    """The premises of the chart tests below: what the rows' samples make of the speedups."""
    fast, slow = _cell(df, "vit", 1, "default"), _cell(df, "vit", 2, "default")
    assert fast["speedup"] == pytest.approx(1.25) and fast["significant"]
    assert fast["speedup_ci95_low"] > 1.0
    assert slow["speedup"] == pytest.approx(18 / 19) and not slow["significant"]
    assert slow["between_process"] and slow["speedup_ci95_low"] < 1.0 < slow["speedup_ci95_high"]


def test_batch_comparison_chart_has_a_panel_per_model_with_eager_and_compiled_lines(df):
    fig = charts.batch_comparison_chart(df, "default")
    assert len(fig.axes) == 2  # vit and resnet (resnet: eager line only)
    vit = fig.axes[0]
    eager, compiled = vit.get_lines()
    assert list(eager.get_xdata()) == [1, 2] and list(eager.get_ydata()) == pytest.approx([10.0, 18.0])
    assert list(compiled.get_ydata()) == pytest.approx([8.0, 19.0])
    resnet_lines = fig.axes[1].get_lines()
    assert list(resnet_lines[0].get_ydata()) == [20.0] and len(resnet_lines[1].get_ydata()) == 0
    with pytest.raises(ValueError, match="mode"):
        charts.batch_comparison_chart(df, "eager")


def test_compile_time_and_breakeven_charts(df):
    fig = charts.compile_time_chart(df)
    assert len(fig.axes) == 1  # one panel, whatever the configurations: a bar per cell in its colour
    assert sorted(p.get_width() for p in fig.axes[0].patches) == [2.0, 2.5]
    fig = charts.breakeven_chart(df)
    assert len(fig.axes) == 2
    # every compiled cell is a point; each model's recommendation is ringed, and no text is printed on
    # the panel (names overlapped each other and the title where configurations tied)
    from bench_utils.report.verdict import verdicts

    scatter = fig.axes[0]
    assert len(scatter.texts) == 0
    points, ringed = scatter.collections[:-1], scatter.collections[-1]
    assert sum(len(c.get_offsets()) for c in points) == len(charts._ok_compiled(df))
    # ringed: the models whose verdict is to compile (vit at batch 1), not every model's leader (vit at
    # batch 2 leads with a configuration slower than eager: a ring there said more than its verdict)
    from bench_utils.results import decision as codes

    answers = verdicts(df)
    assert len(ringed.get_offsets()) == (answers["verdict"] == codes.COMPILE).sum() == 1
    assert answers["configuration"].notna().sum() > 1
    assert "recommended" in [t.get_text() for t in scatter.get_legend().get_texts()]
    payoff = fig.axes[1]
    # only where the verdict is to compile (vit at batch 1, 1.25x); vit at batch 2 is slower: no bar, no
    # "never" beside a verdict that says so in words
    assert [round(p.get_width(), 6) for p in payoff.patches] == [1000.0]  # 2 s / 2 ms
    assert [t.get_text() for t in payoff.texts] == [" 1,000 calls"]  # the count, not "never"
    assert [t.get_text() for t in payoff.get_legend().get_texts()] == ["default"]
    none = charts.breakeven_chart(df, worthwhile=2.0).axes[1]  # a margin nothing clears: nothing pays back
    assert len(none.patches) == 0 and "no pay-back to draw" in none.texts[0].get_text()
    fig.savefig(io.BytesIO(), format="png")


@pytest.mark.parametrize("chart", [
    charts.speedup_chart, lambda d: charts.batch_comparison_chart(d, "default"), charts.compile_time_chart,
    charts.breakeven_chart, summary_charts.cross_label_chart])
def test_every_chart_says_so_when_nothing_succeeded(chart, all_failed):
    for frame in (all_failed, to_dataframe([])):
        fig = chart(frame)
        assert isinstance(fig, Figure)
        assert any(charts.NO_DATA in text for text in figure_texts(fig))


def test_compile_cache_chart_has_a_cold_and_a_warm_bar_per_cell(df):
    single = to_dataframe(speedup_rows("vit", 1, 10.0, 8.0, compiled=dict(compile_s=2.0)))  # one round each
    # no warm compile yet
    assert any("set repeats above 1" in text for text in figure_texts(charts.compile_cache_chart(single)))
    # vit bs 2 has three rounds: round 0's compile is the cold bar, the later rounds' (their median) the warm one
    assert sorted(p.get_width() for p in charts.compile_cache_chart(df).axes[0].patches) == [2.5, 2.5]
    rows = [*speedup_rows("vit", 1, 10.0, 8.0, compiled=dict(compile_s=30.0)),
            *speedup_rows("resnet", 4, 10.0, 8.0, compiled=dict(compile_s=40.0))]
    # the warm compile: a later round's, in a fresh process that found the cache filled
    rows += [make_row("vit", 1, "eager", 10.0, repeat=1), make_row("vit", 1, "default", 8.0, repeat=1, compile_s=2.0),
             make_row("resnet", 4, "eager", 10.0, repeat=1), make_row("resnet", 4, "default", 8.0, repeat=1,
                                                                          compile_s=3.0)]
    ax = charts.compile_cache_chart(to_dataframe(rows)).axes[0]
    assert sorted(p.get_width() for p in ax.patches) == [2.0, 3.0, 30.0, 40.0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ViT-B/16 · default · bs 1",
                                                            "ResNet-50 · default · bs 4"]
    # a round 0 that hit the FX-graph cache (a run resumed after its round 0) draws no cold bar
    held = [*speedup_rows("vit", 1, 10.0, 8.0, compiled=dict(compile_s=4.0, fx_cache_hits=1, fx_cache_misses=0)),
            make_row("vit", 1, "eager", 10.0, repeat=1), make_row("vit", 1, "default", 8.0, repeat=1, compile_s=3.0)]
    ax = charts.compile_cache_chart(to_dataframe(held)).axes[0]
    assert [p.get_width() for p in ax.patches if p.get_width() > 0] == [3.0]
    assert "no cold compile: the cache held it" in [t.get_text() for t in ax.texts]
    texts = [t.get_text() for t in charts.compile_time_chart(to_dataframe(held)).axes[0].texts]
    assert charts.HELD_NOTE in texts
    from bench_utils.report.grouped_bars import NOT_HERE_COLOR
    assert {t.get_color() for t in ax.texts if t.get_text() == charts.HELD_NOTE} == {NOT_HERE_COLOR}  # no failure
    assert not any(p.get_width() for p in charts.compile_time_chart(to_dataframe(held)).axes[0].patches)
    assert charts.HELD_NOTE not in figure_texts(charts.compile_time_chart(to_dataframe(rows)))


def test_speedup_chart_draws_bars_from_one_x_on_a_log_axis_that_holds_every_interval():
    frame = to_dataframe(speedup_rows("vit", 1, 4.0, 2.0) + speedup_rows("resnet", 1, 4.0, 3.2, significant=False)
                         + speedup_rows("segformer", 1, 4.0, 8.0))  # 2x, 1.25x and 2x slower
    ax = charts.speedup_chart(frame).axes[0]
    assert ax.get_xscale() == "log"
    low, high = ax.get_xlim()
    table = frame[frame["configuration"] != "eager"]
    assert low <= table["speedup_ci95_low"].min() and high >= table["speedup_ci95_high"].max()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ViT-B/16", "ResNet-50", "SegFormer-B0"]
    # each bar from 1x to its speedup: right of 1 when faster, left when slower
    assert sorted((round(p.get_x(), 2), round(p.get_x() + p.get_width(), 2)) for p in ax.patches) == [
        (1.0, 0.5), (1.0, 1.25), (1.0, 2.0)]
    assert "1×" in [t.get_text() for t in ax.get_xticklabels()]


def test_a_configuration_keeps_its_colour_on_every_chart_of_the_page():
    rows = speedup_rows("vit", 1, 4.0, 2.0, compiled=dict(compile_s=2.0))
    rows += [make_row("vit", 1, "default+freezing", 2.5, compile_s=3.0)]
    frame = to_dataframe(rows)
    only_default = frame[frame["configuration"] != "default+freezing"]  # e.g. the configurations that ran here
    drawn = charts.speedup_chart(only_default, names=frame["configuration"]).axes[0]
    full = charts.colours(frame["configuration"])
    assert tuple(drawn.patches[0].get_facecolor()[:3]) == pytest.approx(tuple(full["default"]))


def test_speedup_ticks_thin_out_on_a_wide_axis_and_keep_one():
    assert charts.speedup_ticks(0.5, 3.0) == [0.5, 0.75, 1.0, 1.5, 2.0, 3.0]  # a usual axis: every tick
    wide = charts.speedup_ticks(0.02, 50.0)
    assert 1.0 in wide and len(wide) < 7
    assert all(b / a >= (50.0 / 0.02) ** 0.1 for a, b in zip(wide, wide[1:]))  # no two labels crowd


def test_more_models_than_shapes_draw_every_point_and_name_none_in_the_legend():
    """Forty-nine models ended the page in KeyError 'm0048' (twelve shapes, four times over); past twelve
    the shapes repeat, and a legend of shapes would name several models by one."""
    from conftest import COMPILED_FIXTURE

    rows = [row for i in range(49) for row in speedup_rows(f"m{i:04d}", 1, 4.0, 2.0 + i / 100,
                                                            compiled=COMPILED_FIXTURE)]
    frame = to_dataframe(rows)
    fig = charts.breakeven_chart(frame)
    scatter = fig.axes[0]
    assert sum(len(c.get_offsets()) for c in scatter.collections[:-1]) == 49
    assert not any(t.get_text().startswith("m00") for t in scatter.get_legend().get_texts())
    few = charts.breakeven_chart(to_dataframe(rows[:4]))  # two models: each its shape, named
    assert "m0001" in [t.get_text() for t in few.axes[0].get_legend().get_texts()]
    plt.close("all")
