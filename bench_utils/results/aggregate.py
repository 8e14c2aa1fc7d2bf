"""From process rows to cells: the rows of a cell combined by the declared record (record.py), and
every compiled cell paired with its eager cell. The one place a cell's statistics are computed and the
one place rows become a pandas DataFrame (`to_dataframe`, one row per cell): every table, chart,
verdict and comparison reads its columns. Numbers and codes only: report/ makes the words. No torch;
pandas is imported on use.

One eager number per cell, by construction: every configuration's `eager_ms_*` and `speedup` are read
from the eager float32 cell of the same model and batch size, the very numbers the eager row shows. The
race between a group's configurations (race.py) is computed here too, once.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from pathlib import Path

from ..config.configurations import BASELINE, configuration
from ..config.modes import CUDAGRAPH_MODES
from .race import races
from .record import COLUMNS, RECORD
from .rows import read_results
from .sweep_time import seconds_spent
from .stats import (block_medians_ms, improvement_from_speedup, outlying_rounds, paired_log_ratios, relative_halfwidth,
                    round_clusters, speedup_over_rounds, summarize_runs)

# others' CPU share or steal while timing (measure/machine_load.py), % of the machine: above this, disturbed
DISTURBED_PCT = 10.0
# Inductor compiles bfloat16 graphs for a GPU only from compute capability 8.0: below it
# torch/_inductor/compile_fx.py, _check_triton_bf16_support, raises SkipFrame when
# device_interface.is_bf16_supported(including_emulation=False) is False (torch/cuda/__init__.py:
# `get_device_properties(device).major >= 8`); dynamo then runs the frame eagerly and counts no graph
# (counters["stats"]["unique_graphs"] is bumped after the backend returns, _dynamo/output_graph.py).
BF16_MIN_CAPABILITY = 8
# A CUDA-graph mode's profiled call may launch a few kernels itself (cudagraph_trees.py copies the
# non-static inputs with one torch._foreach_copy_ per replay, _copy_inputs_and_remove_from_src); more
# than this share of its kernels launched one by one means partial CUDA-graph coverage.
OUTSIDE_GRAPHS_SHARE = 0.1
# the eager cell's profile beside a compiled cell's own: the record's eager_profile_* columns
EAGER_PROFILE = tuple(c.name.removeprefix("eager_") for c in RECORD if c.name.startswith("eager_profile_"))


def _present(values) -> list:
    return [v for v in values if v is not None]


def _given(value) -> bool:
    return value is not None and not (isinstance(value, (str, list, tuple, dict)) and len(value) == 0)


COMBINE = {  # record.COMBINES -> (every row, the ok rows, field) -> the cell's value
    "same": lambda rows, ok, name: getattr((ok or rows)[0], name),
    # the first round's that has it: round 0's compile (cold: the cell's emptied cache), round 1's profile (an empty
    # text or list is a round without it; 0 and False are values)
    "first": lambda rows, ok, name: next((value for row in (ok or rows) if _given(value := getattr(row, name))),
                                         getattr((ok or rows)[0], name)),
    "largest": lambda rows, ok, name: max(_present(getattr(r, name) for r in ok), default=None),
    "least": lambda rows, ok, name: min(_present(getattr(r, name) for r in ok), default=None),
    "union": lambda rows, ok, name: sorted({v for r in ok for v in getattr(r, name)}),
    "all": lambda rows, ok, name: (None if not _present(getattr(r, name) for r in ok)
                                   else all(_present(getattr(r, name) for r in ok))),
    "sum": lambda rows, ok, name: sum(getattr(r, name) or 0.0 for r in rows),
    "env": lambda rows, ok, name: (ok or rows)[0].env.get(name, ""),
}


def bf16_compiles(dtype: str, device: str, capability: str) -> bool:
    """Can Inductor compile a `dtype` model on this device? False for bfloat16 on a CUDA GPU below
    compute capability 8.0 (T4 7.5, V100 7.0); True where the capability is unknown ("")."""
    if dtype != "bfloat16" or device != "cuda" or not capability:
        return True
    return int(str(capability).split(".")[0]) >= BF16_MIN_CAPABILITY


def kernels_outside_graphs(record: dict) -> float | None:
    """Kernels per profiled call the host launched one by one, beyond one input copy per CUDA-graph
    replay; None without a CUDA profile."""
    launches, replays = record.get("profile_launches_per_call"), record.get("profile_graph_replays_per_call")
    if launches is None or replays is None:
        return None
    return max(launches - replays, 0.0)


# A round's first timed block slower than its others by more than this (the median over the rounds):
# the warm-up had not ended when timing began. A fork's warm-up is one short window (measure/cell.py), so
# "not steady" by its own window says little; the blocks say whether it mattered.
WARMUP_TAIL = 0.05


def warmup_tail(round_blocks_ms: dict) -> float | None:
    """How much slower a round's first timed block ran than the median of its others, the median over the
    rounds with two blocks or more (None without one)."""
    rest = [(blocks[0], statistics.median(blocks[1:])) for blocks in round_blocks_ms.values() if len(blocks) >= 2]
    tails = [first / others - 1.0 for first, others in rest if others > 0]
    return statistics.median(tails) if tails else None


def held_memory_mb(record: dict) -> float | None:
    """MiB a cell held while timing, comparable across modes: on CUDA the reserved peak, CUDA-graph
    pools included (a graph replay allocates nothing, its activations live in the graph's pool:
    cudagraph_trees.py, CUDAGraphNode.run_graph; so the allocated peak, peak_mem_mb, flatters
    reduce-overhead and max-autotune); on CPU the process's peak resident memory."""
    reserved = record.get("peak_reserved_mb")
    return reserved if reserved is not None else record.get("peak_mem_mb")


def compile_notes(record: dict) -> list[str]:
    """Codes for what a compile mode did not do on an ok cell (its speed is then partly or wholly
    another mode's under this mode's label): "ran_eager" (no graph compiled; "bf16_capability" too when
    the GPU is below BF16_MIN_CAPABILITY), and for a CUDA-graph mode on CUDA "no_cudagraphs" (none
    recorded), "cudagraph_skips", "no_replay" (no replay in the profiled calls) or "partial_cudagraphs"
    (more than OUTSIDE_GRAPHS_SHARE of its kernels launched outside the graphs: graph partitions run ops
    that cannot be graphed between them, output_code.py, cudagraph_partition_post_compile)."""
    if record["status"] != "ok" or record["mode"] == BASELINE:
        return []
    notes = []
    if record.get("graph_count") == 0:
        notes.append("ran_eager")
        if not bf16_compiles(configuration(record["configuration"]).precision, record["device"],
                             record.get("compute_capability") or ""):
            notes.append("bf16_capability")
    if record["mode"] in CUDAGRAPH_MODES and record["device"] == "cuda":
        kernels, outside = record.get("profile_kernels_per_call"), record.get("kernels_outside_graphs")
        if record["cudagraphs_recorded"] == 0:
            notes.append("no_cudagraphs")
        if record["cudagraph_skips"]:
            notes.append("cudagraph_skips")
        if record.get("profile_graph_replays_per_call") == 0 and kernels:
            notes.append("no_replay")
        elif outside is not None and kernels and outside > OUTSIDE_GRAPHS_SHARE * kernels:
            notes.append("partial_cudagraphs")
    return notes


def first_answer_cold_s(record: dict) -> float | None:
    """A compiled configuration's first answer with an empty compiler cache, seconds: round 0's process
    built the model, then compiled (compile_s, its first call): what a new process pays where nothing was
    compiled before; a shipped form's is its build, once. None without both figures."""
    build, cold = record.get("build_s"), record.get("compile_s")
    if build is None or cold is None or record.get("configuration") == BASELINE:
        return None
    return build + cold


def _outcome(rows: list, ok: list) -> dict:
    """status and error (the last failure's when no process ended ok), and the counts of the others."""
    failed = [row for row in rows if row not in ok]
    exited = [row for row in ok if row.exit_code]  # measured, then the process died (e.g. at teardown)
    last = failed[-1] if failed else None
    return {"status": "ok" if ok else last.status, "error": last.error if last else "",
            "failed_processes": len(failed), "exited_processes": len(exited),
            "exit_codes": [row.exit_code for row in exited]}


def combine(rows: list) -> dict:
    """One cell's record from the rows of its processes (same cell key, any status): every declared
    column with a combine rule, then the statistics over its rounds. An ok row without samples counts
    as a failure of its process."""
    rows = sorted((row if row.status != "ok" or row.samples_s else
                   dataclasses.replace(row, status="error", error="the row has status ok but no samples")
                   for row in rows), key=lambda row: row.repeat)
    ok = [row for row in rows if row.status == "ok"]
    record = {c.name: COMBINE[c.combine](rows, ok, c.field) for c in RECORD if c.combine in COMBINE}
    record |= _outcome(rows, ok)
    record["mode"] = configuration(record["configuration"]).mode
    record["hostname"] = ", ".join(sorted({row.env.get("hostname", "") for row in rows} - {""}))
    record["repeats"], record["repeats_ok"] = len(rows), len(ok)
    warm = [row.compile_s for row in ok if row.repeat > 0 and row.compile_s is not None]
    # later fresh processes compile with the cache round 0 filled: what a restart pays; on a CPU, forks of
    # the prepared process compile again with every in-process cache forgotten (rows' compile_warm_s)
    warm += [row.compile_warm_s for row in ok if row.compile_warm_s is not None]
    record["compile_warm_s"] = sorted(warm)[len(warm) // 2] if warm else None
    record["first_answer_cold_s"] = first_answer_cold_s(record)
    record["samples_s"] = [row.samples_s for row in ok]
    record["round_blocks_ms"] = {row.repeat: block_medians_ms(row.samples_s, row.block_lengths) for row in ok}
    # eager_in_process: eager float32 timed in this cell's own processes, beside its blocks, by round
    record["round_eager_samples_s"] = {row.repeat: row.eager_samples_s for row in ok if row.eager_samples_s}
    record["round_eager_blocks_ms"] = {row.repeat: block_medians_ms(row.eager_samples_s, row.eager_block_lengths)
                                       for row in ok if row.eager_samples_s}
    record["eager_beside"] = bool(ok) and all(row.eager_samples_s for row in ok)
    record["round_process"] = {row.repeat: row.process_round for row in ok}  # round -> its processes' first round
    record["round_held_mem_mb"] = {row.repeat: held_memory_mb(vars(row)) for row in ok}  # no copy of its samples
    record["warmup_tail"] = warmup_tail(record["round_blocks_ms"])
    record["warmup_unfinished"] = bool(record["warmup_tail"] is not None and record["warmup_tail"] > WARMUP_TAIL)
    later = [row.duration_s for row in ok if row.prepared_round != row.repeat and row.duration_s]
    record["round_s"] = statistics.median(later) if later else None  # what one more round of the cell takes
    summary = summarize_runs(record["samples_s"]) if ok else None
    for name in ("mean", "median", "p10", "p90", "std", "ci95_low", "ci95_high"):
        record[f"latency_ms_{name}"] = getattr(summary, f"{name}_ms") if summary else None
    record["process_spread"] = summary.process_spread if summary else None
    record["between_process"] = bool(summary and summary.processes > 1)
    record["noisy"] = bool(summary and summary.noisy)
    record["mean_outliers"] = bool(summary and summary.mean_outliers)
    record["kernels_outside_graphs"] = kernels_outside_graphs(record)
    clocks = [mhz for row in ok for mhz in row.block_sm_clock_mhz]
    record["sm_clock_mhz_low"], record["sm_clock_mhz_high"] = (min(clocks), max(clocks)) if clocks else (None, None)
    record["held_mem_mb"] = held_memory_mb(record)
    record["compile_notes"] = compile_notes(record)
    # a compile that hit the cache was not cold, whatever the column's name: the page must not price a
    # pay-back or call it "cold" from it (a second report read "4.0 s cold" for a cache hit)
    record["compile_cold"] = record.get("compile_s") is not None and not (record.get("fx_cache_hits") or 0) > 0
    return record


def _run(row) -> tuple:
    """Rows of one cell of one run: the same label, settings, hardware and torch (two torch versions
    measured under one label stay two cells; so do rows measured with other settings)."""
    return (row.label, row.settings, row.env.get("device_name", ""), row.env.get("torch", ""), *row.cell)


def _baseline_key(record: dict) -> tuple:
    return (record["label"], record["settings"], record["hardware"], record["torch"], record["model"], record["size"],
            record["batch_size"], record["fullgraph"])


PAIRED = ("eager_ms_mean", "eager_ms_median", "eager_ms_p90", "eager_ms_ci95_low", "eager_ms_ci95_high",
          "eager_held_mem_mb", "speedup", "speedup_ci95_low", "speedup_ci95_high", "speedup_halfwidth")


def _pair(record: dict, eager: dict | None) -> dict:
    """The eager columns and the speedup of a compiled `record` against its eager cell (NaN without one;
    an eager cell gets its eager columns only: no speedup is made up for it)."""
    fields = dict.fromkeys(PAIRED, math.nan) | {"significant": False, "paired_rounds": 0, "outlying_rounds": [],
                                                "round_logs": [], "round_workers": [], "round_ids": [],
                                                "round_pairs": []}
    fields |= {f"eager_{name}": None for name in EAGER_PROFILE}
    if eager is None or eager["status"] != "ok" or record["status"] != "ok":
        return fields
    fields |= {"eager_ms_mean": eager["latency_ms_mean"], "eager_ms_median": eager["latency_ms_median"],
               "eager_ms_p90": eager["latency_ms_p90"], "eager_ms_ci95_low": eager["latency_ms_ci95_low"],
               "eager_ms_ci95_high": eager["latency_ms_ci95_high"], "eager_held_mem_mb": eager["held_mem_mb"]}
    fields |= {f"eager_{name}": eager[name] for name in EAGER_PROFILE}
    # eager timed beside the cell in its own processes (eager_in_process) or in eager's: its blocks and
    # workers; with eager beside, the eager columns are of those calls too, so a row's eager and
    # compiled latencies and its speedup tell one story
    beside = record["eager_beside"] and record is not eager
    base = record if beside else eager
    blocks = base["round_eager_blocks_ms" if beside else "round_blocks_ms"]
    common = sorted(set(blocks) & set(record["round_blocks_ms"]))
    if record is eager or not common:
        return fields
    if beside:
        fields |= _eager_over(record, common, beside=True)
    elif len(common) < len(eager["round_blocks_ms"]):  # e.g. dropped after round 0: eager of those rounds only,
        fields |= _eager_over(eager, common)  # so its row's medians and its speedup tell one story
    rounds = [paired_log_ratios(blocks[r], record["round_blocks_ms"][r]) for r in common]
    # per round, the workers that measured it (eager's, compiled's first round): the design effect's clusters
    pairs = [(base["round_process"][r], record["round_process"][r]) for r in common]
    logs, labels = round_clusters(rounds, pairs)
    estimate = speedup_over_rounds(rounds, pairs)
    fields |= {"round_ids": common, "round_pairs": rounds}
    return fields | {
        "speedup": estimate.speedup, "speedup_ci95_low": estimate.ci95_low, "speedup_ci95_high": estimate.ci95_high,
        "significant": estimate.significant, "speedup_halfwidth": relative_halfwidth(estimate),
        "paired_rounds": len(common), "outlying_rounds": [common[i] for i in outlying_rounds(logs)],
        "round_logs": list(logs), "round_workers": labels}


def images_per_s(batch_size, latency_ms) -> float:
    """Throughput, images a second, of a call of `batch_size` images taking `latency_ms` (NaN without one)."""
    if latency_ms is None or not latency_ms > 0:
        return math.nan
    return batch_size * 1000.0 / latency_ms


def _eager_over(eager: dict, rounds: list[int], beside: bool = False) -> dict:
    """Eager's latency and memory columns over `rounds` only (its samples_s follow round_blocks_ms's
    rounds; its held memory, the largest of those rounds'). `beside`: `eager` is a cell that timed
    eager in its own processes (eager_in_process): the latency columns are of those calls; held
    memory stays the eager cell's (_pair keeps it)."""
    if beside:
        kept = [eager["round_eager_samples_s"][r] for r in rounds]
    else:
        kept = [samples for r, samples in zip(eager["round_blocks_ms"], eager["samples_s"]) if r in rounds]
    summary = summarize_runs(kept)
    latency = {"eager_ms_mean": summary.mean_ms, "eager_ms_median": summary.median_ms,
               "eager_ms_p90": summary.p90_ms, "eager_ms_ci95_low": summary.ci95_low_ms,
               "eager_ms_ci95_high": summary.ci95_high_ms}
    if beside:
        return latency
    held = [mb for r, mb in eager["round_held_mem_mb"].items() if r in rounds and mb is not None]
    return latency | {"eager_held_mem_mb": max(held) if held else None}


def _disturbance(record: dict, eager: dict | None) -> dict:
    """The machine while the cell and its eager cell timed: the larger shares of others' CPU and of
    steal, and whether they (or outlying rounds) say its numbers may not be the machine's own."""
    sides = [record] + ([eager] if eager is not None and eager is not record else [])
    busy = max((side["others_cpu_pct"] or 0.0 for side in sides), default=0.0)
    stolen = max((side["steal_pct"] or 0.0 for side in sides), default=0.0)
    return {"busy_pct": busy, "stolen_pct": stolen,
            "disturbed": busy > DISTURBED_PCT or stolen > DISTURBED_PCT or bool(record["outlying_rounds"])}


def cells(rows) -> list[dict]:
    """Every cell of `rows` (process rows, e.g. read_results(...).rows) as one record, in the order of
    each cell's first row; compiled cells carry their eager cell's numbers and the speedup."""
    latest = {(*_run(row), row.repeat): row for row in rows}  # a later row of a process replaces it
    groups: dict[tuple, list] = {}
    for row in latest.values():
        groups.setdefault(_run(row), []).append(row)
    records = [combine(group) for group in groups.values()]
    sweep_s: dict[tuple, float] = {}  # run (label, settings) -> its sweep's seconds
    for record, group in zip(records, groups.values()):
        run = (record["label"], record["settings"])
        if run not in sweep_s:
            sweep_s[run] = seconds_spent([row for row in latest.values() if (row.label, row.settings) == run])
        record["sweep_s"] = sweep_s[run]
    eager = {_baseline_key(r): r for r in records if r["configuration"] == BASELINE}
    for record in records:
        baseline = eager.get(_baseline_key(record))
        record |= _pair(record, baseline)
        record |= {"images_per_s": images_per_s(record["batch_size"], record["latency_ms_median"]),
                   "eager_images_per_s": images_per_s(record["batch_size"], record["eager_ms_median"])}
        record |= _disturbance(record, baseline)
        record |= NO_RACE
    for race in races(records).values():
        for entry in race.entries.values():
            entry.record |= _race_fields(entry, race)
    return records


NO_RACE = {"race_outcome": "", "race_rounds": 0, "race_round_ids": [], "race_speedup": math.nan,
           "race_ci95_low": math.nan, "race_ci95_high": math.nan, "race_significant": False, "race_halfwidth": math.nan,
           "race_selection_bias": math.nan, "race_round_sd": math.nan, "race_least_pair": math.nan, "race_pairs": 0, "runner_up": "", "versus_runner_up": math.nan,
           "versus_ci95_low": math.nan, "versus_ci95_high": math.nan, "race_simpler": False,
           "race_trailing": False, "improvement_pct": math.nan}  # eager's, and before any race


def _race_fields(entry, race) -> dict:
    """A configuration's outcome in its group's race, its figure (the leader's corrected for its
    selection, race.py), and on the leader's row the comparison with the runner-up."""
    estimate = entry.estimate
    fields = NO_RACE | {"race_outcome": entry.outcome, "race_rounds": len(entry.rounds),
                        "race_round_ids": list(entry.rounds), "race_trailing": entry.trailing}
    logs = [value for value, r in zip(entry.record.get("round_logs") or [], entry.record.get("round_ids") or [])
            if r in entry.rounds]
    fields["race_round_sd"] = statistics.stdev(logs) if len(logs) >= 2 else math.nan
    pairs = [value for values, r in zip(entry.record.get("round_pairs") or [], entry.record.get("round_ids") or [])
             if r in entry.rounds for value in values]
    fields["race_least_pair"] = math.exp(min(pairs)) if pairs else math.nan
    fields["race_pairs"] = len(pairs)
    if estimate:
        fields |= {"race_speedup": estimate.speedup, "race_ci95_low": estimate.ci95_low,
                   "race_ci95_high": estimate.ci95_high, "race_halfwidth": relative_halfwidth(estimate),
                   "race_significant": estimate.ci95_low > 1.0 or estimate.ci95_high < 1.0,
                   "race_selection_bias": math.expm1(entry.selection_bias),
                   "improvement_pct": improvement_from_speedup(estimate.speedup)}  # the race figure's, as shown
    if entry.outcome == "recommended" and race.versus is not None:
        fields |= {"runner_up": race.runner_up, "versus_runner_up": race.versus.speedup,
                   "versus_ci95_low": race.versus.ci95_low, "versus_ci95_high": race.versus.ci95_high,
                   "race_simpler": race.simpler}
    return fields


def to_dataframe(rows, with_samples: bool = False):
    """The one place a list of rows becomes a pandas DataFrame: one row per cell (record.COLUMNS), its
    processes combined and compiled cells paired with their eager cell (cells). With `with_samples`,
    `samples_s` holds one list of raw samples (seconds) per process."""
    import pandas as pd

    frame = pd.DataFrame.from_records(cells(rows), columns=COLUMNS)
    return frame if with_samples else frame.drop(columns=["samples_s"])


def load_dataframe(*paths, with_samples: bool = False):
    """Rows of one or more results files as a single DataFrame, each file a run of its own
    (`labels_apart`)."""
    files = labels_apart([(Path(path), read_results(path).rows) for path in paths])
    return to_dataframe([row for _, rows in files for row in rows], with_samples=with_samples)


def labels_apart(files: list) -> list:
    """(path, rows) per results file, the rows relabelled where files share a label, so a page that
    names runs by label keeps them apart: a file holds one run (rows.read_rows), yet two runs of one
    profile (`report --compare` of two torch versions) carry the profile's label. The label gains what
    tells them apart: the torch version, else the folder, else the file's place ("CPU, torch 2.11.0")."""
    by_label: dict[str, list[int]] = {}
    for index, (_, rows) in enumerate(files):
        for label in dict.fromkeys(row.label for row in rows):
            by_label.setdefault(label, []).append(index)
    renamed = [dict() for _ in files]  # per file: label -> its label on the page
    for label, indices in by_label.items():
        if len(indices) < 2:
            continue
        # a skipped row measured nothing and names no torch
        torches = ["/".join(sorted({row.env["torch"] for row in files[i][1]
                                    if row.label == label and row.env.get("torch")})) for i in indices]
        folders = [files[i][0].resolve().parent.name for i in indices]
        by_torch = all(torches) and len(set(torches)) == len(indices)
        for place, (i, torch, folder) in enumerate(zip(indices, torches, folders), start=1):
            if by_torch:
                renamed[i][label] = f"{label}, torch {torch}"
            elif len(set(folders)) == len(indices):
                renamed[i][label] = f"{label} ({folder})"
            else:
                renamed[i][label] = f"{label} (file {place})"
    return [(path, [dataclasses.replace(row, label=renamed[i][row.label]) if row.label in renamed[i] else row
                    for row in rows]) for i, (path, rows) in enumerate(files)]

