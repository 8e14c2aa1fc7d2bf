"""The compile-time study (`compile_strategies`): one model compiled one way from an empty compiler
cache, its first call timed (compile_s), then its steady-state latency and its agreement with eager.
The strategies (whole, regional, cache-artifacts): docs/method.md. All run under inference_mode at
batch cfg.batch_sizes[0], with the first compiled configuration and cfg.compile_dynamic(); "whole"
saves its artifacts next to the results (artifacts_path) for "cache-artifacts".

Why `block.compile()` and not `torch.compiler.nested_compile_region`: the region marker acts only
inside a whole-model torch.compile (the rest of the model is still traced and compiled, so the cut
is smaller) and it marks a function: here the forward of transformers' block classes, patched for
every instance in the process. Per-block compile is torch's documented recipe for cold-start time
("regional compilation"), needs no patching, and shows the trade-off plainly: dynamo's cache lives on
the code object (nn.Module._call_impl) and parameters are graph inputs (inline_inbuilt_nn_modules,
always on in 2.14), so structurally identical blocks share one compiled graph; the model's other
modules run eagerly, which is the price in speed the study measures. All block graphs share that
one code object's cache, so we pass recompile_limit = the number of blocks (each needs at most one
graph with static shapes; the note says when that raised the limit); hitting it anyway (dynamo then
runs blocks eagerly, silently) is detected and noted.

Caches. The sweep starts this process with TORCHINDUCTOR_CACHE_DIR set to a new empty folder. In
torch 2.14 every local on-disk compiler cache lives under it: Inductor's FX graph cache and its
compiled C++ kernels, AOTAutograd's cache (aotautograd/), Triton's kernels (triton/, unless
TRITON_CACHE_DIR points elsewhere) and dynamo's PGO profiles (dynamo/, only with a job id); remote
caches are off unless configured. In-process state is reset before compiling (dynamo's code caches,
Inductor's loaded kernels, the recorded artifacts) so that a second call in one process (tests)
starts cold too. What the artifacts hold: Inductor's and AOTAutograd's entries (with Triton kernels
on CUDA), not the compiled C++ of CPU kernels, which a fresh process compiles again.

On the page every speedup divides the sweep's eager median of the same model and batch size by the
study's compiled median (one eager number); compile time is compared as compile_total_s = compile_s +
artifact_load_s, what a fresh process waits for its first compiled answer, against "whole".
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ...results.rows import model_fields
from ..base import BaseStudy
from .measure import measure
from .page import SPEED_CAVEAT, compile_cost_chart, compile_cost_frame, compile_cost_table, eager_medians, speed_words
from .rows import STRATEGIES, CompileCostResult


class CompileCost(BaseStudy):
    name = "compile-cost"
    row = CompileCostResult
    file_name = "compile_cost.jsonl"
    option_name, options = "strategy", STRATEGIES
    no_rows = "No compile-time study rows: no verdict."
    verdict_note = SPEED_CAVEAT
    heading = "Cutting compile time: regional compilation and portable caches"

    def jobs(self, cfg) -> list[tuple[str, int, str]]:
        if not cfg.compile_strategies:
            return []
        return [(model, cfg.batch_sizes[0], strategy) for model in cfg.models
                for strategy in ("whole", *cfg.compile_strategies)]

    def identity(self, cfg, model: str, option: str, device: str) -> dict:
        """A row's identity and settings: the profile's first batch size, its first compiled mode."""
        return model_fields(cfg, model, device) | dict(
            batch_size=cfg.batch_sizes[0], configuration=cfg.compiled_configuration().name, strategy=option)

    def work(self, cfg, model: str, option: str, results_path, device: str, fields: dict) -> None:
        """`results_path`: the sweep's results.jsonl (the artifacts sit beside it). A strategy is checked
        here, not before: an unknown one is an error row."""
        self.check_option(option)
        measure(cfg, model, option, Path(results_path), device, fields)

    def frame(self, results_path: Path, cells) -> pd.DataFrame:
        return compile_cost_frame(self.read(results_path), eager_medians(cells))

    def model_verdict(self, cells: pd.DataFrame) -> str:
        """What cuts compile time the most and what it costs in speed (the verdict ends with SPEED_CAVEAT)."""
        from ...report.tables import first_row

        name = cells["task_model"].iloc[0]
        base = first_row(cells, "strategy", "whole")
        if base is None or not math.isfinite(base["compile_total_s"]):
            state = base["status"] if base is not None else "not measured"
            return f"**{name}**: no whole-model compile to compare with ({state})"
        others = cells[(cells["strategy"] != "whole") & np.isfinite(cells["compile_total_s"].to_numpy(float))]
        asides = [f"{r.strategy}: " + (f"not applicable ({r.note.split(':')[0]})" if r.status == "ok" else r.status)
                  for r in cells.itertuples() if r.strategy != "whole" and not math.isfinite(r.compile_total_s)]
        if others.empty or others["compile_total_s"].min() >= base["compile_total_s"]:
            line = (f"**{name}**: nothing cut compile time below whole-model compile ({base['compile_total_s']:.1f} s, "
                    f"{speed_words(base)})")
        else:
            best = others.loc[others["compile_total_s"].idxmin()]
            line = (f"**{name}**: {best.strategy} cuts compile time the most, {base['compile_total_s']:.1f} s → "
                    f"{best.compile_total_s:.1f} s (−{best.compile_saving_pct:.0f}%), at {speed_words(best)} "
                    f"(whole: {speed_words(base)})")
            if best.accuracy_ok is False:
                asides.insert(0, "its output differs from eager beyond tolerance")
        return line + "".join(f"; {aside}" for aside in asides)

    def shown(self, frame: pd.DataFrame):
        yield compile_cost_table(frame)
        yield compile_cost_chart(frame)


STUDY = CompileCost()
