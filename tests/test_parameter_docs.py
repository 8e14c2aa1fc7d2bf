"""The parameter declarations written out: the notebooks' parameters cells and the README's table are
the generated ones, papermill reads every parameter, and validation speaks the declarations' words."""

import pytest

from bench_utils.config import parameter_docs
from bench_utils.config.bench_config import BenchConfig
from bench_utils.config.parameter_docs import NOTEBOOKS, cell_source, parameters_cell, readme_section, readme_table
from bench_utils.config.schema import Parameter, parameters
from bench_utils.config.validation import ConfigError
from conftest import REPO

REGENERATE = "run `python -m bench_utils.config.parameter_docs` to regenerate it from the declarations"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_parameters_cell_is_the_generated_one(name):
    generated = parameters_cell(NOTEBOOKS[name])
    assert cell_source(REPO / "notebooks" / name) == generated, REGENERATE
    # the comments fit an 846-px editor; a value stays on its line (papermill reads a parameter per line)
    assert all(len(line) <= 80 for line in generated.splitlines() if line.startswith("#"))


def test_papermill_reads_every_generated_parameter():
    import papermill

    for name, notebook in NOTEBOOKS.items():
        found = papermill.inspect_notebook(str(REPO / "notebooks" / name))
        expected = [line.split(" = ")[0] for line in parameters_cell(notebook).splitlines()
                    if line and not line.startswith("#")]
        assert list(found) == expected


def test_readme_table_is_the_generated_one():
    assert readme_section(REPO / "README.md") == readme_table(), REGENERATE


def test_every_field_is_declared_with_help_and_a_known_kind():
    declared = parameters(BenchConfig)
    assert [p.name for p in declared][:3] == ["label", "models", "size"]
    assert all(p.help and "\n" not in p.help for p in declared)
    assert {p.name: p.unit for p in declared if p.kind == "seconds"} == {
        "max_warmup_s": "seconds per worker", "min_time_s": "seconds per worker and round", "timeout_s": "seconds per round",
        "settle_s": "seconds per handoff"}
    assert {p.name: p.unit for p in declared if p.kind == "number"} == {
        "target_halfwidth": "fraction of the speedup", "budget_min": "minutes per profile",
        "worthwhile": "times eager's speed"}
    with pytest.raises(ValueError, match="kind: 'fraction' is not allowed"):
        Parameter("help", "fraction")


def test_validation_messages_are_the_declared_allowed_values():
    by_name = {p.name: p for p in parameters(BenchConfig)}
    for key, bad in (("iterations", 1), ("weights", "float64"), ("timeout_s", 0.0), ("dynamic", 1)):
        with pytest.raises(ConfigError, match=f"^{key}: .* is not allowed; allowed: ") as info:
            BenchConfig(size="tiny", **{key: bad})
        assert str(info.value).endswith(by_name[key].allowed_text())


def test_cell_literals_and_comment_width():
    cell = parameters_cell("benchmark")
    assert 'models = ["resnet", "vit", "segformer", "deeplabv3-mobilenet"]' in cell and 'device = "auto"' in cell
    assert "image = None" in cell and "measure = True" in cell
    assert parameter_docs.python_literal((("a", "b", ""),)) == '[["a", "b", ""]]'
    with pytest.raises(ValueError, match="notebook: 'other' is not allowed"):
        parameters_cell("other")
