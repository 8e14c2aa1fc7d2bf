"""What a GPU is to the benchmark: which shipped profile fits it (`report` without profiles), the label
its report gets, and how many cell groups' workers it holds at once (`live_groups`). Pure rules on the
facts torch reports (name, memory, compute capability: measure/environment.py, gpu_facts). No torch.

A GPU with a profile of its own (A100, V100, T4, H100) gets it. Any other, and every MIG slice (its
name says "MIG"; its memory is the slice's, not the card's), gets the profile of its class, by
memory and architecture, under its own name: a report labelled "H100" must not hold an H200's numbers.
`gpu.yaml` (every mode, max-autotune's hours of cold compiles) is never chosen for you.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from .bench_config import BenchConfig

OWN_PROFILES = {"A100": "a100", "V100": "v100", "T4": "t4", "H100": "h100"}  # name word -> parameters/<stem>.yaml
SMALL_GB = 20.0  # below (GiB): a T4-class card or a MIG slice: the T4 profile, eager against default
LARGE_GB = 40.0  # from here, on Hopper and later (compute capability 9.0+): the H100 profile, reduce-overhead too
GB_PER_LIVE_GROUP = 20.0  # GiB of GPU memory per cell group whose workers stay alive (see live_groups_for)
_VENDOR_WORDS = {"NVIDIA", "TESLA", "GEFORCE", "QUADRO"}
_FORM_WORDS = re.compile(r"^(\d+GB|\d+G|SXM\d*|PCIE|HBM\d*E?|NVL|MAX-Q)$", re.IGNORECASE)


@dataclass(frozen=True)
class GpuChoice:
    profile: str  # the stem of parameters/<profile>.yaml
    label: str | None  # the report's label instead of the profile's own; None: the profile's
    why: str  # one line, for the terminal


def short_name(name: str) -> str:
    """A GPU's name as a label: "NVIDIA H100 80GB HBM3 MIG 1g.10gb" -> "H100 MIG 1g.10gb",
    "NVIDIA A800-SXM4-80GB" -> "A800", "NVIDIA GeForce RTX 4090" -> "RTX 4090"."""
    words = [w for w in re.split(r"[\s-]+", name.strip()) if w]
    kept = [w for w in words if w.upper() not in _VENDOR_WORDS and not _FORM_WORDS.match(w)]
    return " ".join(kept) or name.strip()


def is_mig(name: str) -> bool:
    return "MIG" in re.split(r"[\s-]+", name.upper())


def choose_profile(name: str, memory_gb: float, capability: tuple[int, int]) -> GpuChoice:
    """The shipped profile for a GPU named `name` with `memory_gb` GiB and compute capability
    `capability` (major, minor), with the label its report gets and why."""
    words = {w.upper() for w in re.split(r"[\s-]+", name)}
    own = next((stem for word, stem in OWN_PROFILES.items() if word in words), None)
    if own and not is_mig(name):
        return GpuChoice(own, None, f"{name}: its own profile")
    label = short_name(name)
    size = f"{memory_gb:.0f} GB, compute capability {capability[0]}.{capability[1]}"
    if memory_gb < SMALL_GB:
        return GpuChoice("t4", label, f"{name} ({size}): under {SMALL_GB:.0f} GB, the T4 profile (eager against "
                                      f"default)")
    if capability < (8, 0):
        return GpuChoice("v100", label, f"{name} ({size}): before Ampere, the V100 profile (eager against default)")
    if capability >= (9, 0) and memory_gb >= LARGE_GB:
        return GpuChoice("h100", label, f"{name} ({size}): Hopper or later with {LARGE_GB:.0f} GB or more, the "
                                        "H100 profile (eager, default, reduce-overhead)")
    return GpuChoice("a100", label, f"{name} ({size}): the A100 profile (eager against default)")


def live_groups_for(memory_gb: float) -> int:
    """Cell groups whose workers a GPU of `memory_gb` GiB holds at once. Between its turns a worker
    holds its CUDA context, weights and inputs (about a GiB together) and, in a CUDA-graph mode, its
    graphs' pool, a call's activations, several GiB at batch 16 for the detection and segmentation
    models (a planning figure, not measured here: about 10 GiB a group of three modes); the idle groups
    may take half of the GPU, the other half is the worker whose turn it is. Rounded, as a card's
    nominal size is (an "80GB" card reports 79.2 GiB): 1 group on 16 and 24 GB cards and slices, 2 on
    40 and 48 GB, 4 on 80 GB."""
    return max(1, round(memory_gb / GB_PER_LIVE_GROUP))


def fit_to_gpu(cfg: BenchConfig, memory_gb: float) -> tuple[BenchConfig, str]:
    """`cfg` with `live_groups` at most what a GPU of `memory_gb` GiB holds (a CUDA or auto profile
    only), and a line saying so when it changed ("" otherwise). live_groups is no part of a results
    file's settings: a run may resume with another value."""
    fits = live_groups_for(memory_gb)
    if cfg.device == "cpu" or cfg.live_groups <= fits:
        return cfg, ""
    return (dataclasses.replace(cfg, live_groups=fits),
            f"{cfg.label}: live_groups {cfg.live_groups} -> {fits} on a {memory_gb:.0f} GB GPU (docs/gpu.md)")
