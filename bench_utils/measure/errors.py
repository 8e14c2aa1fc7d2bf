"""What a failed measuring process's row says: its status ("oom" or "error") and a short error text, one
line for a table cell, with the compiler's own first error line for a failed C++ or Triton compile and,
for what looks like a damaged Inductor cache entry, the folder to delete."""

from __future__ import annotations

import os
import re
import traceback

import torch


def status_and_text(err: BaseException) -> tuple[str, str]:
    """A failure's row status and error text: "oom" for an allocation that failed, else "error"."""
    return ("oom" if is_oom(err) else "error"), error_text(err)


OOM_MARKERS = ("out of memory", "can't allocate memory", "cublas_status_alloc_failed", "cudnn_status_alloc_failed")


def is_oom(err: BaseException) -> bool:
    if isinstance(err, (torch.cuda.OutOfMemoryError, MemoryError)):
        return True
    # CPU allocator failures, cuBLAS/cuDNN workspace allocations and some CUDA paths raise a plain
    # RuntimeError whose text names the allocation failure.
    text = str(err).lower()
    return isinstance(err, RuntimeError) and any(marker in text for marker in OOM_MARKERS)


def error_text(err: BaseException) -> str:
    """Exception type, message and the innermost frame, kept short enough for a table cell; for a failed
    C++ or Triton compile, the compiler's own first error line too (Inductor's message is only "C++
    compile error", its cause in the text's "Output:" part)."""
    message = str(err).strip().splitlines()[0] if str(err).strip() else ""
    frames = traceback.extract_tb(err.__traceback__)
    where = f" [{frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}]" if frames else ""
    return f"{type(err).__name__}: {message[:500]}{where}{_compiler_says(err)}{_cache_hint(err)}"


COMPILER_ERROR = re.compile(r"\b(fatal error|error)\b|no such file|file too large|not found", re.IGNORECASE)


def _compiler_says(err: BaseException) -> str:
    """" (compiler: <its first error line>)" when the exception or one of its causes carries a compiler's
    output (Inductor's CppCompileError: "Command: ... Output: ..."); "" otherwise."""
    for failure in _chain(err):
        text = str(failure)
        if "Output:" not in text:
            continue
        lines = [line.strip() for line in text.split("Output:", 1)[1].splitlines() if line.strip()]
        said = next((line for line in lines if COMPILER_ERROR.search(line)), lines[0] if lines else "")
        if said:
            return f" (compiler: {said[:300]})"
    return ""


def _chain(err: BaseException) -> list:
    """The exception and its causes, at most 10 (a cycle ends it)."""
    chain = []
    while err is not None and err not in chain and len(chain) < 10:
        chain.append(err)
        err = err.__cause__ or err.__context__
    return chain


# What a damaged entry of Inductor's on-disk cache (a run killed mid-write, a full disk) raises when it
# is loaded: a truncated generated module lacks its `call`, a truncated library is no ELF file, a
# truncated pickle ends early. Torch wraps these in an InductorError that names none of the cache.
DAMAGED_CACHE = re.compile(r"compile_tasks\.\w+' has no attribute|file too short|invalid ELF header|"
                           r"pickle data was truncated|Ran out of input")


def _cache_hint(err: BaseException) -> str:
    """For an error that looks like a damaged Inductor cache entry: which folder to delete."""
    if not any(DAMAGED_CACHE.search(str(failure)) for failure in _chain(err)):
        return ""
    folder = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or "the Inductor cache folder"
    return f" (a damaged Inductor cache entry? delete {folder} and run again)"
