"""Configurations: what a cell measures against eager float32, declared once. A configuration is a
compile mode (config/modes.py: "eager" for no compile) and its modifiers, written mode+modifier+...:
"default", "default+freezing", "max-autotune-no-cudagraphs+freezing", "eager+bf16-autocast",
"default+bf16-autocast+freezing", "reduce-overhead+fp16-autocast", "default+channels-last". A profile
lists the configurations it races (`configurations`); every one is measured against the same eager
float32 baseline ("eager") in the same rounds. No torch.

A modifier declares where it applies (devices; a capability the worker checks on the machine: native
bfloat16, float16, a convolutional model), what it changes (Inductor options, an autocast dtype, the
memory format), what it costs to compile (a factor over its mode's constants, for `plan`) and how its
output is checked against eager float32 (element-wise for float32, the task's answer for a lower
precision: measure/accuracy.py). Where it does not apply, the cell becomes a row saying so.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from .modes import MODE_BY_NAME, MODES

BASELINE = "eager"  # eager float32: every speedup is against it
PACKAGE_WORDS = {"aot-inductor": "an AOTInductor package", "onnxruntime": "ONNX Runtime",  # a page's name of a
                 "precompile": "torch.compiler.precompile"}  # form compiled ahead of time
SEPARATOR = "+"
# Task agreement with eager float32 (top-1 share, mask IoU, box match: measure/accuracy.task_agreement)
# a lower-precision configuration must keep: its numbers change by rounding, its answer must not.
TASK_AGREEMENT_MIN = 0.9


@dataclass(frozen=True)
class Modifier:
    name: str
    words: str  # how a page says it, after the mode: "with freezing"
    devices: tuple[str, ...] = ("cpu", "cuda")
    needs: str = ""  # a capability the worker checks: "bf16", "fp16" (native on this device), "conv"
    compiled_only: bool = False  # an Inductor option: needs a compile mode
    # torch._inductor.config entries, set in the measuring process before it compiles and kept while it
    # runs (measure/settings.py): dynamo reads some of them while tracing, before torch.compile(options=...)
    # would apply them (freezing: whether parameters become constants, torch/_dynamo/utils.py,
    # is_parameter_freezing), so they are never passed as compile options
    inductor: tuple[tuple[str, object], ...] = ()
    autocast: str = ""  # torch.autocast(dtype) around the float32 model
    channels_last: bool = False  # model and 4-D inputs in channels_last memory format
    compile_cost: float = 1.0  # planning: compile time as a multiple of the mode's
    # torch.compile of each repeated block (measure/regions.py) instead of the whole model: the blocks
    # of one structure share one compiled graph, the rest of the model runs eagerly
    regions: bool = False
    # a way to ship torch.compile's work to a new process ("cache-artifacts": the building process's
    # portable cache artifacts, loaded into an empty compiler cache before the first call): its form
    form: str = ""
    # planning: a new process's compile against a cold one where it starts with an empty compiler cache
    # (cache artifacts: a CPU builds the kernels' C++ again); None: from its own cache, a warm compile
    start_share: float | None = None


MODIFIERS = (
    # constant folding and weight pre-packing of inference graphs; PyTorch's advice for CPU inference,
    # and what lets max-autotune use its C++ GEMM templates (utils.use_cpp_gemm_template wants constant
    # weights). Folding costs compile time.
    Modifier("freezing", "with freezing", compiled_only=True, inductor=(("freezing", True),), compile_cost=1.2),
    Modifier("bf16-autocast", "in bfloat16 autocast", needs="bf16", autocast="bfloat16"),
    Modifier("fp16-autocast", "in float16 autocast", needs="fp16", autocast="float16"),
    Modifier("channels-last", "in channels_last layout", needs="conv", channels_last=True),
    # PyTorch's regional-compilation recipe: each block of a stack of identical layers compiled, one graph
    # for the blocks alike, the rest eager (needs="blocks": a model without such a stack is a row saying
    # so). Its compile cost for `plan`, against the whole model's cold compile: ViT-B/16's 0.44 (12 blocks,
    # one structure), DeepLabV3's 0.87, ResNet-50's 1.01 (16 blocks, 8 structures: a graph per stage and
    # shape) (benchmarks/README.md#zen3-startup)
    Modifier("regional", "block by block (regional)", needs="blocks", compiled_only=True, regions=True,
             compile_cost=0.8),
    Modifier("artifacts", "shipped as portable cache artifacts", compiled_only=True, form="cache-artifacts",
             start_share=0.5),
    # changes nothing: "eager+twin" is eager float32 again, in processes of its own, raced against eager as
    # any configuration is (an A/A check: its speedup must read 1x inside its interval; benchmarks/aa_check.py)
    Modifier("twin", "again, as a twin of itself (an A/A check)"),
)
MODIFIER_BY_NAME = {modifier.name: modifier for modifier in MODIFIERS}
# A pure compile mode is a configuration; so is each mode with modifiers, in this order when written.
ALLOWED_TEXT = (f"a mode ({', '.join(MODES)}) followed by any of "
                f"{', '.join(SEPARATOR + m.name for m in MODIFIERS)} (at most one autocast)")


@dataclass(frozen=True)
class Configuration:
    name: str
    mode: str  # "eager" or a torch.compile mode
    modifiers: tuple[Modifier, ...] = ()

    @property
    def compiled(self) -> bool:
        return self.mode != BASELINE

    @property
    def form(self) -> str:
        """How it ships the model: "torch.compile" in the process, its cache artifacts
        ("cache-artifacts"), or a file built ahead of time (modes.py)."""
        return next((m.form for m in self.modifiers if m.form), MODE_BY_NAME[self.mode].form)

    @property
    def regions(self) -> bool:
        """Does it compile each repeated block, not the whole model (the regional modifier)?"""
        return any(m.regions for m in self.modifiers)

    @property
    def artifacts(self) -> bool:
        """Does a new process start from the building process's portable cache artifacts?"""
        return self.form == "cache-artifacts"

    @property
    def needs_model(self) -> bool:
        """Does a serving process build the model (its code and weights) before its first answer?"""
        return MODE_BY_NAME[self.mode].needs_model

    @property
    def start_share(self) -> float | None:
        """Planning: a new process's compile against a cold one where it starts with an empty compiler
        cache (cache artifacts, precompile on a CPU), else None (a warm compile, or a package's load)."""
        shares = [m.start_share for m in self.modifiers if m.start_share is not None]
        return shares[0] if shares else (0.5 if self.mode == "precompile" else None)

    @property
    def packaged(self) -> bool:
        """Compiled ahead of time into a file (modes.py: `form`), not by torch.compile in the process."""
        return MODE_BY_NAME[self.mode].packaged

    @property
    def baseline(self) -> bool:
        return self.name == BASELINE

    @property
    def autocast(self) -> str:
        """The autocast dtype ("" for none)."""
        return next((m.autocast for m in self.modifiers if m.autocast), "")

    @property
    def precision(self) -> str:
        """The dtype its arithmetic runs in: float32, or the autocast dtype."""
        return self.autocast or "float32"

    @property
    def channels_last(self) -> bool:
        return any(m.channels_last for m in self.modifiers)

    @property
    def eager_beside(self) -> bool:
        """Can its worker time eager float32 on its own model object between its blocks (eager_in_process)?
        Not eager itself, nor a form that runs from a file built ahead of time or a model whose layout it
        changed; under autocast, eager's calls turn autocast off."""
        return not self.baseline and not self.packaged and not self.channels_last and not self.regions

    @property
    def elaborate(self) -> int:
        """How far it is from plain torch.compile: its modifiers, and a mode other than default (the fit's
        order: among configurations no race has ranked, the most elaborate leaves a budget first)."""
        return len(self.modifiers) + (self.mode not in ("default", BASELINE))

    @property
    def needs(self) -> tuple[str, ...]:
        return tuple(m.needs for m in self.modifiers if m.needs)

    @property
    def devices(self) -> tuple[str, ...]:
        """Where it can run: its mode's devices and every modifier's."""
        mode = MODE_BY_NAME[self.mode]
        devices = set(("cuda",) if mode.cudagraphs else mode.devices)
        for modifier in self.modifiers:
            devices &= set(modifier.devices)
        return tuple(sorted(devices))

    @property
    def inductor_settings(self) -> dict:
        """The torch._inductor.config entries its modifiers set (freezing: {"freezing": True}), applied
        globally in the measuring process around its compile and its calls (measure/settings.py)."""
        return dict(option for m in self.modifiers for option in m.inductor)

    def compile_options(self) -> dict:
        """torch.compile's keywords: the mode alone (the modifiers' Inductor settings are global:
        `inductor_settings`); a package's aoti_compile_and_package(inductor_configs=...), which applies
        them before it traces."""
        if self.packaged:
            return {"inductor_configs": self.inductor_settings}
        return {"mode": self.mode}

    @property
    def compile_cost(self) -> float:
        """Planning: compile time as a multiple of its mode's constants."""
        return math.prod((m.compile_cost for m in self.modifiers), start=1.0)

    @property
    def words(self) -> str:
        """As a page names it: "compile (default mode) with freezing", "eager in bfloat16 autocast"."""
        head = ("eager" if not self.compiled else PACKAGE_WORDS[self.mode] if self.packaged
                else f"compile ({self.mode} mode)")
        return " ".join([head, *(m.words for m in self.modifiers)])


@functools.cache
def configuration(name: str) -> Configuration:
    """The configuration a name spells; ValueError naming what is allowed otherwise."""
    if not isinstance(name, str):
        raise ValueError(f"{name!r} is not a configuration; allowed: {ALLOWED_TEXT}")
    mode, *names = name.split(SEPARATOR)
    if mode not in MODES:
        raise ValueError(f"{name!r}: {mode!r} is not a mode; allowed: {ALLOWED_TEXT}")
    unknown = [n for n in names if n not in MODIFIER_BY_NAME]
    if unknown:
        raise ValueError(f"{name!r}: {unknown[0]!r} is not a modifier; allowed: {ALLOWED_TEXT}")
    modifiers = tuple(MODIFIER_BY_NAME[n] for n in names)
    if len(set(names)) != len(names) or [m for m in MODIFIERS if m in modifiers] != list(modifiers):
        order = SEPARATOR.join(m.name for m in MODIFIERS)
        raise ValueError(f"{name!r}: each modifier once, in the order {order}")
    if sum(bool(m.autocast) for m in modifiers) > 1:
        raise ValueError(f"{name!r}: one autocast dtype at most")
    if MODE_BY_NAME[mode].packaged and not all(m.compiled_only for m in modifiers):
        raise ValueError(f"{name!r}: {mode} takes Inductor options only (freezing): the package is exported "
                         "in float32 and the default layout")
    if not MODE_BY_NAME[mode].inductor_options and modifiers:
        raise ValueError(f"{name!r}: {mode} takes no modifier: {MODE_BY_NAME[mode].fixed}")
    if MODE_BY_NAME[mode].packaged and any(m.regions or m.form for m in modifiers):
        raise ValueError(f"{name!r}: {next(m.name for m in modifiers if m.regions or m.form)} applies to "
                         "torch.compile's modes only")
    if mode == BASELINE and any(m.compiled_only for m in modifiers):
        raise ValueError(f"{name!r}: {next(m.name for m in modifiers if m.compiled_only)} needs a compile mode")
    return Configuration(name, mode, modifiers)


def is_configuration(name) -> bool:
    try:
        configuration(name)
    except ValueError:
        return False
    return True
