"""The code that applies a configuration in a user's own program: the lines a page shows beside its
answer, made from the same declarations the measuring process applies (config/configurations.py: a
mode's torch.compile call or the file it builds, its modifiers' Inductor settings, autocast, memory
format, regions and cache artifacts; measure/settings.py, deploy.py, regions.py and startup.py apply
them), so the code shown and the code measured cannot drift. `model` and `inputs` (a dict of keyword
inputs, as the model is called) are the user's. No torch.
"""

from __future__ import annotations

from ..config.configurations import Configuration, configuration

# how a form built ahead of time is built (under no_grad: a build traces outside inference mode, and
# Inductor freezes only where gradients are off) and loaded (measure/deploy.py does the same), with
# `{inductor}` its Inductor settings (aoti_compile_and_package's inductor_configs)
PACKAGE_LINES = {
    "aot-inductor": [
        "with torch.no_grad():",
        "    exported = torch.export.export(model, args=(), kwargs=inputs)",
        '    path = torch._inductor.aoti_compile_and_package(exported, package_path="model.pt2", '
        "inductor_configs={inductor})",
        "model = torch._inductor.aoti_load_package(path)  # in each serving process: no model code",
    ],
    "precompile": [
        "names = list(inputs)",
        "",
        "def call(model, *values):",
        "    return model(**dict(zip(names, values)))",
        "",
        "with torch.no_grad():",
        "    python_code, cache = torch.compiler.precompile(call, model, *inputs.values())",
        "# in each serving process, after building the model (the artifact holds no weights):",
        "loaded = torch.compiler.precompile.load(python_code, cache)",
    ],
    "onnxruntime": [
        "import onnxruntime",
        "",
        "with torch.no_grad():",
        '    torch.onnx.export(model, (), "model.onnx", kwargs=inputs, dynamo=True, external_data=False)',
        'session = onnxruntime.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])  '
        "# in each serving process",
        "outputs = session.run(None, {name: value.numpy() for name, value in inputs.items()})",
    ],
}
PACKAGE_CALLS = {"aot-inductor": "    outputs = model(**inputs)",
                 "precompile": "    outputs = loaded(model, *inputs.values())"}
# regional compilation (measure/regions.py): each block of the model's stacks of identical layers
# compiled in place, the rest eager; where a row names the stacks (regions_at, e.g. "16 x
# ResNetBottleNeckLayer at resnet.encoder.stages.*.layers"), the loops over them
REGIONAL_ANY = ["for block in blocks:  # each layer of the model's stack of identical layers, e.g. model.vit.encoder.layer"]
# portable cache artifacts (measure/cell.py saves them, measure/startup.py loads them)
ARTIFACT_LINES = ["data, info = torch.compiler.save_cache_artifacts()  # after the first compiled call",
                  "# in each new process, before its first compiled call:",
                  "torch.compiler.load_cache_artifacts(data)"]


def code_lines(name: str, device: str = "cpu", regions_at: str = "") -> list[str]:
    """The lines that apply configuration `name` on `device` ("cpu" or "cuda"), ending with the call
    (and, for cache artifacts, what the building process saves and a new one loads); `regions_at`, a
    row's stacks of identical layers, where the configuration compiles them one by one."""
    config = configuration(name)
    lines = ["import torch", ""]
    settings = config.inductor_settings
    if settings and not config.packaged:
        lines += [f"torch._inductor.config.{key} = {value!r}  # before compiling: dynamo reads it while tracing"
                  for key, value in settings.items()]
    lines.append("model = model.eval()")
    if config.channels_last:
        lines += ["model = model.to(memory_format=torch.channels_last)",
                  "inputs = {name: value.contiguous(memory_format=torch.channels_last) "
                  "if value.dim() == 4 and value.is_floating_point() else value for name, value in inputs.items()}"]
    if config.packaged:
        return lines + _package_lines(config)
    if config.regions:
        lines += _regional_lines(config.mode, regions_at)
    elif config.compiled:
        lines.append(f'model = torch.compile(model, mode="{config.mode}")')
    lines += _call_lines(config, device)
    return lines + (ARTIFACT_LINES if config.artifacts else [])


def _regional_lines(mode: str, regions_at: str) -> list[str]:
    """Loops compiling each block in place: over the stacks `regions_at` names, else over `blocks`."""
    paths = [path for part in regions_at.split("; ") if " at " in part for path in part.split(" at ", 1)[1].split(", ")]
    if not paths:
        return [*REGIONAL_ANY, f'    block.compile(mode="{mode}")']
    lines = []
    for path in paths:  # "resnet.encoder.stages.*.layers": a loop per "*", then the blocks
        *outer, last = path.split(".*.")
        holder, indent = "model", ""
        for depth, stretch in enumerate(outer):
            lines.append(f"{indent}for stage{depth} in {holder}.{stretch}:")
            holder, indent = f"stage{depth}", indent + "    "
        lines += [f"{indent}for block in {holder}.{last}:", f'{indent}    block.compile(mode="{mode}")']
    return lines


def _package_lines(config: Configuration) -> list[str]:
    """A form built ahead of time: build it once, load it in each serving process; then a call."""
    built = [line.replace("{inductor}", repr(config.inductor_settings)) for line in PACKAGE_LINES[config.form]]
    if config.form == "onnxruntime":
        return built
    return built + ["with torch.inference_mode():", PACKAGE_CALLS[config.form]]


def _call_lines(config: Configuration, device: str) -> list[str]:
    """Every call under inference mode, and the configuration's autocast (the first call compiles)."""
    contexts = ["torch.inference_mode()"]
    if config.autocast:
        contexts.append(f'torch.autocast("{device}", dtype=torch.{config.autocast})')
    return [f"with {', '.join(contexts)}:", "    outputs = model(**inputs)"]


def code_text(name: str, device: str = "cpu", regions_at: str = "") -> str:
    return "\n".join(code_lines(name, device, regions_at))
