"""bench_utils.race: the project's question (should I torch.compile this model, and how?) about the
model a notebook holds, answered by the engine itself. The model and its example inputs are checked in
the kernel and written once into an object folder (measure/objects.py); the race is then a BenchConfig
whose one model is that folder (config/objects.py), measured by the one sweep loop (sweep/loop.py) in
isolated processes, paired rounds, the same statistics, race, verdict and pay-back. docs/explore.md.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

from ..config.bench_config import BenchConfig
from ..config.objects import is_object_folder, read_manifest
from ..config.parameters_file import config_from_dict
from ..config.validation import ConfigError
from ..messages import use_one_line_errors
from ..paths import INDUCTOR_CACHE_ENV, default_inductor_cache_dir
from ..stops import one_interrupt
from .answer import OBJECTS, Answer, write_parameters
from .arguments import Example, checked, race_name

DEFAULT_BUDGET_MIN = 3.0  # minutes of sweep: one model decided in a notebook's few minutes on a 2-core CPU
# what a race sets itself: its one model, where that comes from and its batch (the example inputs')
OWN_KEYS = ("models", "checkpoints", "batch_sizes", "size", "weights", "image")
# where a race differs from BenchConfig's defaults: no profiler pass (the page's "why" section; the
# answer needs none, and it costs a few seconds a configuration)
RACE_DEFAULTS = {"profiler": False}


def race(model, example_inputs, *, budget_min: float = DEFAULT_BUDGET_MIN, configurations=None,
         device: str = "auto", name: str | None = None, folder=None, progress: bool = True, **settings) -> Answer:
    """Race `model` (a torch.nn.Module) called with `example_inputs` (a tensor, a tuple of positional
    arguments or a dict of keyword arguments) eager against its compiled configurations, each in processes
    of its own, and return the answer.

    budget_min: minutes of sweep after which no extra round for precision starts (the first rounds run
    whatever it says); configurations: eager and the configurations to race (default: this device's,
    default_configurations); device: auto, cpu or cuda; name: the model's name on the answer and in file
    names (default: its class's); folder: where the race's files go (default: a new temporary folder;
    a folder that holds this race already resumes it); progress: the bar and a line per process;
    settings: any other parameter of BenchConfig (python -m bench_utils.config.parameter_docs), e.g.
    worthwhile=1.2. A bad argument raises ConfigError in one line, before any process starts. The
    kernel's stop button ends every measuring process; the answer then holds the rounds measured."""
    use_one_line_errors(ConfigError)  # a wrong argument: one line in the notebook, not the package's frames
    name = race_name(model, name)
    values = race_values(name, budget_min, configurations, device, settings)
    config_from_dict(values | {"models": ["resnet"]}, "race")  # every setting checked before the model is written
    example = checked(model, example_inputs)
    folder = race_folder(folder)
    objects = place_object(folder / OBJECTS / name, model, example_inputs, example)
    cfg = config_from_dict(values | {"checkpoints": [{"name": name, "checkpoint": str(objects.resolve()),
                                                        "task": example.task}],
                                     "batch_sizes": [example.batch_size]}, "race")
    answer = Answer(cfg, folder)
    write_parameters(answer)
    print(f"race {name}: {', '.join(cfg.configurations)}; budget {cfg.budget_min:g} min -> {folder}", flush=True)
    started = time.perf_counter()
    interrupted = measure(cfg, answer.results_path, progress)
    return Answer(cfg, folder, interrupted, time.perf_counter() - started)


def race_values(name: str, budget_min, configurations, device, settings: dict) -> dict:
    """The race's parameters (config_from_dict's mapping) but its model's source and batch."""
    own = sorted(set(settings) & set(OWN_KEYS))
    if own:
        raise ConfigError(f"{own[0]}: set by the race itself (the model and example inputs given); allowed: the "
                          "other parameters of BenchConfig")
    if configurations is None:
        configurations = default_configurations(_resolved(device))
    if isinstance(configurations, str):
        configurations = [configurations]
    return {"label": name, "models": [name], "batch_sizes": [1], "configurations": list(configurations),
            "device": device, "budget_min": budget_min} | RACE_DEFAULTS | settings


def _resolved(device) -> str:
    """`device` as the measuring processes will resolve it; ConfigError when it is not one."""
    from ..measure.environment import resolve_device

    if device not in ("auto", "cpu", "cuda"):
        raise ConfigError(f"device: {device!r} is not allowed; allowed: auto, cpu, cuda")
    try:
        return resolve_device(device)
    except (RuntimeError, ValueError) as err:
        raise ConfigError(f"device: {err}") from None


def default_configurations(device: str) -> tuple[str, ...]:
    """What a race races by default: eager and plain torch.compile, with freezing on a CPU (the CPU report's
    contenders but its slow-to-compile max-autotune), CUDA graphs on a GPU, and bfloat16 autocast (eager and
    compiled) only where the device computes in it natively (measure/settings.native_precision)."""
    from ..measure.settings import native_precision

    compiled = ("default", "default+freezing") if device == "cpu" else ("default", "reduce-overhead")
    bf16 = () if native_precision("bfloat16", device) else ("eager+bf16-autocast", "default+bf16-autocast")
    return ("eager", *compiled, *bf16)


def race_folder(folder) -> Path:
    """The race's folder: `folder` (made if needed), or a new temporary one."""
    if folder is None:
        return Path(tempfile.mkdtemp(prefix="race-"))
    path = Path(folder).expanduser()
    if path.exists() and not path.is_dir():
        raise ConfigError(f"folder: {str(path)!r} is a file; allowed: a folder (new, or one a race wrote)")
    path.mkdir(parents=True, exist_ok=True)
    return path


def place_object(objects: Path, model, example_inputs, example: Example) -> Path:
    """The object folder of this race: written, or kept where it holds this very object (the race resumes);
    another object under the same name is refused."""
    from ..measure.objects import write

    if is_object_folder(objects):
        if read_manifest(objects)["digest"] == example.digest:
            return objects
        raise ConfigError(f"folder: {objects.parent.parent} holds a race of another {objects.name!r} (its class, "
                          "weights or inputs differ); allowed: another folder or name, or this model as it was")
    write(objects, example.model_bytes, example_inputs, example.task, example.class_name, example.digest)
    return objects


def measure(cfg: BenchConfig, results_path: Path, progress: bool) -> bool:
    """The race's sweep (sweep/loop.py); True when the kernel's stop button ended it (every measuring
    process is ended by the loop's own Ctrl-C path, a second stop ignored meanwhile; the rows written
    stay)."""
    from ..results.writer import NotAResultsFileError, ResultsLockedError
    from ..sweep.jobs import SettingsMismatchError
    from ..sweep.loop import run_sweep

    with one_interrupt(), _inductor_cache():
        try:
            summary = run_sweep(cfg, results_path, progress=progress)
        except KeyboardInterrupt:
            print(f"interrupted: the measuring processes are ended; the rounds measured are kept in {results_path} "
                  "(the same race with this folder resumes it)", file=sys.stderr, flush=True)
            return True
        except (ResultsLockedError, NotAResultsFileError, SettingsMismatchError) as err:
            raise ConfigError(str(err)) from None
    if progress:
        print(summary.line(), flush=True)
    return False


@contextlib.contextmanager
def _inductor_cache():
    """The compiler cache the command line uses (paths.default_inductor_cache_dir) while the race runs,
    unless the kernel names one; the kernel's environment as it was after."""
    before = os.environ.get(INDUCTOR_CACHE_ENV)
    default_inductor_cache_dir()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(INDUCTOR_CACHE_ENV, None)
