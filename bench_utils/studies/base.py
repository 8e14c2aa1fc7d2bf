"""What every study shares above results/studies.Study, at the layer where measure/ and report/ may be
used: one measurement path (the device resolved, the job's work run by measure/cell.measured_row, so a
failure of the model or the compiler becomes the row's status) and one page shape (a verdict line per
model in registry order; a section of heading, tables and charts, shown only when there are rows).

A study subclasses BaseStudy and fills in its hooks: `work` (its measurement), `model_verdict` (one
model's answer), `shown` (what its section displays) and the texts `no_rows`, `heading`, `verdict_note`.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from ..results.rows import Row
from ..results.studies import Study


class BaseStudy(Study):
    """results/studies.Study's measure, verdict and section, written once over the hooks below."""

    no_rows = ""  # the verdict when the study has no rows
    verdict_note = ""  # said once below the verdict's lines ("": nothing)
    heading = ""  # the section's heading

    def work(self, cfg, model: str, option: str, results_path, device: str, fields: dict) -> None:
        """One job's measurement on `device`, into `fields` (the row's measured fields) as it goes."""
        raise NotImplementedError

    def model_verdict(self, rows) -> str:
        """Markdown: one model's answer, from its rows of the frame."""
        raise NotImplementedError

    def shown(self, frame):
        """What the section displays under its heading, in order (tables, charts)."""
        raise NotImplementedError

    def measure(self, cfg, model: str, option: str, results_path: Path) -> Row:
        from ..measure import environment
        from ..measure.cell import measured_row

        device = environment.resolve_device(cfg.device)
        return measured_row(self.row, self.identity(cfg, model, option, device), device,
                            partial(self.work, cfg, model, option, results_path, device))

    def verdict(self, frame) -> str:
        from ..report.tables import ordered_models

        if frame.empty:
            return self.no_rows
        lines = [f"- {self.model_verdict(frame[frame['model'] == model])}" for model in ordered_models(frame["model"])]
        return "\n".join(lines) + (f"\n\n{self.verdict_note}" if self.verdict_note else "")

    def section(self, frame) -> None:
        from IPython.display import display

        from ..report.page_html import Markdown

        if frame.empty:
            return
        display(Markdown(f"## {self.heading}"))
        for shown in self.shown(frame):
            display(shown)
