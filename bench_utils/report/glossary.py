"""The report's jargon, each word linked to its definition in the method page's glossary
(docs/method.md, "Glossary": an anchor `term-<name>` per word), so a reader who meets "round" or
"margin" on a page is one click from what it means. The words stay as the page wrote them; only their
first use in a text becomes a link. No torch.
"""

from __future__ import annotations

import html
import re

# a word as the pages write it -> its glossary anchor in docs/method.md (test_docs.py holds them there)
PAGE_TERMS = {
    "speedup": "term-speedup",
    "95% interval": "term-interval",
    "interval": "term-interval",
    "margin": "term-margin",
    "configuration": "term-configuration",
    "compile mode": "term-mode",
    "modifiers": "term-modifier",
    "rounds": "term-round",
    "round": "term-round",
    "compiler cache": "term-cold-compile",
    "pays back": "term-pay-back",
    "runner-up": "term-race",
    "race": "term-race",
    "can't tell": "term-answer",
    "no worthwhile gain": "term-answer",
}
_TAG_OR_TEXT = re.compile(r"(<[^>]*>)")


def glossary_link(method_link: str, term: str) -> str:
    """Where `term` is defined: `method_link` (the method page, relative to the page) and its anchor."""
    return f"{method_link}#{PAGE_TERMS[term.lower()]}"


def linked_terms(html_text: str, method_link: str) -> str:
    """`html_text` (escaped text, possibly with markup) with the first use of each PAGE_TERMS word, outside
    tags and links, made a link to its definition. Longer terms first ("95% interval" before
    "interval"); a word whose definition is linked already stays as it is."""
    linked: set[str] = set()
    for term in sorted(PAGE_TERMS, key=len, reverse=True):
        anchor = PAGE_TERMS[term]
        if anchor in linked:
            continue
        spellings = "|".join(re.escape(form) for form in {term, html.escape(term)})
        pattern = re.compile(rf"(?<![\w-])(?:{spellings})(?![\w-])", re.IGNORECASE)
        parts, in_link = _TAG_OR_TEXT.split(html_text), False
        for number, part in enumerate(parts):
            if part.startswith("<"):
                tag = part.lower()
                in_link = tag.startswith("<a ") or tag.startswith("<a>") or (in_link and not tag.startswith("</a"))
                continue
            match = None if in_link else pattern.search(part)
            if match:
                parts[number] = (f'{part[:match.start()]}<a class="bench-term" href="{method_link}#{anchor}">'
                                 f"{match.group(0)}</a>{part[match.end():]}")
                linked.add(anchor)
                html_text = "".join(parts)
                break
    return html_text
