"""docs/method.md as a page of the published report (method.html, beside index.html): the Markdown
rendered by mistune (nbconvert's own Markdown renderer, installed with it), with a link back to the
index. Every heading gets the id GitHub gives it (`heading_id`), so the contents at the top of
method.md, its glossary's anchors and the pages' links to a term (`../method.html#term-round`) work on
the published page as on GitHub. A reports folder is copied to any host without the repository: a link
of method.md to another file of the repository (../README.md, gpu.md) becomes that file's path in
words, not a dead link; links within the page (#anchors) and to the web stay links. No torch.
"""

from __future__ import annotations

import html
import posixpath
import re

from .page_html import escape

INDEX_LINK = "index.html"  # the method page sits beside the index
# [text](target) where target is neither an anchor nor an address on the web
REPOSITORY_LINK = re.compile(r"\[([^\]]+)\]\((?!#|https?://|mailto:)([^)\s]+)\)")
STYLE = ("body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;line-height:1.5}"
         "code{background:#f4f4f4;padding:0 .2em}pre{background:#f4f4f4;padding:.6em;overflow-x:auto}"
         "table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .5em}")


def repository_path(target: str, folder: str = "docs") -> str:
    """Where a link of a Markdown file in `folder` points inside the repository: "../README.md" ->
    "README.md", "gpu.md#x" -> "docs/gpu.md"."""
    path = target.split("#", 1)[0]
    return posixpath.normpath(posixpath.join(folder, path))


def unlinked(markdown: str) -> str:
    """`markdown` with its links to other files of the repository written as words: "the README
    (README.md in the compile-bench repository)"."""
    def words(match) -> str:
        anchor = match.group(2).partition("#")[2]  # an entry of the measurement log is named by its anchor
        where = repository_path(match.group(2)) + (f"#{anchor}" if anchor else "")
        return f"{match.group(1)} (`{where}` in the compile-bench repository)"

    return REPOSITORY_LINK.sub(words, markdown)


def heading_id(text: str) -> str:
    """The anchor GitHub gives a heading: its text without markup, lower case, punctuation but hyphens
    and underscores dropped, spaces as hyphens ("Why a model gets faster (or not)" ->
    "why-a-model-gets-faster-or-not")."""
    plain = html.unescape(re.sub(r"<[^>]+>", "", text)).strip().lower()
    return re.sub(r"[^\w\- ]", "", plain).replace(" ", "-")


def _renderer():
    """mistune's HTML renderer with an id on every heading (a repeated heading's next one gets -1, -2, as
    on GitHub)."""
    import mistune

    class Anchored(mistune.HTMLRenderer):
        def __init__(self):
            super().__init__(escape=False)
            self.seen: dict[str, int] = {}

        def heading(self, text: str, level: int, **attrs) -> str:
            anchor = heading_id(text)
            count = self.seen.get(anchor, 0)
            self.seen[anchor] = count + 1
            anchor = f"{anchor}-{count}" if count else anchor
            return f'<h{level} id="{escape(anchor)}">{text}</h{level}>\n'

    return Anchored()


def method_html(markdown: str) -> str:
    """The method page: a link back to the index, then the rendered Markdown, its headings anchored."""
    import mistune

    # mistune.html's own plugins, with headings anchored
    render = mistune.create_markdown(renderer=_renderer(), plugins=["strikethrough", "footnotes", "table", "speedup"])
    body = render(unlinked(markdown))
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>How compile-bench measures and '
            f'decides</title><style>{STYLE}</style></head><body><p><a href="{escape(INDEX_LINK)}">← All reports</a>'
            f"</p>{body}</body></html>\n")
