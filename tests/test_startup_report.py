"""The page's start-up answer (report/startup.py) from fixture rows: a table per model (form, first answer
in a new process, steady latency, what it ships, pay-back against eager) and one sentence."""

from bench_utils.report.startup import startup_html, startup_sentence, startup_table
from bench_utils.results.aggregate import to_dataframe
from bench_utils.results.startup import start_rows
from conftest import make_row
from test_startup_table import fixture_rows


def test_the_table_says_each_start_in_words_with_units():
    table = startup_table(start_rows(to_dataframe(fixture_rows())))
    assert list(table.columns) == ["Form", "First answer in a new process", "Steady latency", "Ships",
                                   "Pays back against eager (calls)"]
    rows = table.set_index("Form")
    assert rows.loc["eager float32 (no compile)"].tolist() == ["1.00 s", "30.0 ms", "nothing more", "—"]
    assert rows.loc["compile (default mode), from an empty compiler cache"].tolist() == [
        "41.0 s", "20.0 ms", "nothing more", "after 4,000 calls"]
    assert rows.loc["compile (default mode), from its own filled compiler cache"].tolist() == [
        "6.00 s", "20.0 ms", "its compiler cache, on the machine", "after 500 calls"]
    assert rows.loc["compile (default mode) shipped as portable cache artifacts"].tolist() == [
        "16.0 s", "20.0 ms", "2.00\u00a0MB, built once in 41\u00a0s", "after 1,500 calls"]
    assert rows.loc["an AOTInductor package with freezing"].tolist() == [
        "0.500 s", "18.0 ms", "110\u00a0MB, built once in 50\u00a0s", "from its first call"]
    assert rows.loc["ONNX Runtime", "Pays back against eager (calls)"] == "never: not faster a call"
    assert rows.loc["torch.compiler.precompile"].tolist() == [
        "ERROR: PrecompileError: a tensor baked as a constant", "—", "—", "—"]


def test_the_sentence_names_the_form_at_full_speed_soonest_and_when_each_pays_back():
    text = startup_sentence("vit", start_rows(to_dataframe(fixture_rows())))
    assert text.startswith("ViT-B/16: a new replica is at full speed soonest as an AOTInductor package with "
                           "freezing: its first answer after 0.500 s, then 18.0 ms a call (eager float32: 1.00 s, then 30.0 ms); "
                           "against eager started the same way, ")
    assert "compile (default mode), from its own filled compiler cache after 500 calls" in text
    assert "ONNX Runtime never: not faster a call" in text and "precompile" not in text  # failed: in the table only


def test_no_form_faster_than_eager_says_so():
    rows = [make_row(configuration="eager", ms=30.0, first_answer_s=1.0),
            make_row(configuration="onnxruntime", ms=35.0, first_answer_s=0.8, ships_bytes=10, accuracy_ok=True)]
    assert startup_sentence("vit", start_rows(to_dataframe(rows))) == (
        "ViT-B/16: no form was faster a call than eager float32 in these rounds: a replica starts soonest eager.")


def test_the_section_is_there_only_where_starts_were_timed_and_escapes_its_text():
    assert startup_html(to_dataframe([make_row(configuration="eager"), make_row(configuration="default")])) == ""
    rows = fixture_rows()
    rows[-1] = make_row(configuration="precompile", status="error", error="<script>alert(1)</script>")
    html = startup_html(to_dataframe(rows))
    assert html.startswith("<h2>Start-up: what a new process pays before its first answer</h2>")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert html.count('class="dataframe bench-startup"') == 1  # one model
    # the code of each form, from its declaration (config/modes.py, configurations.py)
    assert "torch.compiler.load_cache_artifacts(data)" in html and "aoti_load_package" in html
