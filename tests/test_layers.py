"""Imports go one way: config < (paths, messages, files, stops) < results < measure < sweep < report < (studies,
selfcheck, pipeline) < __main__, and no module imports itself back through others. Read from the source (ast),
every import counted, those inside functions too: an import on use is still a dependency. The studies
are plug-ins: the core reaches them by name through results/studies.REGISTRY, never by an import."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "bench_utils"
# The rank of each room. paths, messages, files and stops are helpers every layer above config may use (paths raises
# config's ConfigError); a study (studies/) declares its measurement and its page section, so it sits
# above report; selfcheck, pipeline and explore (bench_utils.race) drive sweeps and reports, and __main__, the
# command line, calls them.
LAYERS = {"config": 0, "paths": 1, "messages": 1, "files": 1, "stops": 1, "results": 2, "measure": 3, "sweep": 4, "report": 5,
          "studies": 6, "selfcheck": 6, "pipeline": 6, "explore": 6, "__main__": 7, "__init__": 7}


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
            # `from ..measure import injected_failures` names a module; `from .rows import BenchResult` a member
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
    assert "bench_utils.measure.injected_failures" in GRAPH["bench_utils.measure.cell"]  # from . import injected_failures
    assert "bench_utils.sweep.loop" in GRAPH["bench_utils.__main__"]  # imported inside a function


def test_the_core_never_imports_a_study():
    core = [m for m in GRAPH if not m.startswith("bench_utils.studies")]
    assert not [m for m in core if any(dep.startswith("bench_utils.studies") for dep in GRAPH[m])]


def _torch_imports(module: str) -> set[str]:
    """Where `module` imports torch (or a torch submodule): "<module>" for the module's own level, else
    the function or method holding the import."""
    path = PACKAGE.parent / Path(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    found = set()

    def visit(node, where):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else where
            names = ([alias.name for alias in child.names] if isinstance(child, ast.Import) else
                     [child.module or ""] if isinstance(child, ast.ImportFrom) and not child.level else [])
            if any(name == "torch" or name.startswith("torch.") for name in names):
                found.add(where)
            visit(child, inner)

    visit(ast.parse(path.read_text()), "<module>")
    return found


def _reached(module: str) -> set[str]:
    """Every bench_utils module `module` imports, directly or through others (imports inside functions too)."""
    seen, todo = set(), [module]
    while todo:
        for dep in GRAPH[todo.pop()] - seen:
            seen.add(dep)
            todo.append(dep)
    return seen


# The one torch import below results/ that pages may reach: torch.compile's keywords, which only a
# measuring process asks for (measure/, studies/); test_pages_never_ask_for_compile_options holds that.
ALLOWED_TORCH = {("bench_utils.config.configurations", "compile_options")}
WORDS_AND_NUMBERS = ("bench_utils.report", "bench_utils.results")


def test_nothing_under_report_or_results_imports_torch():
    pages = [m for m in GRAPH if m.startswith(WORDS_AND_NUMBERS)]
    assert len(pages) > 25
    reaching = sorted(f"{m} reaches torch in {dep}.{where}" for m in pages for dep in _reached(m) | {m}
                      for where in _torch_imports(dep) if (dep, where) not in ALLOWED_TORCH)
    assert reaching == []
    assert not [m for m in pages if _reached(m) & {d for d in GRAPH if d.startswith(("bench_utils.measure",
                                                                                      "bench_utils.sweep"))}]


def test_pages_never_ask_for_compile_options():
    callers = sorted(str(path.relative_to(PACKAGE)) for folder in ("report", "results")
                     for path in (PACKAGE / folder).rglob("*.py") if ".compile_options(" in path.read_text())
    assert callers == []


def test_the_torch_walker_sees_imports_inside_functions():
    assert "<module>" in _torch_imports("bench_utils.measure.timing")
    assert _torch_imports("bench_utils.pipeline") == {"_cuda_device"}
    assert "bench_utils.measure.environment" in _reached("bench_utils.pipeline")
