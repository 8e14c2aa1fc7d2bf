"""The record's codes in words: what a compile mode did not do, what disturbed a measurement, how a
cell's processes ended. results/ computes the codes and their numbers (aggregate.py); a page, the
terminal and the self-check say them through here only. Plain text (the page escapes it). No torch.
"""

from __future__ import annotations

import math

from .display import number

COMPILE_NOTE_WORDS = {
    "ran_eager": "compiled no graph, ran eager",
    "bf16_capability": "Inductor does not compile bfloat16 below compute capability 8.0 (this GPU: {capability})",
    "no_cudagraphs": "ran without CUDA graphs (none recorded)",
    "cudagraph_skips": "{skips} graph(s) skipped CUDA graphs",
    "no_replay": "no CUDA-graph replay in the profiled calls",
    "partial_cudagraphs": "partial CUDA-graph coverage: {outside} of {kernels} kernels per call launched outside "
                          "CUDA graphs",
}


def _value(record, name: str):
    value = record.get(name)
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def compile_note_words(record) -> str:
    """A cell's compile notes (aggregate.compile_notes codes) in words, "" when there are none."""
    values = {"capability": _value(record, "compute_capability") or "?", "skips": _value(record, "cudagraph_skips"),
              "outside": number(_value(record, "kernels_outside_graphs"), integer=True),
              "kernels": number(_value(record, "profile_kernels_per_call"), integer=True)}
    codes = record.get("compile_notes")
    return "; ".join(COMPILE_NOTE_WORDS[code].format(**values) for code in (codes if isinstance(codes, list) else []))


def beside_starts_words(record) -> str:
    """A compile that began while spares for the next round imported (sweep/workers.Spares), in words for
    the compile table ("" otherwise): what only a compile time, not a speed, may owe the machine."""
    starts = _value(record, "compiled_beside_starts")
    if not starts:
        return ""
    return (f"compiled while {number(starts, integer=True)} worker(s) for the next round imported: its compile time "
            "may read high")


def disturbance_words(record) -> str:
    """What says a cell's numbers may not be the machine's own, "" when nothing does."""
    words = []
    if _taken(record, "busy_pct"):
        words.append(f"other processes used {record['busy_pct']:.0f}% of the CPU")
    if _taken(record, "stolen_pct"):
        words.append(f"the hypervisor took {record['stolen_pct']:.0f}% of the CPU")
    rounds = record.get("outlying_rounds")
    if isinstance(rounds, list) and rounds:
        words.append(f"{_rounds_words(rounds)} disagreed with the others more than their spread explains")
    return "; ".join(words)


def _taken(record, key: str) -> bool:
    """Did others (busy_pct) or the hypervisor (stolen_pct) take more of the CPU than aggregate.py
    lets a cell's numbers stand undisturbed?"""
    from ..results.aggregate import DISTURBED_PCT

    return (_value(record, key) or 0) > DISTURBED_PCT


def machine_was_busy(record) -> bool:
    """Did other processes or the hypervisor take the CPU while the cell timed (not only a round apart)?"""
    return _taken(record, "busy_pct") or _taken(record, "stolen_pct")


def disturbance_caveat(record) -> str:
    """A disturbed cell's caveat: a busy machine where the CPU was taken, else rounds that moved."""
    return f"{'busy machine' if machine_was_busy(record) else 'unsteady machine'}: {disturbance_words(record)}"


def _rounds_words(rounds: list[int]) -> str:
    """0-based round numbers in words: [1] -> "the 2nd round", [1, 3] -> "the 2nd and 4th rounds"."""
    def ordinal(n: int) -> str:
        suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
        return f"{n}{suffix}"

    names = [ordinal(r + 1) for r in rounds]
    if len(names) == 1:
        return f"the {names[0]} round"
    return f"the {', '.join(names[:-1])} and {names[-1]} rounds"


def outcome_words(record) -> str:
    """How a cell's processes ended when some did not end ok (or died after their row), "" otherwise."""
    words = []
    failed, total = _value(record, "failed_processes") or 0, _value(record, "repeats") or 0
    if failed and record.get("status") == "ok":
        words.append(f"{failed} of {total} processes failed (last: {record.get('error', '')[:200]})")
    exited = record.get("exit_codes")
    if isinstance(exited, list) and exited:
        words.append(f"{len(exited)} process(es) wrote their row, then exited with status "
                     f"{', '.join(map(str, exited))}")
    return "; ".join(words)


def failed_and_missing_words(failed: int, missing: int, cells: int) -> str:
    """The page's sentence over its failed and missing cells; what measures them is the run's one next
    step, at the top of the page (next_step.py)."""
    return f"{failed} failed; {missing} of {cells} cells missing: the next step at the top of the page measures them."
