"""The index page's per-profile speedup chart: one labelled inline SVG bar per model, from its verdict,
coloured by the verdict, against a line at 1x."""

import re

from bench_utils.report import index_page
from bench_utils.report.verdict import Rules
from bench_utils.results.aggregate import to_dataframe
from conftest import speedup_rows



def _bars(svg: str) -> list[tuple[float, str, str]]:
    return [(float(width), fill, title) for width, fill, title in
            re.findall(r'<rect [^>]*width="([\d.]+)"[^>]*fill="(#\w+)"><title>([^<]*)</title>', svg)]


def test_one_labelled_bar_per_model_in_registry_order_scaled_against_the_one_x_line():
    frame = to_dataframe(speedup_rows("resnet", 1, 3.0, 4.0) + speedup_rows("vit", 1, 4.0, 2.0)
                         + speedup_rows("convnext", 1, 4.0, 3.2, significant=False))
    svg = index_page.speedup_svg(frame)
    scale = index_page.CHART_WIDTH_PX / (2.0 * 1.05)  # px per 1x: the largest speedup is 2.0
    bars = _bars(svg)
    assert [title.split(" (")[0] for _, _, title in bars] == ["ViT-B/16", "ConvNeXt-L", "ResNet-50"]  # registry order
    assert ">ViT-B/16</text>" in svg and ">2.00×</text>" in svg  # each bar named and valued
    assert [fill for _, fill, _ in bars] == ["#1a7f37", "#9aa4ae", "#b42318"]  # worth it, not sure, slower
    assert bars[0][0] == round(2.0 * scale, 1) and bars[2][0] == round(0.75 * scale, 1)
    one = index_page.NAME_PX + scale
    assert f'x1="{one:.1f}"' in svg and "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_no_successful_compiled_cell_is_a_dash():
    frame = to_dataframe(speedup_rows("vit", 1, 4.0, 2.0)[:1])  # the eager cell alone
    assert index_page.speedup_svg(frame) == "—"


def _profile_folder(out, name: str, label: str, error: str = "", rows=()) -> None:
    from bench_utils.config.bench_config import BenchConfig

    folder = out / name
    folder.mkdir(parents=True)
    (folder / "results.jsonl").write_text("".join(row.to_json() + "\n" for row in rows))
    index_page.write_profile_state(folder, BenchConfig(label=label, configurations=("eager",)), f"{name}.yaml", error)


def test_the_index_lists_every_profile_folder_whichever_command_made_it(tmp_path):
    from conftest import make_row

    out = tmp_path / "reports"
    _profile_folder(out, "cpu", "CPU", rows=speedup_rows("vit", 1, 4.0, 2.0))
    (out / "cpu" / "report.html").write_text("<p>its page</p>")
    _profile_folder(out, "a100", "A100", error=f"ResultsLockedError: {out}/a100/results.jsonl is locked")
    (out / "a100" / "report.html").write_text("<p>the complete page of an earlier run</p>")
    (out / "old").mkdir()
    (out / "old" / "results.jsonl").write_text(make_row(label="Old").to_json() + "\n")  # no profile.json
    (out / "logs").mkdir()  # holds neither results nor a page: not a profile
    lines = index_page.profile_lines(out)
    assert [(line.label, line.page, line.error) for line in lines] == [
        ("A100", "a100/report.html", "ResultsLockedError: results.jsonl is locked"),
        ("CPU", "cpu/report.html", ""), ("Old", "old/report.html", "")]
    page = index_page.write_index(lines, out / "index.html", "summary.html").read_text()
    assert "failed: ResultsLockedError: results.jsonl is locked" in page and str(tmp_path) not in page
    assert '<a class="run" href="cpu/report.html">CPU</a>' in page and ".run{white-space:nowrap}" in page
    # "old" was measured by `run` alone: no page to link, and the line says what builds it
    assert [line.page_made for line in lines] == [True, True, False]
    assert 'href="old/report.html"' not in page and '<span class="run">Old</span>' in page
    # the command, as typed after `make report` (this reports folder, outside the checkout and the home folder,
    # is not named: a placeholder)
    assert 'no page yet: make report PARAMS=&quot;PARAMS.yaml --out DIR --report-only&quot; builds it' in page


def test_a_profile_whose_only_other_cells_are_not_supported_here_is_complete(tmp_path):
    """On a CPU without native bfloat16 the bfloat16 configurations are rows saying so: the index
    counts them apart and calls the run complete, not "2 failed" in red."""
    from conftest import make_row

    reason = "this CPU has no native bfloat16 (AVX2)"
    rows = speedup_rows("vit", 1, 4.0, 2.0) + [
        make_row("vit", 1, name, status="unsupported", error=reason)
        for name in ("eager+bf16-autocast", "default+bf16-autocast")]
    line = index_page.ProfileLine("CPU", "cpu/report.html", "cpu.yaml", "", len(to_dataframe(rows)), rows)
    page = index_page.write_index([line], tmp_path / "index.html", "summary.html").read_text()
    assert "2 not supported here<br>0 failed<br>0 missing" in page
    assert '<span class="ok">complete</span>' in page and 'class="failed"' not in page


def test_a_profile_whose_sweep_stopped_early_is_unfinished_not_complete(tmp_path):
    """Every cell has a row after a sweep stopped in its first pass (Ctrl-C after three of ten rounds):
    the index says how many rounds are still to measure, not "complete"."""
    rows = speedup_rows("vit", 1, 4.0, 2.0)
    line = index_page.ProfileLine("CPU", "cpu/report.html", "cpu.yaml", "", len(to_dataframe(rows)), rows,
                                  rules=Rules(params="cpu.yaml"), rounds_left=7)
    page = index_page.write_index([line], tmp_path / "index.html", "summary.html").read_text()
    # the run's one next step, as the page and the console say it
    assert ("next step: Finish the run (7 rounds of its first pass still to measure): "
            "make report PARAMS=&quot;cpu.yaml&quot;") in page
    assert '<span class="ok">complete</span>' not in page
    # profile.json carries the count from the report command to every later index
    from bench_utils.config.bench_config import BenchConfig

    folder = tmp_path / "out" / "cpu"
    folder.mkdir(parents=True)
    write_rows(folder / "results.jsonl", rows)  # the rows the page is made from, then its state
    index_page.write_profile_state(folder, BenchConfig(label="CPU"), "cpu.yaml", "", rounds_left=7)
    assert [line.rounds_left for line in index_page.profile_lines(tmp_path / "out")] == [7]


def test_results_measured_after_the_page_are_flagged_not_counted_with_the_page_s_rounds_left(tmp_path):
    """A page made after Ctrl-C (7 rounds left), then `run` finished the sweep into the same folder: the
    index reads the results as they are now, so it neither repeats the page's stale count nor calls
    the page current; it says to rebuild it."""
    from bench_utils.config.bench_config import BenchConfig

    folder = tmp_path / "out" / "cpu"
    folder.mkdir(parents=True)
    write_rows(folder / "results.jsonl", speedup_rows("vit", 1, 4.0, 2.0))
    index_page.write_profile_state(folder, BenchConfig(label="CPU"), "cpu.yaml", "", rounds_left=7)
    (folder / "report.html").write_text("<p>its page</p>")
    (line,) = index_page.profile_lines(tmp_path / "out")
    assert line.rounds_left == 7 and not line.page_behind  # as the page was made
    with open(folder / "results.jsonl", "ab") as results:  # a run appended rows since
        results.write(b"\n")
    (line,) = index_page.profile_lines(tmp_path / "out")
    assert line.page_behind and line.rounds_left == 0
    page = index_page.write_index([line], tmp_path / "index.html", "summary.html").read_text()
    assert ("its page is older than its results: rebuild it (make report PARAMS=&quot;cpu.yaml --out DIR "
            "--report-only&quot;)") in page
    assert "Finish the run" not in page and '<span class="ok">complete</span>' not in page


def write_rows(path, rows):
    from bench_utils.results.writer import ResultsWriter

    with ResultsWriter(path) as writer:
        for row in rows:
            writer.append(row)


def test_the_index_escapes_whatever_the_rows_say(tmp_path):
    from conftest import make_row

    hostile = '<img src=x onerror=alert(1)>'
    rows = [make_row(label=hostile, weights=hostile, env={"device_name": hostile})]
    line = index_page.ProfileLine(hostile, "x%3Cy/report.html", hostile, hostile, 1, rows)
    page = index_page.write_index([line], tmp_path / "index.html", "summary.html", hostile).read_text()
    assert "<img" not in page and page.count("&lt;img src=x onerror=alert(1)&gt;") == 7  # <title> says it too


def test_a_folder_holding_only_a_stray_page_is_no_run(tmp_path):
    """A profile folder is one with results, or with a page compile-bench wrote (its marker lists it):
    someone's report.html alone is not listed, least of all as "complete"."""
    from bench_utils.files import write_file

    stray = tmp_path / "notes"
    stray.mkdir()
    (stray / "report.html").write_text("<p>my notes</p>")
    refused = tmp_path / "refused"
    write_file(refused / "report.html", "<p>no report</p>", refused)  # a stub compile-bench wrote
    assert [line.label for line in index_page.profile_lines(tmp_path)] == ["refused"]


def test_a_results_file_that_is_refused_is_listed_with_why_and_the_others_stay(tmp_path):
    import json

    from conftest import make_row

    bad, good = tmp_path / "bad", tmp_path / "good"
    bad.mkdir()
    good.mkdir()
    other = make_row(repeat=1, env={"device": "cpu", "device_name": "Other CPU", "torch": "2.0"})
    (bad / "results.jsonl").write_text(make_row().to_json() + "\n" + other.to_json() + "\n")
    (good / "results.jsonl").write_text(make_row().to_json() + "\n")
    lines = {line.page: line for line in index_page.profile_lines(tmp_path)}
    assert lines["bad/report.html"].error.startswith("results.jsonl: line 2 was measured by another run")
    assert lines["good/report.html"].error == "" and len(lines["good/report.html"].rows) == 1
    assert str(tmp_path) not in json.dumps(lines["bad/report.html"].error)


def test_a_profile_state_that_is_a_link_huge_or_absurd_is_not_believed(tmp_path):
    import json

    from conftest import make_row

    secret = tmp_path / "elsewhere.json"
    secret.write_text(json.dumps({"label": "someone else's secret", "error": "", "expected_cells": 1}))
    for name, state in (("linked", None), ("huge", {"label": "x" * 200_000}), ("absurd", {"expected_cells": 10**30}),
                        ("long", {"label": "L" * 5000, "expected_cells": 4})):
        folder = tmp_path / "out" / name
        folder.mkdir(parents=True)
        (folder / "results.jsonl").write_text(make_row().to_json() + "\n")
        if state is None:
            (folder / "profile.json").symlink_to(secret)
        else:
            (folder / "profile.json").write_text(json.dumps(state))
    lines = {line.page.split("/")[0]: line for line in index_page.profile_lines(tmp_path / "out")}
    assert lines["linked"].label == "CPU" and lines["huge"].label == "CPU"  # the rows' label, not the state's
    assert lines["absurd"].expected_cells == 0 and lines["long"].label == "L" * 500


def test_a_refused_sweep_keeps_the_size_its_page_was_made_from_and_no_file_is_size_0(tmp_path):
    from bench_utils.config.bench_config import BenchConfig

    folder = tmp_path / "out" / "cpu"
    folder.mkdir(parents=True)
    cfg = BenchConfig(label="CPU")
    index_page.write_profile_state(folder, cfg, "cpu.yaml", "")  # a page made before any results
    write_rows(folder / "results.jsonl", speedup_rows("vit", 1, 4.0, 2.0))  # then a run
    (line,) = index_page.profile_lines(tmp_path / "out")
    assert line.page_behind
    index_page.write_profile_state(folder, cfg, "cpu.yaml", "SettingsMismatchError: ...", page_rebuilt=False)
    (line,) = index_page.profile_lines(tmp_path / "out")
    assert line.page_behind  # the refused sweep left the old page: still behind its results
    index_page.write_profile_state(folder, cfg, "cpu.yaml", "")  # rebuilt from them
    (line,) = index_page.profile_lines(tmp_path / "out")
    assert not line.page_behind


def test_a_run_measuring_now_is_listed_without_a_verdict_and_left_out_of_the_summary(tmp_path):
    """A second profile's report into the same folder listed a run still measuring as "4 ok, 0 missing,
    Compile 7.19x" after one round of three (the finished run: "Can't tell 3.29x"), and the summary
    compared its partial rows. A folder whose results a run holds locked is "measuring now"."""
    from bench_utils.results.writer import ResultsWriter

    out = tmp_path / "reports"
    _profile_folder(out, "live", "Live", rows=speedup_rows("vit", 1, 4.0, 1.0))
    _profile_folder(out, "done", "Done", rows=speedup_rows("vit", 1, 4.0, 2.0))
    with ResultsWriter(out / "live" / "results.jsonl"):
        lines = {line.label: line for line in index_page.profile_lines(out)}
        assert index_page.summarized_results(out) == [(out / "done" / "results.jsonl").resolve()]
    assert lines["Live"].measuring and not lines["Done"].measuring
    page = index_page.write_index(list(lines.values()), out / "index.html", "summary.html").read_text()
    live_row = next(row for row in page.split("<tr>") if ">Live<" in row)
    assert "measuring now" in live_row and "being measured now (pid " in live_row
    assert "×" not in live_row and "Compile" not in live_row  # no speedup, no verdict
    assert "2.00×" in next(row for row in page.split("<tr>") if ">Done<" in row)
    assert len(index_page.summarized_results(out)) == 2  # the run ended: both compared


def test_a_folder_of_another_results_format_is_left_out_of_the_summary_and_listed_with_why(tmp_path):
    """One folder written by an older compile-bench made every later summary fail ("notebook step 4:
    OtherFormatError"), exit 1, until it was moved: it is set apart on the index, the rest summarized."""
    import json

    out = tmp_path / "reports"
    _profile_folder(out, "new", "New", rows=speedup_rows("vit", 1, 4.0, 2.0))
    old = json.loads(speedup_rows("vit", 1, 4.0, 2.0)[0].to_json()) | {"format": 2}
    (out / "old").mkdir()
    (out / "old" / "results.jsonl").write_text(json.dumps(old) + "\n")
    assert index_page.summarized_results(out) == [(out / "new" / "results.jsonl").resolve()]
    lines = {line.page: line for line in index_page.profile_lines(out)}
    assert "written by an older compile-bench" in lines["old/report.html"].error
