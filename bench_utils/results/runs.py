"""One results file, one run: a run is a label, a device, a machine (the environment's device_name:
the CPU model or the GPU) and a torch version, and every row of a results file must be of the same
one. Rows of another run are neither merged into the file's cells nor allowed to push its rows out:
reading the file (rows.read_rows) or appending to it (writer.ResultsWriter) stops with one line naming
both runs. Plain functions on a row's fields or its JSON object. No torch.
"""

from __future__ import annotations

from ..config.validation import ConfigError


class MixedRunsError(ConfigError):
    """A results file holding rows of more than one run (label, device, hardware, torch version)."""


# what makes a row part of a run: its label and device, and the machine and torch its env names
RUN_FIELDS = ("label", "device")
RUN_ENV = ("device_name", "torch")


def run_of(values: dict) -> dict:
    """The run a row (its fields, or its JSON object) belongs to, by the fields it states ("auto" and a
    missing env state nothing: the row of a lost worker is written by the runner, which knows neither)."""
    env = values.get("env") if isinstance(values.get("env"), dict) else {}
    run = {name: values.get(name) for name in RUN_FIELDS} | {name: env.get(name) for name in RUN_ENV}
    return {name: value for name, value in run.items() if isinstance(value, str) and value not in ("", "auto")}


def run_text(run: dict) -> str:
    """A run in words: "label 'CPU', cpu (Intel Xeon), torch 2.9"."""
    device = run.get("device", "?" if "device_name" in run else "")
    parts = [f"label {run['label']!r:.80}" if "label" in run else "",
             f"{device} ({run['device_name']:.80})" if "device_name" in run else device,
             f"torch {run['torch']:.40}" if "torch" in run else ""]
    return ", ".join(part for part in parts if part)


def other_run(file_run: dict, values: dict) -> dict | None:
    """The run of a row (its fields, or its JSON object) when it differs from `file_run` (the file's,
    from its first rows) on a field both state, else None; `file_run` takes the fields it lacked."""
    run = run_of(values)
    if any(name in file_run and file_run[name] != value for name, value in run.items()):
        return run
    file_run.update({name: value for name, value in run.items() if name not in file_run})
    return None
