"""`python -m bench_utils report`, start to end: which profiles this machine runs (a GPU's own, or the
CPU report's), every check before anything runs, each profile's plan, its sweep from this process
(resumable, progress on the terminal, no notebook step timeout however long it takes), then its page
(report/build.py), the summary, reports/index.html and the verdict on the terminal.

A profile that fails still gets its page and is flagged in the index; the command prints one line per
failure and exits non-zero. This module measures through the sweep and reads the GPU through torch;
report/ below it only makes words and pages.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import shutil
import sys
import warnings
from pathlib import Path

from .config.bench_config import BenchConfig, ConfigError
from .config.parameters_file import load_config, with_budget
from .config.validation import check_distinct_folders
from .measure.environment import ready_here
from .messages import terminal_text
from .paths import check_inductor_cache_dir, checkout_file, relative_text, repo_root, reports_root, shown_path
from .report.build import (ProfileOutcome, build_summary, check_outputs, check_parameters, compare_main,
                           copy_method, outcome_words, page_title, profile_results, render, results_rows,
                           verdict_lines, write_stub)
from .report.index_page import profile_lines, write_index, write_profile_state

LONG_RUN_S = 3600.0  # seconds: a measuring run `plan` estimates above this needs --allow-long
CPU_PROFILES = ("cpu-report.yaml",)  # full-size; the variant profile does not fit the default budget


def default_runs(root: Path) -> list[tuple[Path, str | None]]:
    """(profile, label) to measure on this machine: the label a GPU without a profile of its own gives
    the profile of its class (config/gpus.py), None where the profile's own label stands."""
    from .config.gpus import choose_profile

    facts = _cuda_device()
    if not facts:
        return [(checkout_file("parameters", name, root), None) for name in CPU_PROFILES]
    choice = choose_profile(*facts)
    print(f"[report] {choice.why}" + (f', labelled "{choice.label}"' if choice.label else ""), file=sys.stderr)
    return [(checkout_file("parameters", f"{choice.profile}.yaml", root), choice.label)]


def _cuda_device() -> tuple | None:
    """GPU 0's (name, memory GiB, compute capability) when torch can use it, else None."""
    import torch

    from .measure.environment import gpu_facts

    facts = gpu_facts()
    if facts:
        return facts
    gpus = _nvidia_smi_gpus()
    if gpus:  # a GPU torch cannot use: measuring the CPU profiles instead would answer the wrong question
        raise ConfigError(f"nvidia-smi sees {gpus[0]!r} but torch {torch.__version__} cannot use it (driver too "
                          "old for this build, or no CUDA build): install a matching torch, or name CPU profiles")
    return None


def _nvidia_smi_gpus() -> list[str]:
    """GPU names nvidia-smi lists (none without the tool or a driver)."""
    import subprocess

    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.split(":", 1)[1].split("(UUID")[0].strip() for line in out.splitlines() if line.startswith("GPU ")]


def check_results_file(path: Path, params: Path, cfg: BenchConfig) -> None:
    """For --report-only: the profile's results file must exist and hold rows of its label (a one-line
    error: a page headed with one label beside an index and console naming another contradicts itself);
    rows measured with other settings than `params` names are reported as measured, with a warning that
    names the settings."""
    if not path.is_file():  # one a run is writing now was refused before (check_no_live_run)
        # results copied back from another machine sit in another profile's folder: name the profile
        others = sorted(p.parent.name for p in path.parent.parent.glob("*/results.jsonl") if p != path)
        found = (f"; results found in {', '.join(others[:5])}{' ...' if len(others) > 5 else ''}: name the "
                 "parameters file they were measured with (report PARAMS.yaml --report-only)" if others else "")
        raise ConfigError(f"{params}: no results file at {path} (run without --report-only to measure{found})")
    from .sweep.jobs import settings_differing

    rows = results_rows(path, "--out")
    labels = sorted({row.label for row in rows} - {cfg.label})
    if labels:
        raise ConfigError(f"{path} holds rows of the label {labels[0]!r}, not {params.name}'s {cfg.label!r}: "
                          "name the parameters file they were measured with")
    other = [row for row in rows if row.settings != cfg.settings_fingerprint()]
    if other:
        warnings.warn(f"{path}: {len(other)} of {len(rows)} rows were measured with other settings than "
                      f"{params.name} ({settings_differing(cfg, other)}); the page reports them as measured, and "
                      "a run would not add to them", stacklevel=2)


@dataclasses.dataclass(frozen=True)
class Sweep:
    """How `report` measures a profile: the `run` command's options it shares."""

    retry_failed: bool = False  # --retry-failed: measure again the rounds that did not end ok
    progress: bool = True  # False with --quiet: no progress bar or per-round lines


def measure_profile(cfg: BenchConfig, params: Path, results: Path, sweep: Sweep = Sweep()) -> str:
    """The profile's sweep in this process; "" when it ran, else why it was refused (one line)."""
    from .results.rows import OtherFormatError, ResultsTooLargeError
    from .results.runs import MixedRunsError
    from .results.writer import NotAResultsFileError, ResultsLockedError
    from .sweep.jobs import SettingsMismatchError
    from .sweep.loop import run_sweep

    print(f"[report] {params.name}: measuring -> {results}", file=sys.stderr)
    try:
        summary = run_sweep(cfg, results, retry_failed=sweep.retry_failed, progress=sweep.progress)
        print(f"[report] {summary.line()}", file=sys.stderr)
    except (ResultsLockedError, NotAResultsFileError, SettingsMismatchError, MixedRunsError, OtherFormatError,
            ResultsTooLargeError) as err:
        return f"{type(err).__name__}: {err}"
    return ""


def run_profile(params: Path, out_dir: Path, step_timeout_s: int, measure: bool, cfg: BenchConfig,
                results: Path | None = None, sweep: Sweep = Sweep()) -> ProfileOutcome:
    """`cfg`: the profile as main() loaded and adjusted it (a GPU's own label, live_groups fit);
    `results`: the file --results named, else the profile's folder under `out_dir`."""
    notebook = checkout_file("notebooks", "benchmark.ipynb")
    parameters = check_parameters(cfg, params, notebook)
    results = profile_results(cfg, out_dir, results)
    page = results.parent / "report.html"
    error = measure_profile(cfg, params, results, sweep) if measure else ""
    refused = bool(error)
    if error:  # a sweep refused (e.g. results locked by a run): the page it had stays, the index says why
        if not page.exists():
            write_stub(page, cfg.label, error)
    else:
        parameters |= {"results_path": str(results), "measure": False,  # measured above: the notebook only reads
                       "params_file": shown_path(params)}
        executed = results.parent / "benchmark.ipynb"
        print(f"[report] {params.name}: rendering notebook -> {executed}", file=sys.stderr)
        error = render(notebook, executed, page, parameters, step_timeout_s, page_title(results, cfg.label), cfg.label,
                       cfg.users_folders())
    from .sweep.adaptive import first_pass_state

    left = (first_pass_state(cfg, results) or (0, 0))[0]
    write_profile_state(results.parent, cfg, shown_path(params), error, left, page_rebuilt=not refused)
    return ProfileOutcome(cfg, page, results, error, shown_path(params), left)


def relabelled(cfg: BenchConfig, label: str | None) -> BenchConfig:
    return cfg if label is None else dataclasses.replace(cfg, label=label)


def check_duration(configs: list[BenchConfig], profiles: list[Path], results_files: list[Path],
                   allow_long: bool) -> None:
    """Print each profile's plan (what is left of it) before measuring; a run estimated past
    LONG_RUN_S stops here with one line unless `allow_long` (max-autotune's cold compiles take hours)."""
    from .sweep.jobs import SettingsMismatchError
    from .sweep.plan import estimate, plan_summary

    for cfg, path, results in zip(configs, profiles, results_files):
        try:
            print(plan_summary(cfg, str(path), results), flush=True)
            seconds = sum(e.total for e in estimate(cfg, results)[0])
        except SettingsMismatchError:
            continue  # the sweep refuses it with its own line (run_profile)
        if seconds > LONG_RUN_S and not allow_long:
            raise ConfigError(f"{path}: plan estimates {seconds / 3600:.1f} h to measure (above), more than "
                              f"{LONG_RUN_S / 3600:.0f} h: run again with --allow-long, or trim the profile")


def main(args) -> int:
    """`python -m bench_utils report [PARAMS ...]`: returns 0 when every profile ran through."""
    out_dir = Path(args.out) if args.out else reports_root()
    if args.compare:
        return compare_main(Path(args.compare[0]), Path(args.compare[1]), out_dir, args.notebook_timeout)

    runs = [(Path(p), None) for p in args.params] or default_runs(repo_root())
    profiles = [path for path, _ in runs]
    named = getattr(args, "results", None)
    sweep = Sweep(getattr(args, "retry_failed", False), not getattr(args, "quiet", False))
    # every file is checked before anything runs
    configs = with_budget([relabelled(load_config(path), label) for path, label in runs],
                          getattr(args, "budget_min", None))
    if named and len(configs) > 1:
        raise ConfigError("--results names one file: give one parameters file with it")
    results_files = [profile_results(cfg, out_dir, named) for cfg in configs]
    check_distinct_folders(configs, profiles)
    check_outputs(out_dir, results_files, named=bool(named))
    if args.report_only:
        for cfg, path, results in zip(configs, profiles, results_files):
            check_results_file(results, path, cfg)
    else:
        check_inductor_cache_dir()
        configs = ready_here(configs, "report")
        check_duration(configs, profiles, results_files, args.allow_long)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = dt.datetime.now()
    outcomes = [run_profile(p, out_dir, args.notebook_timeout, not args.report_only, cfg, named, sweep)
                for p, cfg in zip(profiles, configs)]
    summary_page, summary_error = build_summary(out_dir, args.notebook_timeout)
    index = write_index(profile_lines(out_dir), out_dir / "index.html", summary_page and summary_page.name,
                        relative_text(summary_error, out_dir))
    copy_method(out_dir)
    minutes = (dt.datetime.now() - started).total_seconds() / 60
    for outcome in outcomes:
        print(terminal_text(f"[report] {outcome.cfg.label}: {outcome_words(outcome.error)} -> {outcome.page}"))
    print(terminal_text(f"[report] summary: {outcome_words(summary_error)} -> {summary_page}" if summary_page else
                        "[report] summary: none (no run in the folder is finished and readable: the index says why)"))
    print(f"[report] done in {minutes:.1f} min: open {index.resolve()}")
    print(f"\nShould you compile?\n{verdict_lines(outcomes)}")
    return 1 if summary_error or any(outcome.error for outcome in outcomes) else 0
