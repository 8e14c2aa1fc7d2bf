"""The one place text becomes HTML, and the one way a page is written: escaping, atomic writes that
never follow a symlink nor leave their folder, and no absolute local path in what is published."""

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from bench_utils.config.bench_config import ConfigError
from bench_utils.files import write_file
from bench_utils.paths import inside, relative_text
from bench_utils.report import page_html

HOSTILE = '<img src=x onerror=alert(1)>'


def test_escape_leaves_no_tag_nor_attribute():
    assert page_html.escape(HOSTILE) == "&lt;img src=x onerror=alert(1)&gt;"
    assert page_html.escape('" onmouseover="x') == "&quot; onmouseover=&quot;x"


def test_markdown_escapes_html_but_keeps_markdown():
    text = page_html.Markdown(f"**labels**: {HOSTILE} & `code`").data
    assert "<img" not in text and "&lt;img" in text and "**labels**" in text and "&amp;" in text


@pytest.mark.parametrize("text", ["Before: runs/[c](javascript:alert(1)).jsonl", "![i](x.png)", "[r][1]\n\n[1]: javascript:x",
                                  "see https://example.org/x"])
def test_markdown_text_becomes_no_link_and_no_image(text):
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    rendered = markdown2html_mistune(page_html.Markdown(f"## Compare\n\n{text} and **bold**").data)
    assert "<a " not in rendered.replace('<a class="anchor-link" href="#Compare">', "") and "<img" not in rendered
    assert "<strong>bold</strong>" in rendered and "<h2" in rendered


def test_table_escapes_cells_index_and_column_names():
    frame = pd.DataFrame({HOSTILE: [HOSTILE, 1.5]}, index=pd.Index([HOSTILE, "host"], name="fact"))
    rendered = page_html.table(frame).to_html()
    assert "<img" not in rendered and rendered.count("&lt;img") == 3


def test_a_model_name_in_a_table_does_not_wrap_at_its_hyphen():
    rendered = page_html.table(pd.DataFrame({"Model": ["ResNet-50"], "Why not compared": ["only in before"]})).to_html()
    rules = rendered[:rendered.index("</style>")]
    assert "white-space: nowrap" in rules and "_col0" in rules and "_col1" not in rules  # the Model column only


def test_a_run_label_in_a_table_does_not_wrap_either():
    frame = pd.DataFrame({"Run": ["CPU full-size"], "Batch (images)": [1], "Model": ["ResNet-50"]})
    rules = (rendered := page_html.table(frame).to_html())[:rendered.index("</style>")]
    assert "_col0" in rules and "_col2" in rules and "_col1" not in rules  # Run and Model, not the figures


def test_write_page_replaces_a_symlink_where_it_wrote_a_page_and_leaves_its_target(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious")
    out = tmp_path / "out"
    write_file(out / "index.html", "<p>old</p>", out)  # compile-bench's page: the marker lists it
    (out / "index.html").unlink()
    (out / "index.html").symlink_to(target)  # then someone swaps in a link
    write_file(out / "index.html", "<p>page</p>", out)
    assert target.read_text() == "precious"
    assert not (out / "index.html").is_symlink() and (out / "index.html").read_text() == "<p>page</p>"
    assert sorted(p.name for p in out.iterdir()) == [".compile-bench", "index.html"]  # no temporary file left


def test_write_page_refuses_a_link_it_did_not_write_and_leaves_its_target(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").symlink_to(target)
    with pytest.raises(OSError, match="not written by compile-bench"):
        write_file(out / "index.html", "<p>page</p>", out)
    assert target.read_text() == "precious" and (out / "index.html").is_symlink()


def test_write_page_refuses_a_path_outside_its_folder(tmp_path):
    with pytest.raises(ConfigError, match="outside"):
        write_file(tmp_path / "out" / ".." / "escape.html", "x", tmp_path / "out")
    assert not (tmp_path / "escape.html").exists()


def test_inside_resolves_parent_symlinks(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "link").symlink_to(tmp_path)
    with pytest.raises(ConfigError, match="outside"):
        inside(tmp_path / "out" / "link" / "x.log", tmp_path / "out")
    assert inside(tmp_path / "out" / "a" / "x.log", tmp_path / "out") == tmp_path / "out" / "a" / "x.log"


def test_relative_text_names_no_local_path(tmp_path):
    folder = tmp_path / "reports" / "cpu"
    text = f"SettingsMismatchError: {folder}/results.jsonl; see {tmp_path}/reports/other/results.jsonl"
    assert relative_text(text, folder) == ("SettingsMismatchError: results.jsonl; see "
                                                    "../other/results.jsonl")
    assert str(Path.home()) + os.sep not in relative_text(f"{Path.home()}/x", folder)
    assert relative_text(f"cd {folder}; ls {folder}-tiny", folder) == "cd .; ls ../cpu-tiny"
    assert relative_text("see https://example.org/x", Path("/reports")) == "see https://example.org/x"


def test_published_notebook_drops_papermill_paths(tmp_path):
    folder = tmp_path / "reports" / "cpu"
    folder.mkdir(parents=True)
    executed = folder / ".benchmark.ipynb.running"
    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "outputs": [],
                     "source": [f'results_path = "{folder}/results.jsonl"\n']}],
          "metadata": {"papermill": {"input_path": "/checkout/notebooks/benchmark.ipynb",
                                     "output_path": str(folder / "benchmark.ipynb"),
                                     "parameters": {"results_path": str(folder / "results.jsonl")}}},
          "nbformat": 4, "nbformat_minor": 5}
    executed.write_text(json.dumps(nb))
    page_html.published_notebook(executed, folder / "benchmark.ipynb")
    published = (folder / "benchmark.ipynb").read_text()
    assert not executed.exists() and str(tmp_path) not in published and "input_path" not in published
    assert json.loads(published)["metadata"]["papermill"]["parameters"] == {"results_path": "results.jsonl"}
