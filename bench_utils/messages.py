"""How warnings read, in the console and on report pages: one line a user can act on, not the
source line that warned nor a Python category name for ordinary warnings. No torch."""

from __future__ import annotations

import warnings


def one_line_warning(message, category, filename, lineno, line=None) -> str:
    """warnings.formatwarning's signature: "warning: <message>" (the category when not UserWarning)."""
    kind = "" if category is UserWarning else f" ({category.__name__})"
    return f"warning{kind}: {message}\n"


def use_one_line_warnings() -> None:
    """From here on, this process's warnings print as one line each (the CLI, the notebooks)."""
    warnings.formatwarning = one_line_warning
