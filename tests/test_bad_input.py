"""A hostile user's inputs: each gives one line and exit 2 (or a documented behaviour), never a traceback
and never a damaged file."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bench_utils.config.bench_config import BenchConfig, ConfigError
from bench_utils.config.parameters_file import load_config
from bench_utils.config.parameters_file import config_from_dict
from bench_utils.results.rows import read_results
from bench_utils.results.writer import NotAResultsFileError, ResultsLockedError, ResultsWriter
from conftest import REPO, make_row, one_error_line, run_cli, tiny_params


def test_duplicate_yaml_keys_are_refused(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("label: A\nmodels: [vit]\nbatch_sizes: [1]\nconfigurations: [eager]\niterations: 5\niterations: 50\n")
    with pytest.raises(ConfigError, match=r"key 'iterations' appears twice \(line 6\)"):
        load_config(path)


def test_values_are_shown_as_the_user_wrote_them():
    with pytest.raises(ConfigError, match=r"batch_sizes: \['4'\] is not allowed; allowed: a list of int"):
        config_from_dict({"batch_sizes": ["4"]})


def test_labels_sharing_a_results_folder_are_refused_up_front(tmp_path):
    first = tiny_params(tmp_path, "a.yaml", label="Lab A")
    second = tiny_params(tmp_path, "b.yaml", label="lab-a")
    line = one_error_line(run_cli("run", first, second))
    assert line.startswith("error: label 'lab-a' of ") and "uses the results folder 'lab-a' of " in line
    assert not (tmp_path / "lab-a").exists()


@pytest.mark.skipif(os.path.exists("/dev/nvidia0"), reason="a machine with a GPU may have CUDA")
def test_cuda_without_a_gpu_is_refused_before_any_cell(tmp_path):
    results = tmp_path / "r.jsonl"
    line = one_error_line(run_cli("run", tiny_params(tmp_path, device="cuda"), "--results", results))
    assert line.startswith("error: device: 'cuda' is not allowed here (profile 'test')") and "sees no usable GPU" in line
    assert not results.exists()  # nothing written: the corrected rerun starts clean


@pytest.mark.skipif(os.path.exists("/dev/nvidia0"), reason="a machine with a GPU may have CUDA")
def test_selfcheck_on_cuda_without_a_gpu_says_so_in_one_line(tmp_path):
    line = one_error_line(run_cli("selfcheck", "--device", "cuda", "--keep", tmp_path / "kept"))
    assert line.startswith("error: device: 'cuda' is not allowed here (profile 'selfcheck cuda')")
    assert not (tmp_path / "kept").exists()  # refused before anything ran


def test_one_lock_per_file_whatever_path_names_it(tmp_path):
    results = tmp_path / "r.jsonl"
    alias = tmp_path / "alias"  # a linked folder, and a relative spelling: the same file, the same lock
    results.touch()
    alias.symlink_to(tmp_path)
    with ResultsWriter(results):
        for other in (alias / "r.jsonl", tmp_path / "sub" / ".." / "r.jsonl"):
            with pytest.raises(ResultsLockedError):
                ResultsWriter(other)
        link = tmp_path / "link.jsonl"  # the file itself a link: refused before any lock (test_files.py)
        link.symlink_to(results)
        with pytest.raises(OSError, match="a symbolic link"):
            ResultsWriter(link)


@pytest.mark.parametrize("text", ['{\n  "name": "package",\n  "version": "1.0"\n}\n', '{"name": "package"}\n',
                                  "plain notes\n"])
def test_a_file_that_is_not_results_is_refused_and_left_untouched(tmp_path, text):
    path = tmp_path / "package.json"
    path.write_text(text)
    with pytest.raises(NotAResultsFileError, match="not a results file"):
        ResultsWriter(path)
    assert path.read_text() == text


def test_a_torn_first_row_is_still_a_results_file(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(make_row().to_json()[:80])  # killed mid-write: no newline, not valid JSON
    with ResultsWriter(path) as writer:
        writer.append(make_row(configuration="default"))
    with pytest.warns(UserWarning, match=r"skipped 1 unreadable line\(s\): \[1\]"):
        assert [row.configuration for row in read_results(path).rows] == ["default"]


def test_results_under_a_regular_file_is_one_line(tmp_path):
    (tmp_path / "plain").write_text("x")
    line = one_error_line(run_cli("run", tiny_params(tmp_path), "--results", tmp_path / "plain" / "r.jsonl"))
    assert line == f"error: {tmp_path / 'plain' / 'r.jsonl'}: {tmp_path / 'plain'} is a file, not a folder; " \
                   "choose another --results path"


def test_reports_dir_variable_naming_a_file_is_one_line(tmp_path):
    (tmp_path / "plain").write_text("x")
    proc = run_cli("report", tiny_params(tmp_path), "--report-only", env={"BENCH_REPORTS_DIR": str(tmp_path / "plain")})
    assert one_error_line(proc) == f"error: BENCH_REPORTS_DIR={tmp_path / 'plain'}: a file, not a folder; " \
                                   "point it at a folder (or unset it)"


def test_report_only_warns_about_rows_measured_with_other_settings(tmp_path):
    from bench_utils.pipeline import check_results_file

    cfg = load_config(tiny_params(tmp_path))
    path = tmp_path / "results.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(make_row(label=cfg.label, settings=cfg.settings_fingerprint()))
        writer.append(make_row(label=cfg.label, batch_size=4, settings="another-one"))
    # the settings named as far as the rows record them (the fixture's warm-up and iterations are not the profile's)
    with pytest.warns(UserWarning, match=r"1 of 2 rows were measured with other settings than params.yaml \(warmup 2 "
                                         r"there, \d+ here; iterations 10 there"):
        check_results_file(path, tmp_path / "params.yaml", cfg)


def test_report_only_refuses_rows_of_another_label(tmp_path):
    # the page would be headed with the rows' label, the console and the index with the profile's
    from bench_utils.pipeline import check_results_file

    cfg = load_config(tiny_params(tmp_path))
    path = tmp_path / "results.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(make_row(label="Another run", settings=cfg.settings_fingerprint()))
    with pytest.raises(ConfigError, match=rf"holds rows of the label 'Another run', not params.yaml's {cfg.label!r}: "
                                          "name the parameters file they were measured with"):
        check_results_file(path, tmp_path / "params.yaml", cfg)


def test_a_decompression_bomb_image_is_refused(tmp_path, monkeypatch):
    from PIL import Image

    image = tmp_path / "big.png"
    Image.new("RGB", (60, 60)).save(image)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # 3600 pixels > 2x the limit: Pillow raises
    with pytest.raises(ConfigError, match=r"image: .* is not allowed; allowed: an image of at most 1,000 pixels"):
        config_from_dict({"image": str(image)})


def test_an_image_whose_text_chunk_is_a_bomb_is_one_line(tmp_path):
    """A 64 x 64 PNG carrying a 50 MB compressed text chunk: Pillow refuses to inflate it while reading
    the header (a ValueError, which the check let through as a 52-line traceback): one line now."""
    from PIL import Image, PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("comment", "A" * 50_000_000, zip=True)
    image = tmp_path / "text-bomb.png"
    Image.new("RGB", (64, 64)).save(image, pnginfo=info)
    with pytest.raises(ConfigError, match=r"allowed: an image whose header Pillow reads within its limits "
                                          r"\(Decompressed data too large"):
        config_from_dict({"image": str(image)})


def test_absurd_counts_and_durations_are_refused():
    for values, message in (({"iterations": 10**12}, "iterations: 1000000000000 is not allowed"),
                            ({"repeats": 1000}, "repeats: 1000 is not allowed; allowed: an integer from 1 to 100"),
                            ({"min_time_s": 1e9}, "min_time_s: 1000000000.0 is not allowed"),
                            ({"configurations": ["default"]}, "includes eager")):
        with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
            config_from_dict(values)


def test_cuda_arch_check_names_the_missing_architecture():
    from bench_utils.measure.environment import cuda_arch_problem

    cuda13 = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]
    assert cuda_arch_problem(cuda13, (8, 0)) == "" and cuda_arch_problem(cuda13, (8, 9)) == ""  # sm_86 runs on 8.9
    assert cuda_arch_problem(cuda13, (12, 1)) == ""
    problem = cuda_arch_problem(cuda13, (7, 0), "Tesla V100-SXM2-16GB")
    assert problem.startswith("this torch build has no kernels for sm_70 (Tesla V100-SXM2-16GB)")
    assert cuda_arch_problem(["sm_80", "compute_70"], (7, 5)) == ""  # PTX of an earlier arch: JIT-compiled
    assert cuda_arch_problem([], (9, 0)).startswith("this torch build has no kernels for sm_90")


def test_cuda_is_refused_naming_its_profile_when_torch_sees_no_gpu_or_cannot_run_on_it(monkeypatch):
    import torch

    from bench_utils.measure import environment

    cpu, cuda = BenchConfig(label="cpu", device="cpu"), BenchConfig(label="gpu box", device="cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    environment.check_device_available([cpu])  # no profile asks for cuda: nothing to check
    with pytest.raises(ConfigError, match=r"device: 'cuda' is not allowed here \(profile 'gpu box'\); torch .* sees no"):
        environment.check_device_available([cpu, cuda])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)

    def no_kernels():
        raise RuntimeError("no sm_70")

    monkeypatch.setattr(environment, "check_cuda_usable", no_kernels)
    with pytest.raises(ConfigError, match=r"device: 'cuda' is not allowed here \(profile 'gpu box'\); no sm_70$"):
        environment.check_device_available([cuda])


def test_report_refuses_cpu_profiles_when_a_gpu_is_there_but_unusable(monkeypatch):
    import torch

    from bench_utils import pipeline

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(pipeline, "_nvidia_smi_gpus", lambda: ["Tesla V100-SXM2-16GB"])
    with pytest.raises(ConfigError, match="nvidia-smi sees 'Tesla V100-SXM2-16GB' but torch"):
        pipeline.default_runs(pipeline.repo_root())
    monkeypatch.setattr(pipeline, "_nvidia_smi_gpus", lambda: [])
    assert [p.name for p, _ in pipeline.default_runs(pipeline.repo_root())] == ["cpu-report.yaml"]


# --- bad input: one line on stderr, exit 2, no traceback, nothing loaded or written -----------------

GOOD = {"label": "test", "models": ["vit"], "batch_sizes": [1], "configurations": ["eager"], "device": "cpu",
        "weights": "random", "iterations": 4}


_DROP = object()  # a key to leave out


def _yaml(**changes) -> str:
    values = {**GOOD, **changes}
    return yaml.safe_dump({k: v for k, v in values.items() if v is not _DROP})


# name -> (file text, or bytes, or None for "no file"; the problem the error line must name)
BAD_PARAMS = {
    "unknown model": (_yaml(models=["vit", "gpt2"]), "models: 'gpt2' is not allowed; allowed: vit, "),
    "unknown mode": (_yaml(configurations=["eager", "turbo"]), "configurations: 'turbo': 'turbo' is not a mode; allowed: a mode (eager, default"),
    "batch size 0": (_yaml(batch_sizes=[0]), "batch_sizes: 0 is not allowed; allowed: integers >= 1"),
    "negative batch size": (_yaml(batch_sizes=[1, -4]), "batch_sizes: -4 is not allowed"),
    "batch size of the wrong type": (_yaml(batch_sizes=["two"]), "batch_sizes: ['two'] is not allowed; "
                                                                 "allowed: a list of int"),
    "warmup of the wrong type": (_yaml(warmup="3"), "warmup: '3' is not allowed; allowed: an integer from 0 to 1,000,000"),
    "models of the wrong type": (_yaml(models={"vit": 1}), "models: {'vit': 1} is not allowed; allowed: a list"),
    "unknown key": (_yaml(colour="blue"), "colour: 'blue' is not allowed; allowed: keys label, models"),
    "empty file": ("", "the file is empty; required keys: label, models, batch_sizes, configurations"),
    "not YAML": ("label: [unclosed\nmodels: vit\n", "not valid YAML (line "),
    "not text": (b"\x89PNG\r\n\x1a\n\x00\xff\xfe", "not a text file"),
    "a list, not a mapping": ("- vit\n- resnet\n", "expected a mapping of key: value, got list"),
    "missing required key": (_yaml(configurations=_DROP), "missing required key 'configurations'"),
    "iterations 0": (_yaml(iterations=0), "iterations: 0 is not allowed; allowed: an integer from 2 to 1,000,000"),
    "iterations absurd": (_yaml(iterations=10**12), "iterations: 1000000000000 is not allowed; allowed: an integer"),
    "no eager baseline": (_yaml(configurations=["default"]), "configurations: ['default'] is not allowed; allowed: a list that "
                                                    "includes eager"),
    "repeats 0": (_yaml(repeats=0), "repeats: 0 is not allowed; allowed: an integer from 1 to 100"),
    "negative min_time_s": (_yaml(min_time_s=-1), "min_time_s: -1 is not allowed; allowed: a finite number of "
                                                  "seconds >= 0"),
    "image that does not exist": (_yaml(image="/no/such/photo.jpg"), "image: '/no/such/photo.jpg' is not "
                                                                     "allowed; allowed: an existing image file"),
    "image that is not an image": (_yaml(image="IMAGE"), "this file is not an image"),
    "no parameters file": (None, "parameters file not found"),
    "own name leaving its folder": (_yaml(models=[{"name": "../../../../esc/escape", "checkpoint": "org/id",
                                                   "task": "image-classification"}]),
                                    "models: ../../../../esc/escape: name: '../../../../esc/escape' is not allowed"),
    "own name with a slash": (_yaml(models=[{"name": "org/my-model", "checkpoint": "org/id",
                                             "task": "image-classification"}]),
                              "name: 'org/my-model' is not allowed; allowed: up to 100 letters, digits"),
    "own name like an option": (_yaml(models=[{"name": "-h", "checkpoint": "org/id", "task": "image-classification"}]),
                                "name: '-h' is not allowed; allowed: up to 100 letters, digits, '.', '_' or '-', "
                                "starting with a letter or digit"),
}


def _bad_file(tmp_path: Path, name: str) -> Path:
    text, _ = BAD_PARAMS[name]
    path = tmp_path / "params.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        fake = tmp_path / "photo.jpg"
        fake.write_text("these are words, not pixels")
        path.write_text(text.replace("IMAGE", str(fake)))
    return path


@pytest.mark.parametrize("name", BAD_PARAMS)
def test_bad_parameters_file_gives_one_line_and_exit_2(tmp_path, name):
    params = _bad_file(tmp_path, name)
    proc = run_cli("run", params, "--results", tmp_path / "out" / "results.jsonl")
    line = one_error_line(proc)
    assert line.startswith(f"error: {params}: ") and BAD_PARAMS[name][1] in line
    assert not (tmp_path / "out").exists()  # no results file, lock or cell log: nothing ran


def test_bad_parameters_never_import_torch(tmp_path):
    """Refused before any model code: checking every bad file in one process loads neither library."""
    paths = []
    for number, name in enumerate(BAD_PARAMS):
        folder = tmp_path / str(number)
        folder.mkdir()
        paths.append(str(_bad_file(folder, name)))
    code = ("import sys\nfrom bench_utils.__main__ import main\n"
            f"codes = [main(['run', p, '--results', p + '.jsonl']) for p in {paths!r}]\n"
            "print(codes, 'torch' in sys.modules, 'transformers' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.stdout.strip() == f"{[2] * len(paths)} False False", proc.stderr[-2000:]
    assert len(proc.stderr.splitlines()) == len(paths)


def test_report_refuses_a_missing_or_bad_parameters_file_before_running_anything(tmp_path):
    out = tmp_path / "reports"
    line = one_error_line(run_cli("report", tmp_path / "nope.yaml", "--out", out))
    assert line == f"error: {tmp_path / 'nope.yaml'}: parameters file not found"
    good, bad = tiny_params(tmp_path, "good.yaml"), _bad_file(tmp_path, "unknown model")
    line = one_error_line(run_cli("report", good, bad, "--out", out))  # every file checked first
    assert line.startswith(f"error: {bad}: models: 'gpt2' is not allowed")
    assert not out.exists()


def test_results_path_that_is_not_a_results_file_is_refused_untouched(tmp_path):
    params = tiny_params(tmp_path)
    before = params.read_bytes()
    line = one_error_line(run_cli("run", params, "--results", params))  # e.g. arguments mixed up
    assert line == f"error: {params}: not a results file (line 1 is not a results row); choose another --results file"
    assert params.read_bytes() == before and not (tmp_path / "params.yaml.lock").exists()
    line = one_error_line(run_cli("run", params, "--results", tmp_path))
    assert line == f"error: {tmp_path}: not a file; choose a .jsonl file for --results"


@pytest.mark.parametrize("kind", ["file", "read-only folder"])
def test_an_inductor_cache_dir_that_cannot_be_written_is_one_line_naming_the_variable(tmp_path, kind):
    cache = tmp_path / "cache"
    if kind == "file":
        cache.write_text("not a folder")
    else:
        cache.mkdir(mode=0o500)
    if kind != "file" and os.access(cache, os.W_OK):
        pytest.skip("running as a user who can write anywhere (root)")
    proc = run_cli("run", tiny_params(tmp_path), "--results", tmp_path / "out" / "results.jsonl",
                   env={"TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor")})
    line = one_error_line(proc)
    assert f"TORCHINDUCTOR_CACHE_DIR={cache / 'inductor'}: {cache} is" in line
    assert "point it at a writable folder" in line
    assert not (tmp_path / "out").exists()


def test_a_label_sharing_another_labels_folder_is_refused_on_resume(tmp_path):
    from bench_utils.sweep.jobs import SettingsMismatchError, read_cell_rows

    first, second = load_config(tiny_params(tmp_path, label="A100")), load_config(tiny_params(tmp_path, label="a100!"))
    results = tmp_path / "a100" / "results.jsonl"
    with ResultsWriter(results) as writer:
        writer.append(make_row(**{"label": "A100", "settings": first.settings_fingerprint(), "iterations": 10}))
    with pytest.raises(SettingsMismatchError, match="holds rows of the label 'A100', not 'a100!'"):
        read_cell_rows(second, results)


def test_a_ray_address_where_nothing_answers_is_one_line_within_seconds():
    import time

    from bench_utils.sweep.launchers.ray import RayTarget, probe_ray_address

    for address in ("127.0.0.1:1", "nonexistent.invalid:6379", "ray://127.0.0.1:1"):
        started = time.perf_counter()
        with pytest.raises(ConfigError, match=f"--ray {re.escape(address)}: no Ray cluster there"):
            probe_ray_address(RayTarget(address), timeout_s=2.0)
        assert time.perf_counter() - started < 60  # a guard against a wait without end, not a margin


# --- round 4: parsing is bounded, keys are text, texts a terminal prints hold no control character ----

LAUGHS = "".join(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
                 for prev, name in zip("abcdefgh", "bcdefghi"))  # 9^9 values from ~400 bytes


@pytest.mark.parametrize("where", ["an unknown key", "tags", "label"])
def test_a_yaml_bomb_is_one_line_in_a_second(tmp_path, where):
    """Billion laughs: refused before anything is built from it (no expanded value, no error text that
    expands it), in one line."""
    bomb = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + LAUGHS
    key = {"an unknown key": "x", "tags": "tags", "label": "label"}[where]
    path = tmp_path / "bomb.yaml"
    path.write_text(_yaml(**({} if key != "label" else {"label": _DROP})) + bomb + f"{key}: *i\n")
    assert path.stat().st_size < 1000
    line = one_error_line(run_cli("plan", path, timeout=300))  # it ran past 4 GiB in 40 s before
    assert "stands for more than 100,000 values once its aliases are expanded" in line


@pytest.mark.parametrize("text, problem", [
    ("tags: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested deeper than 20 levels"),
    ("tags: &t [x]\n" + "".join(f"k{i}: *t\n" for i in range(101)), "more than 100 aliases"),
    ("tags: [" + "x, " * 400_000 + "x]\n", "larger than 1,000,000 bytes"),
    ("tags: [" + "1" * 5000 + "]\n", "not valid YAML (Exceeds the limit (4300 digits) for integer string"),
])
def test_deep_aliased_or_huge_yaml_is_one_line(tmp_path, text, problem):
    path = tmp_path / "p.yaml"
    path.write_text(_yaml() + text)
    assert problem in one_error_line(run_cli("plan", path))


@pytest.mark.parametrize("key, problem", [("1", "1: 'x' is not allowed; allowed: keys label, models"),
                                          ("null", "None: 'x' is not allowed; allowed: keys label, models"),
                                          ("true", "True: 'x' is not allowed; allowed: keys label, models"),
                                          ("[a, b]", "a key that is a list (line 11); allowed: the parameters' names")])
def test_a_key_that_is_not_text_beside_an_unknown_one_is_one_line(tmp_path, key, problem):
    path = tmp_path / "p.yaml"
    path.write_text(_yaml() + f"{key}: x\ncolour: blue\n")
    assert one_error_line(run_cli("plan", path)).startswith(f"error: {path}: {problem}")


@pytest.mark.parametrize("values, shown", [
    ({"label": "CPU\x1b]52;c;aGk=\x07\x1b[2J"}, r"label: 'CPU\x1b]52;c;aGk=\x07\x1b[2J' is not allowed"),
    ({"tags": ["nightly", "\x9b2J"]}, r"tags: '\x9b2J' is not allowed"),
    ({"label": "x" * 201}, "label: 'xxx"),
])
def test_a_text_with_control_characters_or_too_long_is_refused(values, shown):
    with pytest.raises(ConfigError, match="allowed: text of at most 200 characters without control characters") as err:
        config_from_dict(values)
    assert str(err.value).startswith(shown) and len(str(err.value)) < 400


def test_a_refused_value_is_shown_short_however_big():
    with pytest.raises(ConfigError) as err:
        config_from_dict({"batch_sizes": [[list(range(1000))] * 1000] * 1000})
    assert len(str(err.value)) < 300 and "..." in str(err.value)


def test_an_image_whose_aspect_ratio_is_a_bomb_is_refused_with_its_sizes(tmp_path):
    """A 100,000 x 1 PNG is a few hundred bytes; resized shortest edge first, aspect kept, it would become
    1,333 x 133 million px of float in every worker."""
    from PIL import Image

    image = tmp_path / "strip.png"
    Image.new("RGB", (100_000, 1)).save(image)
    with pytest.raises(ConfigError, match=r"within 16,777,216 pixels: this one \(100,000 x 1 px\) becomes "
                                          r"133,300,000 x 1,333 px"):
        config_from_dict({"image": str(image)})
    photo = tmp_path / "photo.png"
    Image.new("RGB", (640, 480)).save(photo)
    assert config_from_dict({"image": str(photo)}).image == str(photo)  # a photo's shape passes


def test_images_no_worker_could_use_are_refused_before_any_worker_starts(tmp_path, monkeypatch):
    from PIL import Image

    whole = tmp_path / "whole.jpg"
    Image.new("RGB", (64, 48), "red").save(whole)
    truncated = tmp_path / "truncated.jpg"
    truncated.write_bytes(whole.read_bytes()[: len(whole.read_bytes()) // 2])
    with pytest.raises(ConfigError, match=r"image: .* allowed: an image (whose pixels decode|file Pillow can read.*"
                                          r"damaged)"):
        config_from_dict({"image": str(truncated)})
    eps = tmp_path / "figure.eps"  # Pillow would hand it to Ghostscript
    eps.write_bytes(b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\nshowpage\n")
    with pytest.raises(ConfigError, match=r"image: .* allowed: an image file Pillow can read, JPEG, PNG"):
        config_from_dict({"image": str(eps)})
    big = tmp_path / "big.png"
    Image.new("RGB", (60, 60)).save(big)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 2000)  # 3,600 pixels: under twice the limit, Pillow only warns
    with pytest.raises(ConfigError, match=r"an image of at most 2,000 pixels \(this one is 60 x 60\)"):
        config_from_dict({"image": str(big)})


def test_a_fifo_or_a_device_given_as_a_file_is_not_called_missing(tmp_path):
    """A FIFO or /dev/null exists: "not found" sent the user looking for a file that is there."""
    import os

    from bench_utils.config.parameters_file import load_config
    from bench_utils.config.validation import ConfigError

    fifo = tmp_path / "params.yaml"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/null"):
        with pytest.raises(ConfigError, match="parameters file is not a regular file"):
            load_config(path)
    with pytest.raises(ConfigError, match="parameters file not found"):
        load_config(tmp_path / "missing.yaml")


def test_an_ascii_locale_reads_a_utf8_profile_and_escapes_what_it_cannot_print(tmp_path):
    """Under LC_ALL=C (PYTHONUTF8=0) a UTF-8 profile was "not a text file", and an ASCII one ended in a
    traceback when the verdict printed its "×": files are read as UTF-8 whatever the locale, and output
    the locale cannot encode is escaped."""
    import os

    params = tiny_params(tmp_path, label="Zürich")
    params.write_text(yaml.safe_dump(yaml.safe_load(params.read_text()), allow_unicode=True), encoding="utf-8")
    assert "Zürich" in params.read_text(encoding="utf-8")  # a UTF-8 file, not an ASCII one with escapes
    env = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}
    proc = run_cli("plan", params, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith(f"{params}: Z\\xfcrich: ") and "Traceback" not in proc.stderr
    assert os.environ.get("LC_ALL") != "C"  # the test's own locale untouched
