"""The one place text becomes HTML on a published page, and the one way a page is written.

A report is meant to be copied to any static host, so whatever reaches it (labels, model and
checkpoint names, results rows, the environment, error texts) is shown as text, never run as markup:
every page writer escapes through here. Pages are written whole (a temporary file, then os.replace),
never through a symlink, only inside their reports folder, and carry no absolute local path. No torch.
"""

from __future__ import annotations

import html
import json
import os
import re
import sys
import tempfile
from pathlib import Path

from ..paths import inside, repo_root

PAPERMILL_PATH_KEYS = ("input_path", "output_path")  # papermill's metadata: the machine's absolute paths


def escape(text) -> str:
    """`text` (any value) as HTML text: <, >, & and quotes cannot open a tag or an attribute."""
    return html.escape(str(text), quote=True)


def Markdown(text: str):  # noqa: N802 (IPython's name: the notebooks import this one in its place)
    """IPython's Markdown with every HTML character escaped: Markdown passes raw HTML through, so a
    label like "<img onerror=...>" would otherwise run on the page. Markdown syntax (**, *, -, `) stays."""
    from IPython.display import Markdown as IPythonMarkdown

    return IPythonMarkdown(html.escape(str(text), quote=False))


def table(frame):
    """A DataFrame as a pandas Styler that escapes its cells, index and column names (a Styler escapes
    nothing by default) and does not truncate long cells."""
    return frame.style.format(escape="html").format_index(escape="html", axis=0).format_index(escape="html", axis=1)


def write_page(path: Path, text: str, folder: Path) -> Path:
    """Write `text` to `path` inside `folder` in one step: a reader (or a second command) sees the old
    page or the new one, never half of one; a symlink at `path` is replaced, its target left alone."""
    path = inside(path, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def relative_text(text: str, folder: Path) -> str:
    """`text` with absolute local paths made relative: `folder` and the reports folder above it (to
    `folder`), the checkout, Python's installation and the home folder, so an error text, a parameter
    or a traceback on a page names no path of this machine. A path is replaced only whole (up to a
    separator or the end of its name), and never the file-system root alone."""
    folder = Path(folder).resolve()
    replacements = [(folder, "", "."), (folder.parent, "../", ".."), (repo_root(), "", "."),
                    (Path(sys.prefix), "<python>/", "<python>"), (Path(sys.base_prefix), "<python>/", "<python>"),
                    (Path.home(), "~/", "~")]
    for absolute, shown_inside, shown in replacements:
        if len(absolute.parts) < 2:
            continue
        name = re.escape(str(absolute))
        text = re.sub(name + re.escape(os.sep), lambda _: shown_inside, text)
        text = re.sub(name + r"(?![\w.-])", lambda _: shown, text)
    return text


def published_notebook(executed: Path, output: Path) -> None:
    """`executed` (papermill's output) written to `output` fit to publish, then removed: papermill's
    input and output paths dropped from its metadata, absolute local paths made relative."""
    nb = json.loads(executed.read_text(encoding="utf-8"))
    papermill = nb.get("metadata", {}).get("papermill", {})
    for key in PAPERMILL_PATH_KEYS:
        papermill.pop(key, None)
    text = relative_text(json.dumps(nb, indent=1, ensure_ascii=False), output.parent)
    write_page(output, text + "\n", output.parent)
    executed.unlink()
