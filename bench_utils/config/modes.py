"""The mode table: eager, each torch.compile mode and each form compiled ahead of time, with everything
the project needs to know about it in one row (whether it records CUDA graphs, its extra warm-up, what
compiling costs). A configuration (configurations.py) is a mode and its modifiers.
No torch.

A form compiled ahead of time (`form` other than torch.compile) builds a file once, offline, and a
serving process starts from it: `aot-inductor` is torch.export and AOTInductor's package
(torch._inductor.aoti_compile_and_package, loaded with aoti_load_package): Inductor's code without a
compile in the serving process. `onnxruntime` is torch.onnx.export (the dynamo exporter) and an ONNX
Runtime InferenceSession on the CPU execution provider, graph optimizations at their default level
(`pip install -e '.[deploy]'`). `precompile` is torch.compiler.precompile (a trace of the call lowered by
Inductor into Python source and a kernel cache, weights left out): a serving process builds the model,
loads the two and calls them with it. Each cold "compile" is the export and the file's build; its warm
one is a new process loading the file and answering once (measure/deploy.py, measure/startup.py).

The code that applies each row in a user's program is report/apply_code.py's, made from these rows.

Compile costs are planning constants (`plan` reads them), seconds for ResNet-50 at full size on a GPU
(sweep/compile_estimate.py scales them per model; a tiny model takes as long: sweep/plan.py,
TINY_SHARE). Measured on the first GPU run (an H200 with a 16-core host, torch 2.11:
benchmarks/README.md#gpu-h200-probe), except max-autotune at full size:
- cold (empty compiler cache): ResNet-50 compiled in 15.3 s and 13.1 s (default, batch 1 and 16) and
  14.4 s and 14.5 s (reduce-overhead); ViT-B/16 in 12-17 s. Public figures agree on the order: 28 s
  (pytorch/benchmark#1547). A host with fewer or slower cores compiles slower (`plan`'s range is
  half to twice the point). max-autotune adds its kernel benchmarking: 14 s on a tiny ViT here (26.5 s
  against default's 12.5 s), +419 s for a video model in FastVideo#1445 (hao-ai-lab/FastVideo); the
  full-size figure stays the public one until a GPU run measures it.
- warm (the FX-graph cache hits: a later process of the cell): dynamo still traces and Inductor loads
  the cached code and kernels: 3.3-4.9 s for ResNet-50 and ViT-B/16 in default and reduce-overhead.
  max-autotune benchmarks again: 12.5 s warm for the tiny ViT, a floor for a full-size model.
- CUDA graphs cost a mode nothing here: the graphs and kernels compiled are the same (the torch
  2.14 sources: triton.cudagraphs only changes the wrapper put around the compiled graph after it is
  compiled or loaded, output_code.cudagraph_post_compile), and CUDA-graph trees record on a later call
  than the first (the first runs in warm-up mode), which is warm-up, not compile_s. So
  reduce-overhead costs what default does (as measured), max-autotune what max-autotune-no-cudagraphs
  does.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    name: str  # "eager", or torch.compile(mode=name)
    cudagraphs: bool  # on CUDA it records CUDA graphs ("max-autotune-no-cudagraphs" separates autotuning from them)
    # untimed calls right after compiling, before the steady-state warm-up: CUDA-graph trees record on
    # the first calls, max-autotune benchmarks kernels on first use (calls, not seconds)
    extra_warmup_calls: int
    cold_compile_s: float  # planning: a compile with an empty compiler cache (see the module docstring)
    warm_compile_s: float  # planning: a compile whose FX graphs the on-disk cache holds (a package: its load)
    form: str = "torch.compile"  # or a form compiled ahead of time into a file: "aot-inductor", "onnxruntime"
    inductor_options: bool = True  # takes Inductor's options (the freezing modifier): not ONNX Runtime
    devices: tuple[str, ...] = ("cpu", "cuda")
    # a serving process builds the model (its Python code and weights) before its first answer: eager,
    # torch.compile and precompile (whose artifact holds no weights); a package holds its weights
    needs_model: bool = True
    inductor: bool = True  # its code is Inductor's (plan: a CPU builds it as long as default's compile): not ONNX Runtime
    fixed: str = ""  # why it takes no modifier ("" where it takes the ones inductor_options allows)

    @property
    def packaged(self) -> bool:
        """Compiled ahead of time into a file a serving process loads (not compiled in that process)."""
        return self.form != COMPILE_FORM


COMPILE_FORM = "torch.compile"


MODE_TABLE = (
    Mode("eager", cudagraphs=False, extra_warmup_calls=0, cold_compile_s=0.0, warm_compile_s=0.0),
    Mode("default", cudagraphs=False, extra_warmup_calls=1, cold_compile_s=15.0, warm_compile_s=4.5),
    Mode("reduce-overhead", cudagraphs=True, extra_warmup_calls=3,  # on CPU: no CUDA graphs to use
         cold_compile_s=15.0, warm_compile_s=4.5),
    Mode("max-autotune", cudagraphs=True, extra_warmup_calls=3, cold_compile_s=434.0,  # default's 15 s + FastVideo's
         warm_compile_s=15.0),  # 419 s of autotuning
    Mode("max-autotune-no-cudagraphs", cudagraphs=False, extra_warmup_calls=1, cold_compile_s=434.0,
         warm_compile_s=15.0),
    # export and package as default's compile until a GPU run measures it; a new process loads the package
    # and answers in about half a second for a full-size ResNet-50 on a 2-core CPU
    # (benchmarks/README.md#serving-forms-first)
    Mode("aot-inductor", cudagraphs=False, extra_warmup_calls=1, cold_compile_s=15.0, warm_compile_s=0.6,
         form="aot-inductor", needs_model=False),
    # the export and an ONNX file: about 6 s for a full-size ResNet-50 on a 2-core CPU, a new process's
    # session and first answer under a second (benchmarks/README.md#serving-forms-first); the CPU
    # execution provider only so far
    Mode("onnxruntime", cudagraphs=False, extra_warmup_calls=1, cold_compile_s=6.0, warm_compile_s=0.8,
         form="onnxruntime", inductor_options=False, inductor=False, devices=("cpu",), needs_model=False,
         fixed="it is exported in float32 and the default layout and runs outside Inductor"),
    # a trace lowered as default's compile is; a new process with an empty compiler cache builds the CPU
    # kernels' C++ again (the cache it ships holds Inductor's graphs, not compiled C++): about half a cold
    # compile on a CPU (planning: sweep/plan.py, START_SHARE)
    Mode("precompile", cudagraphs=False, extra_warmup_calls=1, cold_compile_s=15.0, warm_compile_s=4.5,
         form="precompile", inductor_options=False,
         fixed="its trace takes the weights as inputs (nothing to freeze) in float32 and the default layout"),
)
MODE_BY_NAME = {mode.name: mode for mode in MODE_TABLE}
MODES = tuple(mode.name for mode in MODE_TABLE)  # a configuration's first part, in report order
CUDAGRAPH_MODES = tuple(mode.name for mode in MODE_TABLE if mode.cudagraphs)
COMPILE_MODES = tuple(mode.name for mode in MODE_TABLE if mode.form == COMPILE_FORM and mode.name != "eager")
EXTRA_WARMUP_CALLS = {mode.name: mode.extra_warmup_calls for mode in MODE_TABLE}
