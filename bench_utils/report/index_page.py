"""reports/index.html: one line per profile (its header: machine, software, date, weights; cells ok /
failed / missing; the verdict with a labelled bar per model) linking its page, and a flag on every
profile whose notebook failed. Rebuilt from every profile folder present (its results and
profile.json), so two commands on one reports folder, at once or in turn, both stay listed. No torch."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..config.bench_config import ConfigError
from ..config.registry import display_name
from ..files import write_file, written_here
from ..paths import out_argument, relative_text
from ..results import decision as codes
from ..results.aggregate import to_dataframe
from ..results.rows import read_results
from ..results.writer import writing_pid
from .display import MISSING, number
from .glossary import linked_terms
from .header import page_header
from .page_html import escape
from .tables import cell_states, cell_states_text
from .verdict import Rules, run_next_step, verdict_short, verdicts

PROFILE_STATE = "profile.json"  # in each profile folder: what the last report command of it knew
MAX_CELLS = 1_000_000  # a profile's cells (models x batch sizes x modes) or rounds at most: a larger count is no count

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:72rem;margin:2rem auto;
padding:0 1rem;color:#1f2328}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #d0d7de;padding:.45rem .6rem;
text-align:left}th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
.failed{color:#b42318;font-weight:600}.ok{color:#1a7f37;font-weight:600}.next{color:#1f2328}.random{color:#9a6700;font-weight:600}
small{color:#57606a}.run{white-space:nowrap}
"""


@dataclass(frozen=True)
class ProfileLine:
    label: str
    page: str  # link relative to index.html
    params: str  # parameters file name
    error: str  # "" when the notebook ran through
    expected_cells: int
    rows: list  # BenchResult rows read from the profile's results file
    rules: Rules = Rules()  # the profile's margin and precision (profile.json)
    rounds_left: int = 0  # first-pass rounds the sweep had still to run when the page was made (profile.json)
    # the results file changed after the page was made (a run since): the page, and rounds_left, speak of less
    page_behind: bool = False
    page_made: bool = True  # its report.html exists (a folder `run` alone measured into has none: no link)
    measuring: str = ""  # the pid of a run writing its results now: its rows are partial, no verdict yet

    @cached_property
    def frame(self):
        """The rows as cells (aggregate.to_dataframe), built once: what the counts, speedups and verdict
        speak of."""
        return to_dataframe(self.rows)


CHART_WIDTH_PX, BAR_PX, NAME_PX = 150, 12, 150  # the index's per-profile speedup chart


def speedup_svg(frame, rules: Rules = Rules()) -> str:
    """A small inline SVG: one labelled bar per model, in the verdict's order and from the verdict's
    cell, its speedup from 0 with a line at 1× (green: worth it, red: slower, grey: otherwise). Inline,
    so the index needs no image files and no network; the figures themselves are text beside it."""
    table = verdicts(frame, rules)
    table = table[table["race_speedup"].notna()]
    if table.empty:
        return MISSING
    scale = CHART_WIDTH_PX / max(2.0, float(table["race_speedup"].max()) * 1.05)  # px per 1x
    colours = {codes.COMPILE: "#1a7f37", codes.USE: "#1a7f37", codes.SLOWER: "#b42318"}
    parts = []
    for i, row in enumerate(table.itertuples()):
        y = i * (BAR_PX + 4)
        name = display_name(row.model)
        parts.append(f'<text x="{NAME_PX - 4}" y="{y + BAR_PX - 2}" text-anchor="end" font-size="11">'
                     f"{escape(name)}</text>"
                     f'<rect x="{NAME_PX}" y="{y}" width="{row.race_speedup * scale:.1f}" height="{BAR_PX}" '
                     f'fill="{colours.get(row.verdict, "#9aa4ae")}"><title>{escape(row.summary)}</title></rect>'
                     f'<text x="{NAME_PX + row.race_speedup * scale + 3:.1f}" y="{y + BAR_PX - 2}" font-size="10">'
                     f"{number(row.race_speedup)}×</text>")
    height = len(table) * (BAR_PX + 4)
    width = NAME_PX + CHART_WIDTH_PX + 40
    one = NAME_PX + scale
    return (f'<svg class="speedups" width="{width}" height="{height}" role="img" aria-label="speedup per model">'
            f'{"".join(parts)}<line x1="{one:.1f}" x2="{one:.1f}" y1="0" y2="{height}" stroke="#1f2328" '
            'stroke-width="1"><title>1×: as fast as eager</title></line></svg>')


def _row_html(line: ProfileLine) -> str:
    failed = cell_states(line.frame)[-1]
    missing = max(line.expected_cells - len(line.frame), 0)
    problems = []
    if not line.page_made:  # measured by `run` alone: the folder has rows, no page to link
        problems.append(f"no page yet: {line.rules.measuring_command('--report-only')} builds it")
    elif line.page_behind:
        problems.append(f"its page is older than its results: rebuild it ({line.rules.measuring_command('--report-only')})")
    if failed or missing:
        problems.append(f"{failed} failed, {missing} missing")
    step = ""
    if line.measuring:  # a live run's first rounds are no verdict: "Compile 7.19x" after 1 round of 3
        problems = [f"being measured now (pid {line.measuring}): no verdict until its run ends and rebuilds this "
                    "index"]
    else:
        step = run_next_step(line.frame, line.rules, line.rounds_left)  # the page's and the console's, word for word
    # what went wrong in red; the run's next step, a thing to do rather than a fault, in the text's colour
    state = (f'<span class="failed">failed: {escape(line.error)}</span>' if line.error
             else f'<span class="failed">{escape("; ".join(problems))}</span>' if problems
             else '<span class="ok">complete</span>' if not step else "")
    if step and not line.error:
        state += f'{"<br>" if state else ""}<span class="next">next step: {escape(step)}</span>'
    head = page_header(line.frame, line.label)
    weights = escape(head.weights)
    if "random" in head.weights:
        weights = f'<span class="random">{weights}</span>'
    if head.size:  # tiny configurations: their names are the checkpoints' architectures, not their sizes
        weights += f'<br><span class="random">{escape(head.size)}</span>'
    # the run's name on one line, as in every table of the pages (display.ONE_LINE_LABELS)
    name = (f'<a class="run" href="{escape(line.page)}">{escape(line.label)}</a>' if line.page_made
            else f'<span class="run">{escape(line.label)}</span>')
    return (f"<tr><td>{name}<br>"
            f"<small>{escape(line.params)}</small></td>"
            f"<td>{escape(head.hardware)}<br><small>{escape(head.software)}<br>"
            f"{escape(head.date)}</small><br>{weights}</td>"
            f"<td class=num>{cell_states_text(line.frame, '<br>')}<br>{missing} missing</td>"
            f"<td>{_verdict_html(line)}</td>"
            f"<td>{state}</td></tr>")


def _verdict_html(line: ProfileLine) -> str:
    if line.measuring:
        return "measuring now"
    return (f"{'<br>'.join(escape(text) for text in verdict_short(line.frame, line.rules)) or MISSING}"
            f"<br>{speedup_svg(line.frame, line.rules)}")


def summarized_results(out_dir: Path) -> list[Path]:
    """The profile folders' results files the summary compares: not one a run is writing now (its rows
    partial: a verdict after one round of three) nor one refused when read (another format, several
    runs, too large: the summary failed on every later report until the folder was moved); the index
    lists both with why."""
    return [results for results in sorted(Path(out_dir).resolve().glob("*/results.jsonl"))
            if writing_pid(results) is None and not rows_or_refusal(results)[1]]


def rows_or_refusal(results: Path) -> tuple[list, str]:
    """The results file's rows (none when it is missing), and "" or why the file was refused
    (ConfigError: too large, rows of several runs, another format): one bad folder leaves the others
    listed."""
    try:
        return (read_results(results).rows if results.exists() else []), ""
    except ConfigError as err:
        return [], relative_text(str(err), results.parent)


def write_profile_state(folder: Path, cfg, params: str, error: str, rounds_left: int = 0,
                        page_rebuilt: bool = True) -> None:
    """What the index needs of a profile beyond its rows, kept in its folder: the index is rebuilt from
    every profile folder present, whichever command made it. `rounds_left`: first-pass rounds the
    sweep had still to run (sweep/adaptive.first_pass_state); the size of the results file the page
    was made from (page_behind): now where the page was made now (0 with no file yet), else the size
    the last state recorded (a refused sweep leaves the page it had)."""
    results = folder / "results.jsonl"
    size = results.stat().st_size if results.is_file() else 0
    if not page_rebuilt:
        size = _profile_state(folder).get("results_bytes", size)
    state = {"label": cfg.label, "params": params, "error": relative_text(error, folder),
             "expected_cells": len(cfg.cells()), "rounds_left": rounds_left, "worthwhile": cfg.worthwhile,
             "target_halfwidth": cfg.target_halfwidth, "budget_min": cfg.budget_min, "max_repeats": cfg.max_repeats,
             "results_bytes": size}
    write_file(folder / PROFILE_STATE, json.dumps(state) + "\n", folder)


MAX_STATE_BYTES = 100_000  # profile.json is a few hundred bytes


def _profile_state(folder: Path) -> dict:
    """What the last report command of a profile knew (profile.json): read only when it is a file of
    the folder's own (a link to another file is not read into the index) and of a believable size."""
    path = folder / PROFILE_STATE
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_STATE_BYTES:
            return {}
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return state if isinstance(state, dict) else {}


def _rules(state: dict, results: Path) -> Rules:
    """The profile's verdict rules from its profile.json (the defaults for a value that is not a number),
    its advice a command on its parameters file and `results`' reports folder."""
    values = {key: state[key] for key in ("worthwhile", "target_halfwidth", "budget_min", "max_repeats")
              if type(state.get(key)) in (int, float) and 0 <= state[key] < 1e6}
    return Rules(**values, params=_text(state, "params", ""), out=out_argument(results))


def _text(state: dict, key: str, default: str) -> str:
    return state[key][:500] if isinstance(state.get(key), str) else default  # a line of the index, not a book


def profile_lines(out_dir: Path) -> list[ProfileLine]:
    """One line per profile folder under `out_dir` (one holding results or a page), by folder name."""
    from urllib.parse import quote

    lines = []
    for folder in sorted(p for p in Path(out_dir).iterdir() if p.is_dir() and not p.is_symlink()):
        results, page = folder / "results.jsonl", folder / "report.html"
        if not (results.is_file() or (page.is_file() and written_here(page))):
            continue  # a stray report.html compile-bench did not write is no run of its
        state, (rows, refused) = _profile_state(folder), rows_or_refusal(results)
        expected, left = state.get("expected_cells"), state.get("rounds_left")
        behind = page_behind(results, state)
        measuring = writing_pid(results) or ""
        lines.append(ProfileLine(_text(state, "label", rows[0].label if rows else folder.name),
                                 f"{quote(folder.name)}/report.html",  # quoted: a relative link, whatever the name
                                 _text(state, "params", ""), refused or _text(state, "error", ""),
                                 expected if type(expected) is int and 0 <= expected <= MAX_CELLS else 0, rows,
                                 _rules(state, results), left if type(left) is int and 0 <= left <= MAX_CELLS and not behind
                                 else 0, behind, page.is_file(), measuring))
    return lines


def page_behind(results: Path, state: dict) -> bool:
    """Has `results` changed since the profile's last report command (a `run` into its folder since)? Its
    size then differs from the one profile.json recorded (a results file only grows); the index reads the
    results as they are now, the page and its count of rounds left speak of them as they were. Sizes, not
    times: a folder copied back from a GPU machine gets new times in any order."""
    recorded = state.get("results_bytes")
    try:
        return type(recorded) is int and results.is_file() and results.stat().st_size != recorded
    except OSError:
        return False


def _title(lines: list[ProfileLine]) -> str:
    """The index's <title>: each run's header facts."""
    heads = [page_header(line.frame, line.label) for line in lines]
    return "torch.compile benchmark: " + " | ".join(h.title for h in heads) if heads else "torch.compile benchmark"


METHOD_LINK = "method.html"  # docs/method.md rendered beside the index (report/build.copy_method)
# what the index shows, its jargon linked to the method's glossary
INTRO = linked_terms(
    "Should you <code>torch.compile</code> these Hugging Face vision models? One page per machine. Per model: the\n"
    "verdict, the speedup of its fastest accurate configuration (eager float32 latency ÷ its latency) with the 95%\n"
    "interval, and what compiling costs; the bar draws that speedup (1× = as fast as eager; green: worth it, red:\n"
    "slower, grey: a gain too small or not sure). Models built with\n"
    '<span class="random">random</span> weights have the checkpoint\'s architecture, not its weights: latency stands,\n'
    "predictions do not.", METHOD_LINK)


def write_index(lines: list[ProfileLine], path: Path, summary_page: str | None, summary_error: str = "") -> Path:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = "\n".join(_row_html(line) for line in lines)
    summary = ""
    if summary_page:
        flag = f' <span class="failed">(failed: {escape(summary_error)})</span>' if summary_error else ""
        summary = f'<p><a href="{escape(summary_page)}">Compare all runs side by side</a>{flag}</p>'
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(_title(lines))}</title>
<style>{_STYLE}</style></head><body>
<h1>torch.compile vs eager: benchmark reports</h1>
<p>{INTRO}</p>
<table><thead><tr><th>Run</th><th>Machine</th><th>Cells</th><th>Verdict</th><th>State</th></tr></thead><tbody>
{body}
</tbody></table>
{summary}
<p><a href="{METHOD_LINK}">How it is measured and decided</a> (what each word means: <a
href="{METHOD_LINK}#glossary">glossary</a>)</p>
<p><small>Generated {stamp} by <code>python -m bench_utils report</code>.</small></p>
</body></html>
"""
    write_file(path, page, path.parent)
    return path
