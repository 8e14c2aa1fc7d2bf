"""Your own checkpoint: a folder saved with save_pretrained, named in `models:` beside registry names,
measured and reported like them; bad entries stop with one line before any model loads."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bench_utils.results.aggregate import load_dataframe
from bench_utils.results.rows import read_results
from bench_utils.report.verdict import verdicts
from conftest import run_cli, tiny_params


@pytest.fixture(scope="module")
def my_vit(tmp_path_factory):
    """A tiny ViT classifier with its image processor, saved as a user saves a fine-tuned model."""
    from transformers import AutoConfig, AutoImageProcessor, ViTForImageClassification

    from bench_utils.config.registry import get_spec

    shipped = get_spec("vit").config_dir("tiny")
    folder = tmp_path_factory.mktemp("own") / "my-vit"
    ViTForImageClassification(AutoConfig.from_pretrained(shipped)).save_pretrained(folder)
    AutoImageProcessor.from_pretrained(shipped).save_pretrained(folder)
    return folder


def test_a_saved_folder_is_measured_with_its_own_weights(my_vit, tmp_path):
    params = tiny_params(tmp_path, models=[{"name": "my-vit", "checkpoint": str(my_vit)}],
                         configurations=["eager", "default"], weights="auto")
    results = tmp_path / "r.jsonl"
    proc = run_cli("run", params, "--results", results)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read_results(results).rows
    assert [(r.model, r.configuration, r.status) for r in rows] == [("my-vit", "eager", "ok"), ("my-vit", "default", "ok")]
    assert all(r.weights == "pretrained" and r.weights_note == f"your checkpoint {my_vit.name}" for r in rows)
    assert rows[0].task == "image-classification" and rows[0].checkpoint == my_vit.name  # task from config.json; no local path
    df = load_dataframe(results)
    compiled = df[df["mode"] == "default"].iloc[0]
    assert compiled["speedup"] > 0 and compiled["accuracy_ok"]
    verdict = verdicts(df).iloc[0]
    assert verdict["model"] == "my-vit" and verdict["summary"].startswith("my-vit (batch 1, CPU): ")


@pytest.mark.parametrize("entry, message", [
    ({"name": "mine", "checkpoint": "/no/such/folder"}, "models: mine: checkpoint: '/no/such/folder' is not "
                                                         "allowed; allowed: an existing folder (not found)"),
    ({"name": "vit", "checkpoint": "/tmp"}, "models: vit: name: 'vit' is a registry model"),
    ({"name": "mine", "checkpoint": "org/model"}, "models: mine: task: required for the hub id org/model; allowed: "),
    ({"name": "mine", "checkpoint": "not a hub id!"}, "checkpoint: 'not a hub id!' is not allowed"),
    ({"name": "mine"}, "models: {'name': 'mine'} is not allowed; allowed: a registry name or {name: ..., checkpoint"),
])
def test_bad_entries_stop_with_one_line(tmp_path, entry, message):
    params = tiny_params(tmp_path, models=[entry])
    proc = run_cli("run", params, "--results", tmp_path / "r.jsonl")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert message in proc.stderr, proc.stderr
    assert not (tmp_path / "r.jsonl").exists()


def test_a_folder_without_its_processor_or_with_an_unknown_task_is_refused(my_vit, tmp_path):
    import shutil

    bare = tmp_path / "bare"
    shutil.copytree(my_vit, bare)
    (bare / "preprocessor_config.json").unlink()
    proc = run_cli("run", tiny_params(tmp_path, models=[{"name": "bare", "checkpoint": str(bare)}]))
    assert proc.returncode == 2 and "has no preprocessor_config.json" in proc.stderr
    wrong = tiny_params(tmp_path, "w.yaml", models=[{"name": "m", "checkpoint": str(my_vit), "task": "captioning"}])
    proc = run_cli("run", wrong)
    assert proc.returncode == 2 and "task: 'captioning' is not allowed" in proc.stderr
    assert yaml.safe_load(wrong.read_text())["models"][0]["task"] == "captioning"


def test_a_checkpoint_declaring_an_absurd_size_is_oom_before_it_is_built(my_vit, tmp_path):
    """A config.json may declare any size: the weights it declares are counted on the meta device and
    weighed against the memory available, so the cell is an `oom` row in a second, not a process the
    kernel kills after minutes of allocating."""
    import json
    import shutil

    from bench_utils.config.parameters_file import config_from_dict
    from conftest import measure_cell

    huge = tmp_path / "huge-vit"
    shutil.copytree(my_vit, huge)
    config = json.loads((huge / "config.json").read_text())
    config.update(hidden_size=2**20, intermediate_size=2**20, num_attention_heads=1)
    (huge / "config.json").write_text(json.dumps(config))
    (huge / "model.safetensors").unlink()  # its architecture only: random weights
    cfg = config_from_dict({"label": "t", "models": [{"name": "huge", "checkpoint": str(huge)}], "configurations": ["eager"],
                            "batch_sizes": [1], "device": "cpu", "weights": "auto", "profiler": False,
                            "iterations": 2, "min_time_s": 0.0})
    row = measure_cell(cfg, "huge", 1, "eager")
    assert row.status == "oom" and row.error.startswith("MemoryError: out of memory: the checkpoint declares ")
    assert "GiB of memory available" in row.error


def test_a_checkpoint_declaring_a_hundred_thousand_layers_is_refused_before_counting_them(my_vit, tmp_path):
    """Counting parameters on the meta device still builds every layer's module objects: 100,000 layers
    were killed at a 4 GB cap after 175 s. The layer count is read from the config first, in a second
    and a few MB, under an address-space cap that building would exceed."""
    import json
    import shutil
    import time

    from bench_utils.measure.models import declared_layers

    assert declared_layers({"depths": [2, 2, 18, 2], "vision_config": {"num_hidden_layers": 24}}) == (
        24, "num_hidden_layers")
    deep = tmp_path / "deep-vit"
    shutil.copytree(my_vit, deep)
    config = json.loads((deep / "config.json").read_text())
    config.update(num_hidden_layers=100_000)
    (deep / "config.json").write_text(json.dumps(config))
    (deep / "model.safetensors").unlink()
    script = f"""
import resource, sys
from bench_utils.config.parameters_file import config_from_dict
sys.path.insert(0, {str(Path(__file__).parent)!r})
from conftest import measure_cell
cfg = config_from_dict({{"label": "t", "models": [{{"name": "deep", "checkpoint": {str(deep)!r}}}],
                        "configurations": ["eager"], "batch_sizes": [1], "device": "cpu", "weights": "auto",
                        "profiler": False, "iterations": 2, "min_time_s": 0.0}})
import torch  # noqa: the cap below is for what the cell builds, not for importing torch
virtual = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (virtual + 2**31,) * 2)  # 2 GiB more: building the layers needs more
row = measure_cell(cfg, "deep", 1, "eager")
print(row.status, "|", row.error)
"""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    status, error = proc.stdout.strip().splitlines()[-1].split(" | ", 1)
    assert status == "oom" and "declares 100,000 layers (num_hidden_layers), more than the 1,000" in error
    assert time.perf_counter() - started < 60


@pytest.mark.parametrize("config, problem", [
    ([1, 2, 3], "config.json is a list, not a mapping"),
    ({"architectures": [5]}, 'config.json names no architecture ("architectures": [5])'),
    ({"architectures": "ViTForImageClassification"}, "config.json names no architecture"),
    ({"architectures": ["os.system"]}, "config.json names no architecture"),
    ({"architectures": ["ViTForImageClassification"], "model_type": ["vit"]}, "model_type is not text"),
])
def test_a_config_json_of_the_wrong_shape_is_one_line(my_vit, tmp_path, config, problem):
    import json
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(my_vit, bad)
    (bad / "config.json").write_text(json.dumps(config))
    proc = run_cli("run", tiny_params(tmp_path, models=[{"name": "bad", "checkpoint": str(bad)}]),
                   "--results", tmp_path / "r.jsonl")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert problem in proc.stderr, proc.stderr


@pytest.mark.parametrize("size", [{"height": 100_000, "width": 100_000}, {"shortest_edge": 100_000}, 100_000])
def test_a_processor_that_would_blow_the_input_up_is_refused_before_any_worker(my_vit, tmp_path, size):
    """An own checkpoint's image processor may ask for any size: 100,000 px of shortest edge made the
    shipped photograph 133,333 x 100,000 px, a 30 GB allocation in every worker (rows of `oom` blaming
    the model). The processed size is bounded as for the registry's processors: one line, exit 2."""
    import json
    import shutil

    big = tmp_path / "big"
    shutil.copytree(my_vit, big)
    processor = json.loads((big / "preprocessor_config.json").read_text())
    (big / "preprocessor_config.json").write_text(json.dumps(processor | {"size": size}))
    proc = run_cli("run", tiny_params(tmp_path, models=[{"name": "big", "checkpoint": str(big)}]),
                   "--results", tmp_path / "r.jsonl")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert ("models: big: its image processor (preprocessor_config.json) scales images to 100,000 px, so the "
            "input (640 x 480 px) becomes 133,333 x 100,000 px, more than 16,777,216 pixels") in proc.stderr
    assert not (tmp_path / "r.jsonl").exists()
    (big / "preprocessor_config.json").write_text(json.dumps(processor))  # its own size: accepted
    from bench_utils.config.parameters_file import load_config
    assert load_config(tiny_params(tmp_path, "ok.yaml", models=[{"name": "big", "checkpoint": str(big)}]))


@pytest.mark.parametrize("keys, becomes", [
    ({"size": {"shortest_edge": 224}, "crop_pct": 0.02}, "scales images to 11,200 px, so the input (640 x 480 px) "
                                                          "becomes 14,933 x 11,200 px"),
    ({"size": [6000, 6000]}, "scales images to 6,000 px, so the input (640 x 480 px) becomes 8,000 x 6,000 px"),
    ({"pad_size": {"height": 9000, "width": 9000}}, "scales images to 9,000 px"),
    ({"size": {"shortest_edge": 1e300}}, "asks for a length of 1"),
    ({"size": {"shortest_edge": 224}, "crop_pct": 0}, "asks for a length of inf px"),
    ({"size": {"longest_edge": 100_000}}, "scales images to 100,000 px, so the input (640 x 480 px) becomes 100,000 x "
                                          "75,000 px"),
])
def test_a_processor_is_bounded_whatever_keys_it_scales_by(my_vit, tmp_path, keys, becomes):
    """The bound reads every length a processor's class may scale or pad by, not only a whole-number
    `size`: `crop_pct: 0.02` (ConvNeXt's resize to shortest_edge / crop_pct) made a 167 M-pixel input and
    `size: [6000, 6000]` a 36 M-pixel one, both accepted."""
    import json
    import shutil

    from bench_utils.config.parameters_file import load_config
    from bench_utils.config.validation import ConfigError

    big = tmp_path / "big"
    shutil.copytree(my_vit, big)
    processor = json.loads((big / "preprocessor_config.json").read_text())
    (big / "preprocessor_config.json").write_text(json.dumps(processor | keys))
    with pytest.raises(ConfigError) as refused:
        load_config(tiny_params(tmp_path, models=[{"name": "big", "checkpoint": str(big)}]))
    assert f"models: big: its image processor (preprocessor_config.json) {becomes}" in str(refused.value)
    assert "more than 16,777,216 pixels" in str(refused.value) and "\n" not in str(refused.value)


def test_a_processor_size_that_is_not_a_number_is_one_line_and_a_longest_edge_bound_is_no_length(my_vit, tmp_path):
    """`size: {height: "6000", ...}` failed in every worker (torch's TypeError); MaskFormer's own
    `longest_edge: 2560` beside `shortest_edge: 640` bounds the longest side: a 3:1 image stays within
    the limit (read as a length to reach, it would not)."""
    import json
    import shutil

    from PIL import Image

    from bench_utils.config.parameters_file import load_config
    from bench_utils.config.validation import ConfigError

    mine = tmp_path / "mine"
    shutil.copytree(my_vit, mine)
    processor = json.loads((mine / "preprocessor_config.json").read_text())
    (mine / "preprocessor_config.json").write_text(json.dumps(processor | {"size": {"height": "6000", "width": 6000}}))
    with pytest.raises(ConfigError, match=r"preprocessor_config.json: size height: '6000' is not a number of pixels$"):
        load_config(tiny_params(tmp_path, models=[{"name": "mine", "checkpoint": str(mine)}]))
    wide = tmp_path / "wide.png"
    Image.new("RGB", (3000, 1000)).save(wide)
    (mine / "preprocessor_config.json").write_text(json.dumps(processor | {"size": {"shortest_edge": 640,
                                                                                    "longest_edge": 2560}}))
    assert load_config(tiny_params(tmp_path, "ok.yaml", models=[{"name": "mine", "checkpoint": str(mine)}],
                                   image=str(wide)))


def test_a_processor_that_keeps_a_big_image_as_it_is_is_refused(my_vit, tmp_path):
    """`do_resize: false` hands the image on at its own size: one of 5,000 x 4,000 px passes the registry's
    bound (its shortest edge scaled to 1,333 px) but is 20 M pixels as it is."""
    import json
    import shutil

    from PIL import Image

    from bench_utils.config.parameters_file import load_config
    from bench_utils.config.validation import ConfigError

    image = tmp_path / "big.png"
    Image.new("RGB", (5000, 4000)).save(image)
    keep = tmp_path / "keep"
    shutil.copytree(my_vit, keep)
    processor = json.loads((keep / "preprocessor_config.json").read_text())
    (keep / "preprocessor_config.json").write_text(json.dumps(processor | {"do_resize": False}))
    with pytest.raises(ConfigError, match=r"does not resize \(do_resize: false\), so the input is its own 5,000 x "
                                          r"4,000 px, more than 16,777,216 pixels"):
        load_config(tiny_params(tmp_path, models=[{"name": "keep", "checkpoint": str(keep)}], image=str(image)))
    assert load_config(tiny_params(tmp_path, "ok.yaml", models=[{"name": "keep", "checkpoint": str(keep)}]))


def test_a_checkpoint_whose_weights_cannot_be_read_names_its_folder_by_its_name_only(my_vit, tmp_path):
    """A weights file the worker could not read ("FileNotFoundError ... /full/path/...": one without read
    permission, or a shard its index names that is not there) put the checkpoint's absolute path into
    results.jsonl, cells.csv and the summary: the row's texts name the folder by its name, as the rows'
    other fields do, wherever the results file lies."""
    import json
    import shutil

    broken = tmp_path / "models" / "broken-vit"
    shutil.copytree(my_vit, broken)
    (broken / "model.safetensors").unlink()
    (broken / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": {"vit.embeddings.cls_token": "model-00001-of-00001.safetensors"}}))
    results = tmp_path / "elsewhere" / "deeper" / "r.jsonl"
    params = tiny_params(tmp_path, models=[{"name": "broken", "checkpoint": str(broken)}], weights="auto")
    proc = run_cli("run", params, "--results", results)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (row,) = read_results(results).rows
    assert row.status == "error" and "broken-vit/model-00001-of-00001.safetensors" in row.error, row.error
    assert str(tmp_path) not in results.read_text() and "../" not in row.error


def test_weights_that_match_none_of_the_models_tensors_are_a_failed_row_not_pretrained(my_vit, tmp_path):
    """A weights file of another model (no tensor name in common): from_pretrained left every tensor at
    random and the rows said "pretrained weights". It is a failed row saying so; a file missing a few
    tensors is measured, its note counting them."""
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    other, partial = tmp_path / "other", tmp_path / "partial"
    for folder in (other, partial):
        shutil.copytree(my_vit, folder)
    save_file({"some.other.model.weight": torch.zeros(3)}, str(other / "model.safetensors"), metadata={"format": "pt"})
    weights = load_file(str(partial / "model.safetensors"))
    save_file({k: v for k, v in weights.items() if not k.startswith("classifier.")}, str(partial / "model.safetensors"),
              metadata={"format": "pt"})
    params = tiny_params(tmp_path, models=[{"name": "other", "checkpoint": str(other)},
                                           {"name": "partial", "checkpoint": str(partial)}], weights="auto")
    results = tmp_path / "r.jsonl"
    assert run_cli("run", params, "--results", results).returncode == 0
    rows = {row.model: row for row in read_results(results).rows}
    assert rows["other"].status == "error" and rows["other"].weights != "pretrained"
    assert "the weights file of other matches none of the model's" in rows["other"].error
    assert rows["partial"].status == "ok" and rows["partial"].weights == "pretrained"
    assert rows["partial"].weights_note == "your checkpoint partial (2 of its 40 tensors not in its weights file: random)"
