"""Imports go one way: config < (paths, messages, files, stops) < results < measure < sweep < report < (studies,
selfcheck, __main__), and no module imports itself back through others. Read from the source (ast),
every import counted, those inside functions too: an import on use is still a dependency. The studies
are plug-ins: the core reaches them by name through results/studies.REGISTRY, never by an import."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "bench_utils"
# The rank of each room. paths, messages, files and stops are helpers every layer above config may use (paths raises
# config's ConfigError); a study (studies/) declares its measurement and its page section, so it sits
# above report; selfcheck, __main__ and explore (bench_utils.race) are entry points that drive sweeps and reports.
LAYERS = {"config": 0, "paths": 1, "messages": 1, "files": 1, "stops": 1, "results": 2, "measure": 3, "sweep": 4, "report": 5,
          "studies": 6, "selfcheck": 6, "__main__": 6, "__init__": 6, "explore": 6}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p) for p in PACKAGE.rglob("*.py")}


def imports(path: Path) -> set[str]:
    """The bench_utils modules a file imports, absolute names."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            # `from ..measure import faults` names a module; `from .rows import BenchResult` a member
            found |= {f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target
                      for alias in node.names}
    return {m for m in found if m in MODULES} - {name}


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS["__init__"] if len(parts) == 1 else LAYERS[parts[1]]


GRAPH = {module_name(p): imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_module_has_a_layer():
    assert all(layer(m) >= 0 for m in GRAPH)
    assert len(GRAPH) > 40 and "bench_utils.config.bench_config" in GRAPH["bench_utils.config.parameters_file"]


def test_no_upward_import():
    upward = sorted(f"{m} imports {dep}" for m, deps in GRAPH.items() for dep in deps if layer(dep) > layer(m))
    assert upward == []


def test_no_import_cycle():
    state = {}  # module -> "open" while on the current path, "done" after

    def visit(module, path):
        state[module] = "open"
        for dep in sorted(GRAPH.get(module, ())):
            if state.get(dep) == "open":
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(dep):] + [dep]))
            if dep not in state:
                visit(dep, path + [dep])
        state[module] = "done"

    for module in GRAPH:
        if module not in state:
            visit(module, [module])


def test_the_walker_sees_relative_and_lazy_imports():
    assert "bench_utils.config.validation" in GRAPH["bench_utils.config.bench_config"]
    assert "bench_utils.measure.faults" in GRAPH["bench_utils.measure.cell"]  # from . import faults
    assert "bench_utils.sweep.loop" in GRAPH["bench_utils.__main__"]  # imported inside a function


def test_the_core_never_imports_a_study():
    core = [m for m in GRAPH if not m.startswith("bench_utils.studies")]
    assert not [m for m in core if any(dep.startswith("bench_utils.studies") for dep in GRAPH[m])]
