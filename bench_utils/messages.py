"""How warnings read, in the console and on report pages: one line a user can act on, not the
source line that warned nor a Python category name for ordinary warnings; and text from outside
printed on a terminal with its control characters shown, never run. No torch."""

from __future__ import annotations

import re
import sys
import warnings


def counted(n: int, word: str, plural: str | None = None) -> str:
    """"1 round", "2 rounds", "0 processes": a count and its noun, singular for one."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def one_line_warning(message, category, filename, lineno, line=None) -> str:
    """warnings.formatwarning's signature: "warning: <message>" (the category when not UserWarning)."""
    kind = "" if category is UserWarning else f" ({category.__name__})"
    return f"warning{kind}: {message}\n"


_SHOWN: set[str] = set()  # the warning lines this process has printed (show_once)


def show_once(message, category, filename, lineno, file=None, line=None) -> None:
    """warnings.showwarning's signature: the one-line warning, unless this process printed it already (a
    report reads its results file several times: the pre-flight, the title, the index; its skipped
    lines were said three times). Not the "once" filter: every catch_warnings clears its registry."""
    text = one_line_warning(message, category, filename, lineno)
    if text in _SHOWN:
        return
    _SHOWN.add(text)
    try:
        (file or sys.stderr).write(text)
    except (OSError, AttributeError):  # no stderr (pythonw), or a closed one: as warnings does
        pass


def use_one_line_warnings() -> None:
    """From here on, this process's warnings print as one line each, each text once (the CLI, the
    notebooks)."""
    warnings.formatwarning = one_line_warning
    warnings.showwarning = show_once


def use_one_line_errors(*kinds: type) -> None:
    """In an IPython kernel (a notebook, papermill's run of one): an error of `kinds` (the input's:
    ConfigError) shows as one line, "ConfigError: what to fix", not a traceback through the package's
    frames (papermill printed 53-74 lines for a wrong-typed -p). Other errors keep their traceback;
    outside IPython this does nothing."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return

    def one_line(shell, etype, value, tb, tb_offset=None):
        line = [f"{etype.__name__}: {terminal_text(value)}"]
        shell._showtraceback(etype, value, line)  # what the notebook's error output (and papermill) shows
        return line

    shell.set_custom_exc(tuple(kinds), one_line)


# C0 controls but newline and tab, DEL, C1 controls, and the bidirectional overrides that reorder what a
# terminal shows: a text from a results file or a parameters file printed raw could clear the screen,
# write the clipboard (OSC 52) or hide what follows
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_text(text: str) -> str:
    """`text` fit to print on a terminal: each control character shown as its escape (\\x1b), not run."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))
