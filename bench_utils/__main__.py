"""Command line: `python -m bench_utils {models,plan,run,report,selfcheck}`; each verb's --help has examples."""

from __future__ import annotations

import argparse
import os
import sys

from . import __version__
from .config.bench_config import ConfigError
from .config.parameters_file import load_config, with_budget
from .config.registry import MODELS, SIZES
from .config.validation import check_distinct_folders
from .measure.environment import check_open_files, ready_here
from .messages import terminal_text, use_one_line_warnings
from .paths import check_inductor_cache_dir, default_inductor_cache_dir, default_matplotlib_dir, inside, reports_root
from .stops import unwind_on_stop

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


def _configs(args) -> list:
    """The parameters files' configs (with --budget-min's budget); --results names one file, so it takes one
    parameters file."""
    configs = with_budget([load_config(path) for path in args.params], getattr(args, "budget_min", None))
    if args.results and len(configs) > 1:
        raise ConfigError("--results names one file: give one parameters file with it")
    return configs


def _budget(text: str) -> float:
    """--budget-min: minutes of sweep, a number >= 0."""
    try:
        minutes = float(text)
    except ValueError:
        minutes = -1.0
    if not minutes >= 0 or minutes == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; allowed: minutes of sweep, a number >= 0")
    return minutes


def _cmd_run(args) -> int:
    from .results.writer import NotAResultsFileError, ResultsLockedError
    from .sweep.jobs import SettingsMismatchError
    from .sweep.loop import default_results_path, run_sweep, run_sweeps_on_ray

    if args.cpus_per_cell is not None and not args.ray:  # a local worker's threads are the profile's own
        raise ConfigError("--cpus-per-cell applies to a Ray run only (--ray ADDRESS)")
    configs = _configs(args)
    check_distinct_folders(configs, args.params)
    if not args.results:  # a profile folder that is a link out of the reports folder is refused, as by report
        for cfg in configs:
            inside(default_results_path(cfg), reports_root())
    check_inductor_cache_dir()
    if not args.ray:  # on Ray the GPUs are on the workers, not here (an actor holds one group on its GPU)
        configs = ready_here(configs, "gpu")
    try:
        if args.ray:  # every profile at once, each through the same loop (launchers: sweep/launchers/ray.py)
            summaries = run_sweeps_on_ray(configs, args.ray, [args.results] * len(configs), args.retry_failed,
                                          progress=not args.quiet,
                                          cpus_per_cell=1 if args.cpus_per_cell is None else args.cpus_per_cell)
        else:
            summaries = [run_sweep(cfg, args.results, retry_failed=args.retry_failed, progress=not args.quiet)
                         for cfg in configs]
    except (ResultsLockedError, NotAResultsFileError, SettingsMismatchError) as err:
        raise ConfigError(str(err)) from None
    for summary in summaries:
        print(summary.line())
    return 0


def _cmd_plan(args) -> int:
    from .sweep.jobs import SettingsMismatchError
    from .sweep.loop import default_results_path
    from .sweep.plan import plan_summary, plan_text

    configs = _configs(args)
    for cfg, path in zip(configs, args.params):
        try:
            print((plan_text if args.detail else plan_summary)(cfg, path, args.results or default_results_path(cfg)))
        except SettingsMismatchError as err:
            raise ConfigError(str(err)) from None
    return 0


def _cmd_selfcheck(args) -> int:
    from .measure.environment import check_device_available
    from .selfcheck import main as selfcheck_main, profiles

    if args.device == "cuda":  # no usable GPU: one line, as `run` says it, not a traceback
        check_device_available(profiles("cuda"))
    return selfcheck_main(args.device, args.keep, args.json, args.quick)


def _cmd_report(args) -> int:
    from .pipeline import main as report_main

    return report_main(args)


def _positive_seconds(text: str) -> int:
    """--notebook-timeout: a whole number of seconds above 0 (0 or less is not "no limit")."""
    try:
        seconds = int(text)
    except ValueError:
        seconds = 0
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; allowed: a whole number of seconds > 0")
    return seconds


DESCRIPTION = """Benchmark torch.compile against eager on Hugging Face vision models, and publish the answer.

Start with `selfcheck` on a new machine, `plan` to see how long a parameters file takes, then
`report` (measures and builds the pages) or `run` (measures only)."""

EXAMPLES = {
    "main": """examples:
  python -m bench_utils selfcheck                        # tiny models through every mode, PASS/FAIL
  python -m bench_utils plan parameters/cpu-report.yaml  # how long, which cells may time out
  python -m bench_utils report                           # this machine's default profile -> reports/index.html
  python -m bench_utils <command> --help                 # each command's options and examples""",
    "models": """examples:
  python -m bench_utils models    # short names to use in a parameters file's `models:` list""",
    "run": """examples:
  python -m bench_utils run parameters/cpu.yaml                     # tiny models, a few minutes
  python -m bench_utils run parameters/h100.yaml --retry-failed     # measure failed cells again
  python -m bench_utils run parameters/a100.yaml parameters/t4.yaml --ray auto   # a Ray cluster

Cells already in the results file are skipped: run the same command again to resume.""",
    "plan": """examples:
  python -m bench_utils plan parameters/cpu-report.yaml
  python -m bench_utils plan parameters/cpu-report.yaml --detail
  python -m bench_utils plan parameters/h100.yaml --results reports/h100/results.jsonl""",
    "selfcheck": """examples:
  python -m bench_utils selfcheck                 # cuda when there is one, else cpu
  python -m bench_utils selfcheck --device cpu --keep /tmp/selfcheck""",
    "report": """examples:
  python -m bench_utils report                                        # this machine's default profile
  python -m bench_utils report parameters/cpu.yaml --out /tmp/reports # a small run, pages elsewhere
  python -m bench_utils report parameters/h100.yaml --report-only     # rows copied from a GPU machine
  python -m bench_utils report --compare before.jsonl after.jsonl     # two runs side by side

Each profile gets reports/<label>/report.html (verdict first) with cells.csv beside it; the index
and a summary page link them all. The verdict is printed at the end.""",
}


def _verb(sub, name: str, help_text: str, description: str = "") -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help_text, description=description or help_text, epilog=EXAMPLES[name],
                          formatter_class=argparse.RawDescriptionHelpFormatter)


PARAMS_HELP = "parameters YAML, e.g. parameters/cpu.yaml"
BUDGET_HELP = ("the profile's budget_min instead: extra rounds for precision until this many minutes of sweep "
               "(rounds already measured count)")


def _sweep_options(parser: argparse.ArgumentParser, what: str) -> None:
    """The options of a command that runs sweeps (`run`, `report`): one wording, one spelling."""
    parser.add_argument("--results", metavar="FILE", help=f"the results JSONL file (one parameters file; default: "
                        f"{what})")
    parser.add_argument("--retry-failed", action="store_true", help="measure again the rounds that did not end ok")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or per-round lines")
    parser.add_argument("--budget-min", type=_budget, metavar="MINUTES", help=BUDGET_HELP)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench_utils", description=DESCRIPTION, epilog=EXAMPLES["main"],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"compile-bench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{models,plan,run,report,selfcheck}")
    _verb(sub, "models", "list the registry's checkpoints (short name, task, hub id, size)").set_defaults(
        func=_cmd_models)

    run = _verb(sub, "run", "measure every cell of one or more parameters files (no pages)")
    run.add_argument("params", nargs="+", metavar="PARAMS.yaml", help=f"{PARAMS_HELP} (several: in turn)")
    _sweep_options(run, "reports/<label>/results.jsonl")
    run.add_argument("--ray", metavar="ADDRESS", help="run the cells as Ray tasks, all profiles at once: auto "
                     "(the cluster `ray start` joined), ray://HOST:PORT, HOST:PORT, or local:N (N CPUs here)")
    run.add_argument("--cpus-per-cell", type=int, metavar="N", help="with --ray: CPUs (and torch threads) per cell "
                     "(default 1)")
    run.set_defaults(func=_cmd_run)

    plan = _verb(sub, "plan", "estimate how long a parameters file will run, and which cells may time out")
    plan.add_argument("params", nargs="+", metavar="PARAMS.yaml", help=PARAMS_HELP)
    plan.add_argument("--results", metavar="FILE", help="the results JSONL file whose finished rounds are left out "
                      "(default: as run)")
    plan.add_argument("--budget-min", type=_budget, metavar="MINUTES", help=BUDGET_HELP)
    plan.add_argument("--detail", action="store_true", help="everything behind the estimate: where the time goes, "
                      "per model, the constants used, what to trim (default: at most six lines, as report prints)")
    plan.set_defaults(func=_cmd_plan)

    check = _verb(sub, "selfcheck", "first thing on a new machine: tiny models through every mode, each "
                  "measurement checked (PASS/FAIL)")
    check.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                       help="where to check: auto (cuda when torch sees a GPU, else cpu), cpu or cuda")
    check.add_argument("--keep", metavar="DIR", help="keep the results files here (default: a temporary folder)")
    check.add_argument("--json", metavar="FILE", help="also write every check and cell record to FILE: what a "
                       "first GPU run sends back (docs/gpu.md)")
    check.add_argument("--quick", action="store_true", help="a GPU's core checks alone (the clock; eager, default "
                       "and reduce-overhead on tiny ViT; the oversized batch), a few minutes: what "
                       "benchmarks/gpu_probe.sh runs first (docs/gpu.md)")
    check.set_defaults(func=_cmd_selfcheck)

    report = _verb(sub, "report", "measure the profiles, then build a page per profile, a summary and "
                   "reports/index.html")
    report.add_argument("params", nargs="*", metavar="PARAMS.yaml", help=f"{PARAMS_HELP} (default: by hardware)")
    report.add_argument("--out", metavar="DIR", help="report folder (default: $BENCH_REPORTS_DIR, else reports/ in "
                        "the checkout)")
    _sweep_options(report, "DIR/<label>/results.jsonl; the page is written beside it")
    report.add_argument("--notebook-timeout", type=_positive_seconds, default=3600, metavar="SECONDS",
                        help="seconds any one step of a notebook (a notebook cell) may run (> 0)")
    report.add_argument("--compare", nargs=2, metavar=("BEFORE.jsonl", "AFTER.jsonl"),
                        help="two results JSONL files: a page comparing them cell by cell (compare.html), nothing measured")
    report.add_argument("--report-only", action="store_true",
                        help="measure nothing: report the results files already in the report folder")
    report.add_argument("--allow-long", action="store_true",
                        help="measure even when `plan` (printed first) estimates more than an hour")
    report.set_defaults(func=_cmd_report)
    return parser


def open_standard_streams() -> None:
    """A standard stream the shell closed (`2>&-`) reads and writes /dev/null instead: Python leaves
    sys.stderr None (the first progress-bar update killed `run`, exit 1, nothing measured), and the
    next file opened would take its number (a C library's warning would land in the results file).
    Output a locale cannot encode is escaped (the verdict's "×" in an ASCII locale ended in a traceback)."""
    for fd, name, mode in ((0, "stdin", os.O_RDONLY), (1, "stdout", os.O_WRONLY), (2, "stderr", os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, mode)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, "r" if fd == 0 else "w", closefd=False, errors="backslashreplace",
                                    **({"buffering": 1} if fd else {})))
    for stream in (sys.stdout, sys.stderr):  # an ASCII locale (LC_ALL=C): "×" or "ü" escaped, not a traceback
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def check_working_folder() -> None:
    """ConfigError in one line when the folder the command runs in was deleted (or moved) under the shell:
    every relative path, and the workers' and kernels' own, failed as "No such file or directory", naming
    nothing."""
    try:
        os.getcwd()
    except FileNotFoundError:
        shown = os.environ.get("PWD") or "the current folder"
        raise ConfigError(f"{shown}: the folder this command runs in no longer exists (deleted or moved); cd to one "
                          "that exists and run it again") from None


def main(argv: list[str] | None = None) -> int:
    open_standard_streams()
    args = build_parser().parse_args(argv)
    use_one_line_warnings()
    default_inductor_cache_dir()  # before any worker starts: they inherit it
    default_matplotlib_dir()  # ... and the notebooks' kernels this
    unwind_on_stop()  # SIGTERM and SIGHUP unwind like Ctrl-C (stops.py)
    try:
        check_working_folder()
        if args.func in (_cmd_run, _cmd_report, _cmd_selfcheck):  # they start workers and notebooks' kernels
            check_open_files()
        return args.func(args)
    except ConfigError as err:
        print(terminal_text(f"error: {err}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # the reader went away (`plan ... | head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return 1
    except OSError as err:  # a results or reports path that cannot be written: one line, not a traceback
        where = f"{err.filename}: " if err.filename else ""  # else the message names the path itself
        print(terminal_text(f"error: {where}{err.strerror or err}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        # plan and models measure nothing, nor does report --report-only (it builds pages from saved rows)
        measuring = args.func in (_cmd_run, _cmd_report, _cmd_selfcheck) and not getattr(args, "report_only", False)
        print("interrupted: finished cells are saved; run the same command again to resume" if measuring
              else "interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
