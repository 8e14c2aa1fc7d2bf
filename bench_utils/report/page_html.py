"""The one place text becomes HTML on a published page, and an executed notebook made fit to publish.

A report is meant to be copied to any static host, so whatever reaches it (labels, model and
checkpoint names, results rows, the environment, error texts) is shown as text, never run as markup:
every page writer escapes through here. Pages are written by files.write_file (whole, never through a
symlink, mode 0644, only over what compile-bench wrote), only inside their reports folder, and carry
no absolute local path. No torch.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from ..files import write_file
from ..paths import relative_text
from .display import ONE_LINE_LABELS

PAPERMILL_PATH_KEYS = ("input_path", "output_path")  # papermill's metadata: the machine's absolute paths


def escape(text) -> str:
    """`text` (any value) as HTML text: <, >, & and quotes cannot open a tag or an attribute."""
    return html.escape(str(text), quote=True)


def Markdown(text: str):  # noqa: N802 (IPython's name: the notebooks import this one in its place)
    """IPython's Markdown with every HTML character escaped: Markdown passes raw HTML through, so a
    label like "<img onerror=...>" would otherwise run on the page; and with brackets and colons
    escaped, so no text (a compared file named "[c](javascript:alert(1)).jsonl", "![i](x.png)", a bare
    https: address) becomes a link or an image: a page links only where its code writes <a>. Headings
    and emphasis (#, **) stay; a code span would show the escapes, so none is written through here."""
    from IPython.display import Markdown as IPythonMarkdown

    return IPythonMarkdown(re.sub(r"([\[\]:])", r"\\\1", html.escape(str(text), quote=False)))


def table(frame):
    """A DataFrame as a pandas Styler that escapes its cells, index and column names (a Styler escapes
    nothing by default) and does not truncate long cells; a model's or run's name (display.ONE_LINE_LABELS)
    never wraps."""
    styler = frame.style.format(escape="html").format_index(escape="html", axis=0).format_index(escape="html", axis=1)
    names = [column for column in ONE_LINE_LABELS if column in frame.columns]
    if names:
        styler = styler.set_properties(subset=names, **{"white-space": "nowrap"})
    return styler


def _relative_strings(value, folder: Path, also: dict | None):
    """Every string in a notebook's JSON value (cells, outputs, metadata) through relative_text."""
    if isinstance(value, str):
        return relative_text(value, folder, also)
    if isinstance(value, list):
        return [_relative_strings(item, folder, also) for item in value]
    if isinstance(value, dict):
        return {key: _relative_strings(item, folder, also) for key, item in value.items()}
    return value


def published_notebook(executed: Path, output: Path, also: dict | None = None) -> None:
    """`executed` (papermill's output) written to `output` fit to publish, then removed: papermill's
    input and output paths dropped from its metadata, absolute local paths made relative in every
    string (relative_text; `also`: more folders to show by a name). ValueError when `executed` is not
    a whole notebook (e.g. cut short by a full disk)."""
    nb = json.loads(executed.read_text(encoding="utf-8"))
    if not isinstance(nb, dict):
        raise ValueError(f"{executed.name}: not a notebook")
    papermill = nb.get("metadata", {}).get("papermill", {})
    for key in PAPERMILL_PATH_KEYS:
        papermill.pop(key, None)
    nb = _relative_strings(nb, output.parent, also)
    write_file(output, json.dumps(nb, indent=1, ensure_ascii=False) + "\n", output.parent)
    executed.unlink()
