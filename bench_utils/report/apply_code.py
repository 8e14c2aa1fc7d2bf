"""The code that applies a configuration in a user's own program: the lines a page shows beside its
answer, made from the same declarations the measuring process applies (config/configurations.py: a
mode's torch.compile call or the file it builds, its modifiers' Inductor settings, autocast and memory
format; measure/settings.py applies them), so the code shown and the code measured cannot drift.
`model` and `inputs` (a dict of keyword inputs, as the model is called) are the user's. No torch.
"""

from __future__ import annotations

from ..config.configurations import Configuration, configuration

# how a form built ahead of time is built and loaded (measure/deploy.py does the same), with `{inductor}`
# its Inductor settings (aoti_compile_and_package's inductor_configs)
PACKAGE_LINES = {
    "aot-inductor": [
        "exported = torch.export.export(model, args=(), kwargs=inputs)",
        'path = torch._inductor.aoti_compile_and_package(exported, package_path="model.pt2", '
        "inductor_configs={inductor})",
        "model = torch._inductor.aoti_load_package(path)  # in each serving process",
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


def code_lines(name: str, device: str = "cpu") -> list[str]:
    """The lines that apply configuration `name` on `device` ("cpu" or "cuda"), ending with the call."""
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
    if config.compiled:
        lines.append(f'model = torch.compile(model, mode="{config.mode}")')
    return lines + _call_lines(config, device)


def _package_lines(config: Configuration) -> list[str]:
    """A form built ahead of time: build it once, load it in each serving process; then a call."""
    built = [line.replace("{inductor}", repr(config.inductor_settings)) for line in PACKAGE_LINES[config.form]]
    if config.form == "onnxruntime":
        return built
    return built + ["with torch.inference_mode():", "    outputs = model(**inputs)"]


def _call_lines(config: Configuration, device: str) -> list[str]:
    """Every call under inference mode, and the configuration's autocast (the first call compiles)."""
    contexts = ["torch.inference_mode()"]
    if config.autocast:
        contexts.append(f'torch.autocast("{device}", dtype=torch.{config.autocast})')
    return [f"with {', '.join(contexts)}:", "    outputs = model(**inputs)"]


def code_text(name: str, device: str = "cpu") -> str:
    return "\n".join(code_lines(name, device))
