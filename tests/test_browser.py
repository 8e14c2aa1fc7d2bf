"""The exported HTML in a real headless Chromium: tables render (itables, offline), images load, and
no JavaScript error is logged. Skips without Chromium unless REQUIRE_BROWSER=1 (CI sets it)."""

import os
import shutil

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail("REQUIRE_BROWSER=1 but chromium/chromedriver are not installed")
        pytest.skip("headless Chromium not installed (Debian: chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # no network here: background requests would only fail and slow the start
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1280,900"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _open(browser, path):
    browser.get(path.resolve().as_uri())
    browser.get_log("browser")  # drop what an earlier page logged
    browser.refresh()
    return browser


def _rendered(browser, css: str, at_least: int = 1) -> list:
    """The elements matching `css` once the page's scripts made at least `at_least` of them (itables
    builds its tables from module scripts, a moment after the page loaded)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 20).until(lambda b: len(b.find_elements("css selector", css)) >= at_least)
    return browser.find_elements("css selector", css)


def _severe(browser) -> list[str]:
    return [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def _loaded_images(browser) -> tuple[int, int]:
    sizes = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth]);")
    return len(sizes), sum(1 for complete, width in sizes if complete and width > 0)


def test_index_page_links_profiles(browser, fixture_report):
    page = _open(browser, fixture_report[1] / "index.html")
    rows = page.find_elements("css selector", "tbody tr")
    assert len(rows) == 1 and "Fixture CPU" in rows[0].text and "1 failed, 1 missing" in rows[0].text
    assert _severe(page) == []


def test_profile_page_renders_interactive_tables_and_charts(browser, fixture_report):
    page = _open(browser, fixture_report[1] / "fixture-cpu" / "report.html")
    # itables turns each shown table into a DataTable, with its JavaScript embedded (offline)
    tables = _rendered(page, "table.dataTable", at_least=5)  # times out unless 5 tables render
    assert any("OOM" in t.text for t in tables)
    total, loaded = _loaded_images(page)
    assert total >= 6 and loaded == total
    assert _severe(page) == []


def test_summary_table_filters_by_model(browser, fixture_report):
    """The guide's "select subset": a column filter in the header narrows the table to one model."""
    from selenium.webdriver.common.by import By

    page = _open(browser, fixture_report[1] / "summary.html")
    table = _rendered(page, ".dt-container")[0]  # the table of every compiled cell
    before = len(table.find_elements(By.CSS_SELECTOR, "tbody tr"))
    table.find_element(By.CSS_SELECTOR, "thead input[placeholder='Model']").send_keys("resnet")
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert 0 < len(rows) < before and all("ResNet" in row.text for row in rows)
    assert _severe(page) == []


def _overflowing_tables(browser) -> list[str]:
    """Captions (or classes) of the tables wider than the box they sit in."""
    return browser.execute_script("""
        return Array.from(document.querySelectorAll('table')).filter(t => {
            const box = t.closest('.dt-container') || t.parentElement;
            return t.scrollWidth > box.clientWidth + 1;
        }).map(t => t.caption ? t.caption.innerText : t.className);""")


@pytest.mark.parametrize("page_path", ["fixture-cpu/report.html", "summary.html", "index.html"])
def test_pages_fit_a_1280_px_window(browser, fixture_report, page_path):
    """No horizontal scrolling at 1280 px: the page itself, and every table inside its box; wide tables
    show their key columns and a Columns button for the rest."""
    page = _open(browser, fixture_report[1] / page_path)
    if page_path != "index.html":
        _rendered(page, "table.dataTable", at_least=2 if page_path == "summary.html" else 4)
    assert page.execute_script("return window.innerWidth") <= 1280
    assert page.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    assert _overflowing_tables(page) == []
    if page_path != "index.html":
        buttons = [b.text for b in page.find_elements("css selector", "button.buttons-colvis")]
        assert buttons and all(text.startswith("Columns (") for text in buttons)


def test_columns_button_reveals_hidden_columns(browser, fixture_report):
    page = _open(browser, fixture_report[1] / "fixture-cpu" / "report.html")
    table = next(t for t in _rendered(page, "table.dataTable", at_least=4) if "Eager against compiled, per cell" in t.text)
    container = table.find_element("xpath", "./ancestor::div[contains(@class, 'dt-container')]")
    shown = len(table.find_elements("css selector", "thead th"))
    page.execute_script("arguments[0].click()", container.find_element("css selector", "button.buttons-colvis"))
    toggles = _rendered(page, ".dt-button-collection .dt-button:not(.dt-button-active)")
    page.execute_script("arguments[0].click()", toggles[0])
    assert len(table.find_elements("css selector", "thead th")) == shown + 1


def _first_screen_text(browser, css: str) -> str:
    """Text of the elements matching `css` whose top is within the first 900 px of the page."""
    return browser.execute_script("""
        return Array.from(document.querySelectorAll(arguments[0]))
            .filter(e => e.getBoundingClientRect().top + window.scrollY < 900).map(e => e.innerText).join(' | ');""",
                                  css)


HEADER_FACTS = ("Fixture CPU", "Fixture CPU (synthetic rows), 2 cores", "torch 2.fixture", "transformers 5.fixture",
                "measured 2026-11-23", "random weights")


def test_report_page_says_its_answer_in_words_on_the_first_screen(browser, fixture_report):
    """At 1280 px: the header facts in <title> and on the first screen, the verdict and its legend
    there too, then no stray print, no DataFrame column name and no number with 5+ decimals anywhere."""
    import re

    from bench_utils.results.record import COLUMNS as CELL_COLUMNS
    from bench_utils.report import tables
    from bench_utils.results.aggregate import load_dataframe

    page = _open(browser, fixture_report[1] / "fixture-cpu" / "report.html")
    _rendered(page, "table.dataTable", at_least=4)
    assert all(fact in page.title for fact in HEADER_FACTS), page.title
    first = _first_screen_text(page, ".bench-header, table.bench-verdict, .bench-legend")
    assert all(fact in first for fact in HEADER_FACTS), first
    assert "Compile — compile (default mode): 2.00× faster (" in first  # the answer, its figure and interval
    assert "batch 1, float32, CPU" in first and "batch 4, CPU" in first  # for what (batch 4: nothing to recommend)
    assert "can't tell" in first and "warm" in first  # the legend says what the words mean
    assert page.find_elements("css selector", "[data-mime-type='application/vnd.jupyter.stdout'], "
                                              "[data-mime-type='application/vnd.jupyter.stderr']") == []
    text = page.execute_script("return document.body.innerText")
    assert "measure = False" not in text
    df = load_dataframe(fixture_report[1] / "fixture-cpu" / "results.jsonl")
    raw = {c for c in CELL_COLUMNS + list(tables.compile_table(df).columns) + list(tables.main_table(df).columns)
           if "_" in c}
    assert sorted(name for name in raw if re.search(rf"\b{re.escape(name)}\b", text)) == []
    assert re.findall(r"\d\.\d{5,}", text) == []
    assert "NaN" not in text and " inf" not in text


def test_report_page_links_its_cells_as_csv(browser, fixture_report):
    import csv

    page = _open(browser, fixture_report[1] / "fixture-cpu" / "report.html")
    link = page.find_element("css selector", "a[href='cells.csv']")
    target = fixture_report[1] / "fixture-cpu" / link.get_attribute("href").rsplit("/", 1)[-1]
    with target.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 7  # 8 cells of the profile, one never measured
    assert {"model", "checkpoint", "latency_ms_median", "speedup"} <= set(rows[0])


def test_index_names_each_profile_s_machine_first(browser, fixture_report):
    page = _open(browser, fixture_report[1] / "index.html")
    assert all(fact in page.title for fact in HEADER_FACTS), page.title
    first = _first_screen_text(page, "tbody tr")
    assert all(fact in first for fact in HEADER_FACTS[1:]), first
    assert "ViT-B/16 (batch 1): compile, 2.00× (" in first and "s cold" in first  # interval and cost as text
