"""Command line: `python -m bench_utils {models,plan,run,report,selfcheck}` (see --help)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from .config.bench_config import ConfigError
from .config.parameters_file import config_from_dict, load_config
from .config.registry import MODELS, SIZES
from .messages import use_one_line_warnings
from .sweep.preflight import check_device_available, check_distinct_folders

EXIT_BAD_INPUT = 2  # argparse's own code for bad usage; we use it for every bad input


def _cmd_models(args) -> int:
    rows = [("name", "task", "checkpoint", "parameters")]
    for spec in MODELS.values():
        rows.append((spec.name, spec.task, spec.checkpoint, f"{spec.published_params / 1e6:.1f}M"))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for number, row in enumerate(rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if number == 0:
            print("  ".join("-" * width for width in widths))
    print(f"\nsizes: {', '.join(SIZES)} (tiny = same classes, shrunk configs for smoke runs)")
    return 0


def _cmd_run(args) -> int:
    from .results.writer import NotAResultsFileError, ResultsLockedError
    from .sweep.runner import SettingsMismatchError, run_sweep
    from .sweep.studies import run_studies, study_runs

    configs = [load_config(path) for path in args.params]
    if args.results and len(configs) > 1:
        raise ConfigError("--results names one file: give one parameters file with it")
    check_distinct_folders(configs, args.params)
    if not args.ray:  # on Ray the GPUs are on the workers, not here
        check_device_available(configs)
    try:
        if args.ray:  # every profile at once, each cell a Ray task (bench_utils/sweep/cluster.py)
            from .sweep.cluster import run_sweeps_on_ray

            summaries = run_sweeps_on_ray(configs, args.ray, [args.results] * len(configs), args.retry_failed,
                                          progress=not args.quiet, cpus_per_cell=args.cpus_per_cell)
        else:
            summaries = [run_sweep(cfg, args.results, retry_failed=args.retry_failed, progress=not args.quiet)
                         for cfg in configs]
            for cfg, summary in zip(configs, summaries):  # serving and compile-time studies, if asked for
                if study_runs(cfg):
                    print(run_studies(cfg, summary.results_path, progress=not args.quiet))
    except (ResultsLockedError, NotAResultsFileError, SettingsMismatchError) as err:
        raise ConfigError(str(err)) from None
    for summary in summaries:
        print(summary.line())
    return 0


def _cmd_plan(args) -> int:
    from .sweep.plan import plan_text
    from .sweep.runner import SettingsMismatchError, default_results_path

    configs = [load_config(path) for path in args.params]
    if args.results and len(configs) > 1:
        raise ConfigError("--results names one file: give one parameters file with it")
    for cfg, path in zip(configs, args.params):
        try:
            print(plan_text(cfg, path, args.results or default_results_path(cfg)))
        except SettingsMismatchError as err:
            raise ConfigError(str(err)) from None
    return 0


def _cmd_cell(args) -> int:
    from .measure.cell import measure_cell

    cfg = config_from_dict(json.loads(Path(args.config).read_text()))
    row = measure_cell(cfg, args.model, args.batch_size, args.mode, args.repeat,
                       Path(args.trace) if args.trace else None)
    Path(args.out).write_text(row.to_json())
    print(f"{args.model} bs={args.batch_size} {args.mode} #{args.repeat}: {row.status} {row.error}")
    return 0


def _cmd_study(args) -> int:
    from .sweep.studies import measure_study

    cfg = config_from_dict(json.loads(Path(args.config).read_text()))
    row = measure_study(cfg, (args.kind, args.model, args.variant), Path(args.results))
    Path(args.out).write_text(row.to_json())
    print(f"{args.kind} {args.model} {args.variant}: {row.status} {row.error}")
    return 0


def _cmd_selfcheck(args) -> int:
    from .selfcheck import main as selfcheck_main

    return selfcheck_main(args.device, args.keep)


def _cmd_report(args) -> int:
    from .report.build import main as report_main

    return report_main(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench_utils", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{models,plan,run,report,selfcheck}")
    sub.add_parser("models", help="list the registry's checkpoints").set_defaults(func=_cmd_models)

    run = sub.add_parser("run", help="measure every cell of a parameters file")
    run.add_argument("params", nargs="+", help="parameters YAML, e.g. parameters/cpu.yaml (several: in turn)")
    run.add_argument("--results", help="results JSONL (default: reports/<label>/results.jsonl)")
    run.add_argument("--retry-failed", action="store_true", help="measure again cells that did not end ok")
    run.add_argument("--quiet", action="store_true", help="no progress bar or per-cell lines")
    run.add_argument("--ray", metavar="ADDRESS", help="run the cells as Ray tasks, all profiles at once: auto "
                     "(the cluster `ray start` joined), ray://HOST:PORT, HOST:PORT, or local:N (N CPUs here)")
    run.add_argument("--cpus-per-cell", type=int, default=1, help="with --ray: CPUs (and torch threads) per cell")
    run.set_defaults(func=_cmd_run)

    plan = sub.add_parser("plan", help="estimate how long a parameters file will run, and which cells may time out")
    plan.add_argument("params", nargs="+", help="parameters YAML files")
    plan.add_argument("--results", help="results JSONL whose finished processes are left out (default: as run)")
    plan.set_defaults(func=_cmd_plan)

    cell = sub.add_parser("cell")  # internal, unlisted: one cell in a subprocess, run by the runner
    cell.add_argument("--config", required=True)
    cell.add_argument("--model", required=True)
    cell.add_argument("--batch-size", type=int, required=True)
    cell.add_argument("--mode", required=True)
    cell.add_argument("--repeat", type=int, default=0)
    cell.add_argument("--out", required=True)
    cell.add_argument("--trace", help="where the profiler trace goes (with profile: true)")
    cell.set_defaults(func=_cmd_cell)

    study = sub.add_parser("study")  # internal, unlisted: one study process, run by studies.py
    study.add_argument("--kind", required=True, choices=("serving", "compile-cost"))
    study.add_argument("--config", required=True)
    study.add_argument("--model", required=True)
    study.add_argument("--variant", required=True)
    study.add_argument("--results", required=True)
    study.add_argument("--out", required=True)
    study.set_defaults(func=_cmd_study)

    check = sub.add_parser("selfcheck", help="first thing on a new machine: tiny models through every mode, "
                           "each measurement checked (PASS/FAIL)")
    check.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    check.add_argument("--keep", metavar="DIR", help="keep the results files here (default: a temporary folder)")
    check.set_defaults(func=_cmd_selfcheck)

    report = sub.add_parser("report", help="run the notebooks with papermill and build reports/index.html")
    report.add_argument("params", nargs="*", help="parameters YAML files (default: by hardware)")
    report.add_argument("--out", help="report folder (default: $BENCH_REPORTS_DIR, else reports/ in the checkout)")
    report.add_argument("--cell-timeout", type=int, default=3600, help="seconds per notebook cell")
    report.add_argument("--report-only", action="store_true",
                        help="measure nothing: report the results files already in the report folder")
    report.set_defaults(func=_cmd_report)
    return parser


def _terminated(signum, frame) -> None:
    """SIGTERM (a scheduler's or `kill`'s stop) unwinds like Ctrl-C: the cell in flight is killed, its
    temporary folder removed, the lock released; finished cells stay saved."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    use_one_line_warnings()
    signal.signal(signal.SIGTERM, _terminated)
    try:
        return args.func(args)
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # the reader went away (`plan ... | head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return 1
    except OSError as err:  # a results or reports path that cannot be written: one line, not a traceback
        where = err.filename or "?"
        print(f"error: {where}: {err.strerror or err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted: finished cells are saved; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
