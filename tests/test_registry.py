"""The registry: 12 checkpoints, their shipped configs, published counts, and how a bad name is refused."""

import json
import subprocess
import sys

import pytest

from bench_utils.config.registry import MODEL_NAMES, MODELS, SIZES, TASKS, get_spec
from conftest import run_cli, tiny_params

EXPECTED = ("vit", "beit", "convnext", "resnet", "segformer", "mask2former", "maskformer",
            "deeplabv3-mobilenet", "owlvit", "detr", "detr-resnet-101", "conditional-detr")


def test_the_twelve_checkpoints_in_guide_order():
    assert MODEL_NAMES == EXPECTED
    assert len({spec.checkpoint for spec in MODELS.values()}) == 12
    assert all(spec.task in TASKS for spec in MODELS.values())
    assert [name for name, spec in MODELS.items() if spec.takes_text] == ["owlvit"]


def test_get_spec_returns_the_spec_and_refuses_a_bad_name_in_one_line():
    assert get_spec("detr-resnet-101").checkpoint == "facebook/detr-resnet-101"
    with pytest.raises(ValueError) as info:
        get_spec("gpt2")
    message = str(info.value)
    assert "\n" not in message and message.startswith("unknown model 'gpt2'; valid names: ")
    assert message.split("valid names: ")[1].split(", ") == list(EXPECTED)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", EXPECTED)
def test_shipped_configs_name_the_registry_class(name, size):
    import transformers

    spec = get_spec(name)
    folder = spec.config_dir(size)
    config = json.loads((folder / "config.json").read_text())
    processor = json.loads((folder / "preprocessor_config.json").read_text())
    assert config["architectures"] == [spec.model_class]
    assert hasattr(transformers, spec.model_class)
    assert hasattr(transformers, processor["image_processor_type"])


def test_config_dir_refuses_an_unknown_size():
    with pytest.raises(ValueError, match="size: 'huge' is not allowed; allowed: full, tiny"):
        get_spec("vit").config_dir("huge")


def test_every_model_has_a_published_count_with_a_source():
    from importlib import resources

    published = json.loads((resources.files("bench_utils") / "model_configs" / "published_params.json").read_text())
    assert tuple(published) == EXPECTED
    for name, entry in published.items():
        assert isinstance(entry["params"], int) and entry["params"] > 1_000_000, name
        assert len(entry["source"].strip()) > 30, name  # a citation in words, not a placeholder
        assert get_spec(name).published_params == entry["params"]


def test_registry_does_not_import_torch():
    code = "import sys, bench_utils.config.registry; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_cli_models_lists_all_twelve_with_checkpoint_and_count():
    done = run_cli("models", timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["name", "task", "checkpoint", "parameters"]
    rows = [line.split() for line in lines[2:2 + len(EXPECTED)]]
    assert [row[0] for row in rows] == list(EXPECTED)
    for row in rows:
        spec = get_spec(row[0])
        assert row[1:] == [spec.task, spec.checkpoint, f"{spec.published_params / 1e6:.1f}M"]
    assert "sizes: full, tiny" in done.stdout


def test_cli_run_with_an_unknown_model_exits_2_with_one_line(tmp_path):
    params = tiny_params(tmp_path, models=["vit", "gpt2"])
    done = run_cli("run", params, "--results", tmp_path / "r.jsonl", timeout=120)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "models: 'gpt2' is not allowed" in done.stderr
    assert all(name in done.stderr for name in EXPECTED)
    assert not (tmp_path / "r.jsonl").exists()
