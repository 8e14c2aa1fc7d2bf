"""The project's words: pointers into the measurement log name an entry there, the code carries no run
history, and no file speaks of how its measurements' machine time was obtained."""

import re
from pathlib import Path

from conftest import REPO

LOG = REPO / "benchmarks" / "README.md"
TEXT_SUFFIXES = {".md", ".py", ".sh", ".yaml", ".yml", ".ipynb", ".toml", ".cfg", ".txt", ".j2", ".json"}


def project_files() -> list[Path]:
    """The files a checkout holds (not its environment, caches, or generated reports)."""
    skip = {".git", ".venv", ".cache", "build", "__pycache__", ".pytest_cache", ".ipynb_checkpoints"}
    found = []
    for path in REPO.rglob("*"):
        parts = path.relative_to(REPO).parts
        if any(part in skip or part.endswith(".egg-info") for part in parts) or not path.is_file():
            continue
        if parts[0] == "reports" and path.name != "README.md":
            continue
        if path.suffix in TEXT_SUFFIXES or path.name in ("Makefile", "run"):
            found.append(path)
    return found


def log_anchors() -> set[str]:
    return set(re.findall(r'<a id="([a-z0-9-]+)"></a>', LOG.read_text()))


def test_every_pointer_into_the_measurement_log_names_an_entry():
    anchors = log_anchors()
    assert len(anchors) > 40
    pointers = {(str(path.relative_to(REPO)), anchor) for path in project_files()
                for anchor in re.findall(r"benchmarks/README\.md#([A-Za-z0-9_-]+)", path.read_text(errors="replace"))}
    pointers |= {("benchmarks/README.md", anchor) for anchor in re.findall(r"\]\(#([^)]+)\)", LOG.read_text())}
    assert len(pointers) > 40
    assert sorted(p for p in pointers if p[1] not in anchors) == []


def test_the_logs_index_lists_every_entry():
    text = LOG.read_text()
    index = text[text.index("## Index"):text.index("## The scripts")]
    assert sorted(anchor for anchor in log_anchors() if f"(#{anchor})" not in index) == []


DATE = re.compile(r"\b20\d\d-\d\d(-\d\d)?\b")


def test_at_most_five_lines_of_the_package_carry_a_date():
    # a comment says why; the run that showed it is a pointer into the log, by its entry's name
    dated = [f"{path.relative_to(REPO)}:{number}" for path in sorted((REPO / "bench_utils").rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1) if DATE.search(line)]
    assert len(dated) <= 5, dated


# How a team obtained machine time is not the project's business: a user has none of it.
OBTAINING = re.compile(r"\b((minutes|seconds|\d+ s) of device time|device time (left|budget)|can_start_another|not drawn|drawn for a device|lends? (no )?(a )?device|"
                       r"device (tool|machine)|budget_left|(a|the) session('s)? (had|lent|with)|sessions? without a "
                       r"device|machine's start|timeout_s[` ]+600|lent (a|to|this)|was lent)\b", re.IGNORECASE)


def test_no_file_speaks_of_how_machine_time_was_obtained():
    said = [f"{path.relative_to(REPO)}: {match.group(0)}" for path in project_files() if path.parts[-2] != "tests"
            for match in OBTAINING.finditer(path.read_text(errors="replace"))]
    assert said == []


METHOD = REPO / "docs" / "method.md"
# the words the README, the pages and --help lean on: each defined once, in the method's glossary
JARGON = ("profile", "run", "cell", "cell-group", "configuration", "mode", "modifier", "eager", "worker", "block",
          "round", "race", "speedup", "interval", "half-width", "margin", "budget", "answer", "cold-compile",
          "pay-back", "profiler-pass", "study")


def glossary_anchors() -> set[str]:
    text = METHOD.read_text()
    return set(re.findall(r'<a id="(term-[a-z-]+)"></a>', text[text.index("## Glossary"):]))


def test_the_glossary_defines_every_word_the_pages_link_and_the_readme_leans_on():
    from bench_utils.report.glossary import PAGE_TERMS

    anchors = glossary_anchors()
    assert sorted(set(PAGE_TERMS.values()) - anchors) == []
    assert sorted({f"term-{word}" for word in JARGON} - anchors) == []


def test_every_link_to_a_glossary_word_lands():
    anchors = glossary_anchors() | {"glossary"}
    links = {(str(path.relative_to(REPO)), anchor) for path in project_files() if path.suffix in (".md", ".py")
             for anchor in re.findall(r"method\.(?:md|html)#([a-z0-9-]+)", path.read_text(errors="replace"))
             if anchor.startswith("term-") or anchor == "glossary"}
    assert links and sorted(link for link in links if link[1] not in anchors) == []


def markdown_anchors(path: Path) -> set[str]:
    """The anchors a Markdown file offers on GitHub: its headings' ids and its explicit <a id=...>."""
    from bench_utils.report.method_page import heading_id

    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    headings = [heading_id(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)]
    return set(headings) | set(re.findall(r'<a id="([^"]+)"', text))


def test_every_link_between_the_documents_lands_on_an_anchor():
    documents = [REPO / "README.md", LOG, *(REPO / "docs").glob("*.md")]
    broken = []
    for path in documents:
        for target, anchor in re.findall(r"\]\(([^)#\s]*\.md)?#([^)\s]+)\)", path.read_text()):
            where = (path.parent / target).resolve() if target else path
            if not where.is_file() or anchor not in markdown_anchors(where):
                broken.append(f"{path.relative_to(REPO)} -> {target}#{anchor}")
    assert broken == []


README = REPO / "README.md"


def test_the_readme_is_short_and_answers_on_its_first_screen():
    lines = README.read_text().splitlines()
    assert len(lines) <= 150
    cells = [cell.strip() for line in lines if line.startswith("|") for cell in line.strip().strip("|").split("|")]
    assert max(map(len, cells)) <= 300
    first_screen = "\n".join(lines[:40])
    assert "make report" in first_screen and "**How long**" in first_screen and "| machine |" in first_screen
    assert not DATE.search(README.read_text())  # its figures point into the log, which dates them
