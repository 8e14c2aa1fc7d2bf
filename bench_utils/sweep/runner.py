"""Run a sweep: every process of every cell of a config (its `runs()`: cells x repeats) in its own
subprocess, each row appended as soon as it exists.

A subprocess per cell isolates what one cell does to the next (CUDA-graph pools, dynamo caches,
allocator fragmentation, a segfault) and lets a hung cell be killed. Re-running resumes: cells with
a row in the results file are skipped. No torch import in the parent.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..paths import inside, reports_root
from ..results.rows import BenchResult, cell_fields, read_results, run_key
from ..results.writer import ResultsWriter

TRACES_DIR = "traces"
LOG_TAIL_CHARS = 2000  # how much of a crashed cell's log goes into its error text


class SettingsMismatchError(ValueError):
    """The results file holds rows measured with other settings."""


@dataclass
class SweepSummary:
    results_path: Path
    total: int  # processes: cells x repeats
    skipped: int = 0  # finished in an earlier run
    statuses: dict = field(default_factory=dict)  # status -> count for processes run now

    def line(self) -> str:
        done = ", ".join(f"{n} {s}" for s, n in sorted(self.statuses.items())) or "nothing new"
        return f"{self.total} cell processes: {self.skipped} already done, {done} -> {self.results_path}"


def default_results_path(cfg: BenchConfig, root: str | Path | None = None) -> Path:
    """<root>/<label slug>/results.jsonl; root defaults to paths.reports_root()."""
    return Path(root or reports_root()) / cfg.slug() / "results.jsonl"


def pending_runs(cfg: BenchConfig, results_path: Path, retry_failed: bool = False) -> list[tuple]:
    """Runs of `cfg` (model, batch_size, mode, repeat) that have no row yet (or no `ok` row, with
    retry_failed)."""
    if not results_path.exists():
        return cfg.runs()
    rows = read_results(results_path).rows
    labels = sorted({row.label for row in rows} - {cfg.label})
    if labels:  # e.g. "A100" and "a100!" share the folder a100/: one label's rows are not the other's
        raise SettingsMismatchError(f"{results_path} holds rows of the label {labels[0]!r}, not {cfg.label!r}; "
                                    "choose another label or --results file")
    foreign = {row.settings for row in rows} - {cfg.settings_fingerprint()}
    if foreign:
        raise SettingsMismatchError(
            f"{results_path} holds rows measured with other settings (size, dtype, weights, "
            f"warmup, iterations, image or device differ); choose another --results file")
    done = {row.key for row in rows if row.status == "ok" or not retry_failed}
    return [run for run in cfg.runs() if run_key(cfg, run) not in done]


def failure_row(cfg: BenchConfig, run: tuple, status: str, error: str, duration_s: float) -> BenchResult:
    model, batch_size, mode, repeat = run
    return BenchResult(
        **cell_fields(cfg, model, batch_size, mode, cfg.device, repeat), status=status, error=error,
        duration_s=duration_s,
        started_at=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - duration_s)))


def _log_tail(log_path: Path) -> str:
    text = log_path.read_text(errors="replace") if log_path.exists() else ""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-5:])[-LOG_TAIL_CHARS:]


def _die_with_parent() -> None:
    """In the cell process: get SIGKILL if the sweep process dies (Linux), so no orphan keeps a GPU."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except OSError:
        pass


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def run_name(run: tuple) -> str:
    """A run as people read it and as its log file is named: "vit-bs1-default-r0"."""
    model, batch_size, mode, repeat = run
    return f"{model}-bs{batch_size}-{mode}-r{repeat}"


def trace_path(results_dir: Path, run: tuple) -> Path:
    """Where a process's profiler trace goes (profile: true): traces/<run name>.json in the results folder."""
    return inside(results_dir / TRACES_DIR / f"{run_name(run)}.json", results_dir / TRACES_DIR)


def run_logged(command: list[str], timeout_s: float, log_path: Path, env: dict | None = None) -> tuple[int | None, float]:
    """Run `command` in a session of its own, its output into `log_path`: (exit code, or None when
    it ran past `timeout_s` and was killed, seconds it ran). Ctrl-C kills it too."""
    start = time.perf_counter()
    with open(log_path, "w") as log:
        # A session of its own, so a timeout kills the process and any compile workers it forked.
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True, preexec_fn=_die_with_parent)
        try:
            returncode = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            return None, time.perf_counter() - start
        except BaseException:  # Ctrl-C and friends: the process must not outlive the sweep
            _kill_group(process)
            raise
    return returncode, time.perf_counter() - start


def failure_text(returncode: int | None, timeout_s: float, log_path: Path, what: str = "cell process") -> tuple[str, str]:
    """(status, error) of a process that left no row: timed out or crashed, with its log's tail."""
    if returncode is None:
        return "timeout", f"no result after timeout_s={timeout_s:g} s; log: {_log_tail(log_path)}"
    reason = f"killed by {signal_name(-returncode)}" if returncode < 0 else f"exit code {returncode}"
    return "crashed", f"{what} {reason}; log: {_log_tail(log_path)}"


def run_cell_subprocess(cfg: BenchConfig, run: tuple, log_dir: Path) -> BenchResult:
    """Run one process of a cell in a fresh Python process with cfg.timeout_s; always returns a row."""
    model, batch_size, mode, repeat = run
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = inside(log_dir / f"{run_name(run)}.log", log_dir)
    with tempfile.TemporaryDirectory(prefix="bench-cell-") as tmp:
        config_path, out_path = Path(tmp) / "config.json", Path(tmp) / "row.json"
        config_path.write_text(json.dumps(cfg.to_dict()))
        command = [sys.executable, "-m", "bench_utils", "cell", "--config", str(config_path),
                   f"--model={model}", "--batch-size", str(batch_size), "--mode", mode, "--repeat", str(repeat),
                   "--out", str(out_path), "--trace", str(trace_path(log_dir.parent, run))]
        returncode, duration_s = run_logged(command, cfg.timeout_s, log_path)
        if returncode == 0 and out_path.exists():
            return BenchResult.from_dict(json.loads(out_path.read_text()))
    status, error = failure_text(returncode, cfg.timeout_s, log_path)
    return failure_row(cfg, run, status, error, duration_s)


def signal_name(number: int) -> str:
    """'SIGSEGV' for 11; numbers without a name (most real-time signals) as 'signal 40'."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def cell_line(row: BenchResult) -> str:
    name = f"{row.model} bs={row.batch_size} {row.mode} #{row.repeat}"
    if row.status != "ok":
        return f"{name}: {row.status.upper()} {row.error[:160]}"
    text = f"{name}: {row.latency_ms_median:.2f} ms median of {len(row.samples_s)} calls"
    if row.mode != "eager":
        text += f" (compile {row.compile_s:.1f} s)"
    return text


def run_sweep(cfg: BenchConfig, results_path: str | Path | None = None, retry_failed: bool = False,
              progress: bool = True) -> SweepSummary:
    """Measure every pending cell of `cfg`, appending each row to `results_path` as it finishes."""
    results_path = Path(results_path) if results_path else default_results_path(cfg)
    with ResultsWriter(results_path) as writer:
        todo = pending_runs(cfg, results_path, retry_failed)
        summary = SweepSummary(results_path, total=len(cfg.runs()), skipped=len(cfg.runs()) - len(todo))
        bar = progress_bar(todo, progress)
        for run in bar:
            if progress:
                bar.set_description(run_name(run))
            row = run_cell_subprocess(cfg, run, results_path.parent / "logs")
            writer.append(row)
            summary.statuses[row.status] = summary.statuses.get(row.status, 0) + 1
            if progress:
                bar.write(cell_line(row))
    return summary


def progress_bar(cells: list, enabled: bool):
    if not enabled or not cells:
        return cells
    from tqdm import tqdm

    return tqdm(cells, unit="process", file=sys.stderr, dynamic_ncols=True)
