"""An object folder: a model a notebook held (any torch.nn.Module) and its example inputs, written by
`bench_utils.race` (measure/objects.py writes and loads the files) for the measuring processes to load
where a registry model would be built. Here: its file names and its manifest, read and checked
without torch, so a parameters file naming one is validated like any other. docs/explore.md.
"""

from __future__ import annotations

import json
from pathlib import Path

MANIFEST = "object.json"  # what the folder holds, in words and numbers (below)
DATA = "object.pt"  # the model: torch.save with cloudpickle (code by value where needed)
INPUTS = "inputs.pt"  # its example inputs, as the notebook calls it: the same way
OBJECT_FORMAT = 1
# how the model is called with its example inputs: model(x), model(*inputs), model(**inputs)
CALLS = ("tensor", "positional", "keywords")
MAX_MANIFEST_BYTES = 100_000


def is_object_folder(folder: Path) -> bool:
    return (Path(folder) / MANIFEST).is_file()


def read_manifest(folder: Path) -> dict:
    """The manifest of an object folder, checked: {format, class, call, batch_size, task, digest}; a
    ValueError in one line when it is not one compile-bench wrote."""
    path = Path(folder) / MANIFEST
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise ValueError("too large")
        values = json.loads(path.read_text())
    except (ValueError, OSError, RecursionError):
        raise ValueError(f"checkpoint: {str(folder)!r}: {MANIFEST} is not readable JSON") from None
    if not isinstance(values, dict) or values.get("format") != OBJECT_FORMAT:
        raise ValueError(f"checkpoint: {str(folder)!r}: {MANIFEST} is not an object manifest of format "
                         f"{OBJECT_FORMAT}; allowed: a folder bench_utils.race wrote")
    batch = values.get("batch_size")
    if values.get("call") not in CALLS or not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
        raise ValueError(f"checkpoint: {str(folder)!r}: {MANIFEST} names no call ({', '.join(CALLS)}) or batch size")
    if not all(isinstance(values.get(key), str) for key in ("class", "task", "digest")):
        raise ValueError(f"checkpoint: {str(folder)!r}: {MANIFEST}'s class, task and digest must be text")
    for name in (DATA, INPUTS):
        if not (Path(folder) / name).is_file():
            raise ValueError(f"checkpoint: {str(folder)!r} has no {name} beside its {MANIFEST}")
    return values


def object_digest(checkpoint: str) -> str | None:
    """"object <digest>" for an object folder (what the settings fingerprint holds of it), else None."""
    folder = Path(checkpoint).expanduser()
    if not is_object_folder(folder):
        return None
    return f"object {read_manifest(folder)['digest']}"


def manifest_text(class_name: str, call: str, batch_size: int, task: str, digest: str) -> str:
    """The manifest as written (measure/objects.write)."""
    return json.dumps({"format": OBJECT_FORMAT, "class": class_name, "call": call, "batch_size": batch_size,
                       "task": task, "digest": digest}, indent=1) + "\n"
