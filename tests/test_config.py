from pathlib import Path

import pytest

from bench_utils.config.bench_config import BenchConfig, ConfigError
from bench_utils.config.parameters_file import load_config
from bench_utils.config.parameters_file import config_from_dict

GOOD = """\
label: CPU test
models: [vit, resnet]
size: tiny
batch_sizes: [1, 4]
configurations: [eager, default]
iterations: 10
"""


def write(tmp_path, text, name="p.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_good_file_becomes_frozen_config_with_cells(tmp_path):
    cfg = load_config(write(tmp_path, GOOD))
    assert cfg.models == ("vit", "resnet") and cfg.batch_sizes == (1, 4) and cfg.iterations == 10
    assert cfg.cells()[:3] == [("vit", 1, "eager"), ("vit", 1, "default"), ("vit", 4, "eager")]
    assert len(cfg.cells()) == 8
    assert cfg.slug() == "cpu-test"
    with pytest.raises(AttributeError):
        cfg.iterations = 3


def test_fingerprint_ignores_matrix_but_not_settings():
    base = BenchConfig()
    assert base.settings_fingerprint() == BenchConfig(models=("beit",), batch_sizes=(8,)).settings_fingerprint()
    assert base.settings_fingerprint() != BenchConfig(iterations=21).settings_fingerprint()
    # the configurations are the matrix too: a profile racing more of them resumes into the same file
    assert base.settings_fingerprint() == BenchConfig(configurations=("eager", "default")).settings_fingerprint()
    assert base.settings_fingerprint() != BenchConfig(dynamic="auto").settings_fingerprint()
    # the allocator changes eager's latency on a CPU (measure/host_memory.py): rows of either never merge
    assert base.settings_fingerprint() != BenchConfig(keep_freed_memory=False).settings_fingerprint()
    # the studies run after the sweep and change none of its cells
    studies = BenchConfig(profiler=True, serving_batch_sizes=(1, 4, 1), startup=True)
    assert base.settings_fingerprint() == studies.settings_fingerprint()
    # the number of blocks changes what a row's samples are; the precision target and budget only
    # how many rounds a cell gets, and a row of either belongs with the others
    assert base.settings_fingerprint() != BenchConfig(blocks=5).settings_fingerprint()
    rounds = BenchConfig(target_halfwidth=0.08, budget_min=7, max_repeats=20, repeats=4, worthwhile=1.2)
    assert base.settings_fingerprint() == rounds.settings_fingerprint()


def test_a_process_budget_is_split_evenly_over_its_blocks():
    cfg = BenchConfig(iterations=30, min_time_s=1.0, blocks=4)
    assert cfg.block_s() == 0.25  # seconds per block, at least
    assert cfg.block_calls() == 8  # calls per block, at least: ceil(30 / 4), so a process times >= 30 calls
    assert BenchConfig(iterations=32, blocks=4).block_calls() == 8
    assert BenchConfig(iterations=2, blocks=4).block_calls() == 1  # every block times one call at least
    assert BenchConfig(blocks=1, min_time_s=0.5).block_s() == 0.5
    # the defaults: 4 blocks a round, extra rounds to +-5% (an interval narrower than the 10% margin)
    assert (BenchConfig().blocks, BenchConfig().target_halfwidth, BenchConfig().worthwhile) == (4, 0.05, 1.10)


def test_whole_seconds_written_as_integers_are_the_same_setting(tmp_path):
    as_int = load_config(write(tmp_path, GOOD + "min_time_s: 1\nmax_warmup_s: 10\n"))
    as_float = load_config(write(tmp_path, GOOD + "min_time_s: 1.0\nmax_warmup_s: 10.0\n", "q.yaml"))
    assert as_int.min_time_s == 1.0 and type(as_int.max_warmup_s) is float
    assert as_int.settings_fingerprint() == as_float.settings_fingerprint()
    # so the default CPU report (max_warmup_s: 5) resumes into files the notebook's defaults wrote
    report_profile = load_config(Path(__file__).resolve().parent.parent / "parameters" / "cpu-report.yaml")
    assert report_profile.settings_fingerprint() == BenchConfig(device="cpu").settings_fingerprint()


def test_dynamic_setting_and_studies_from_yaml(tmp_path):
    cfg = load_config(write(tmp_path, GOOD + "dynamic: auto\nserving_batch_sizes: [1, 4, 16, 3, 7, 4]\n"
                                             "startup: true\n"))
    assert cfg.compile_dynamic() is None and cfg.serving_batch_sizes == (1, 4, 16, 3, 7, 4)
    assert cfg.startup and cfg.compiled_configuration().name == "default"
    assert load_config(write(tmp_path, GOOD + "dynamic: true\n")).compile_dynamic() is True
    assert BenchConfig().compile_dynamic() is False


@pytest.mark.parametrize("text, message", [
    ("", "the file is empty"),
    ("label: [unclosed", "not valid YAML"),
    ("- just\n- a list\n", "expected a mapping"),
    ("models: [vit]\nbatch_sizes: [1]\nconfigurations: [eager]\n", "missing required key 'label'"),
    (GOOD + "colour: blue\n", "colour: 'blue' is not allowed; allowed: keys label"),
    (GOOD.replace("[vit, resnet]", "[vit, gpt2]"), "models: 'gpt2' is not allowed; allowed: vit, beit"),
    (GOOD.replace("[eager, default]", "[eager, turbo]"), "configurations: 'turbo': 'turbo' is not a mode; allowed: "),
    (GOOD.replace("[eager, default]", "[eager, default+fast]"), "'default+fast': 'fast' is not a modifier"),
    (GOOD.replace("[eager, default]", "[eager, eager+freezing]"), "'eager+freezing': freezing needs a compile mode"),
    (GOOD.replace("[eager, default]", "[default]"), "a list that includes eager (the float32 baseline"),
    (GOOD.replace("configurations: [eager, default]", "modes: [eager, default]"),
     "modes: replaced by configurations (e.g. [eager, default, reduce-overhead])"),
    (GOOD.replace("[1, 4]", "[0, 4]"), "batch_sizes: 0 is not allowed; allowed: integers >= 1"),
    (GOOD.replace("[1, 4]", "[-2]"), "batch_sizes: -2 is not allowed"),
    (GOOD.replace("[1, 4]", "['one']"), "batch_sizes: ['one'] is not allowed; allowed: a list of int"),
    (GOOD.replace("iterations: 10", "iterations: 0"), "iterations: 0 is not allowed"),
    (GOOD.replace("iterations: 10", "iterations: ten"), "iterations: 'ten' is not allowed"),
    (GOOD + "fullgraph: maybe\n", "fullgraph: 'maybe' is not allowed; allowed: true or false"),
    (GOOD + "dtype: float64\n", "dtype: replaced by configurations (e.g. default+bf16-autocast)"),
    (GOOD + "worthwhile: 0.9\n", "worthwhile: 0.9 is not allowed; allowed: a finite number from 1 to 100"),
    (GOOD + "timeout_s: -1\n", "timeout_s: -1 is not allowed"),
    (GOOD + "image: /no/such/file.jpg\n", "image: '/no/such/file.jpg' is not allowed; allowed: an existing image file"),
    (GOOD + "weights: pretrained\n", "weights: 'pretrained' is not allowed; allowed: auto or random with size 'tiny'"),
    (GOOD.replace("[vit, resnet]", "[vit, vit]"), "a list without repeats"),
    (GOOD + "dynamic: sometimes\n", "dynamic: 'sometimes' is not allowed; allowed: false, true, auto"),
    (GOOD + "dynamic: 1\n", "dynamic: 1 is not allowed; allowed: false, true, auto"),
    (GOOD + "profiler: yes please\n", "profiler: 'yes please' is not allowed; allowed: true or false"),
    (GOOD + "profile: false\n", "profile: replaced by profiler (true or false: the torch.profiler pass after timing)"),
    (GOOD + "serving_batch_sizes: [4, 4]\n", "serving_batch_sizes: [4, 4] is not allowed; allowed: at least two"),
    (GOOD + "serving_batch_sizes: [1, 0]\n", "serving_batch_sizes: 0 is not allowed; allowed: integers >= 1"),
    (GOOD + "compile_strategies: [regional]\n", "compile_strategies: replaced by configurations (e.g. default+regional"),
    (GOOD + "blocks: 0\n", "blocks: 0 is not allowed; allowed: an integer from 1 to 1,000"),
    (GOOD + "blocks: 2.5\n", "blocks: 2.5 is not allowed; allowed: an integer from 1 to 1,000"),
    (GOOD + "max_repeats: 0\n", "max_repeats: 0 is not allowed; allowed: an integer from 1 to 100"),
    (GOOD + "settle_s: -1\n", "settle_s: -1 is not allowed; allowed: a finite number of seconds >= 0"),
    (GOOD + "budget_min: -1\n", "budget_min: -1 is not allowed; allowed: a finite number from 0 to 10080 (minutes per profile)"),
    (GOOD + "budget_min: .inf\n", "budget_min: inf is not allowed; allowed: a finite number from 0 to 10080"),
    (GOOD + "target_halfwidth: 1\n", "target_halfwidth: 1 is not allowed; allowed: a finite number from 0 to 0.99 (fraction of the speedup)"),
    (GOOD + "target_halfwidth: -0.1\n", "target_halfwidth: -0.1 is not allowed; allowed: a finite number from 0 to 0.99"),
    (GOOD + "target_halfwidth: .nan\n", "target_halfwidth: nan is not allowed; allowed: a finite number from 0 to 0.99"),
])
def test_bad_files_give_one_line_naming_the_problem(tmp_path, text, message):
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_image_that_is_not_an_image(tmp_path):
    fake = write(tmp_path, "not a picture", "photo.jpg")
    with pytest.raises(ConfigError, match="this file is not an image"):
        load_config(write(tmp_path, GOOD + f"image: {fake}\n"))


def test_missing_file_and_lone_values():
    with pytest.raises(ConfigError, match="parameters file not found"):
        load_config("/no/such/params.yaml")
    cfg = config_from_dict({"models": "vit", "batch_sizes": 2, "configurations": "eager"})
    assert cfg.models == ("vit",) and cfg.batch_sizes == (2,)


def test_only_the_measure_package_imports_torch():
    # every module of config/, sweep/, results/ and report/ (and the top-level helpers) imports without
    # torch: a bad parameters file fails fast and a report builds on a machine without a GPU stack
    import subprocess
    import sys

    code = ("import importlib, pkgutil, sys, bench_utils\n"
            "for package in ('config', 'sweep', 'results', 'report'):\n"
            "    pkg = importlib.import_module('bench_utils.' + package)\n"
            "    for info in pkgutil.iter_modules(pkg.__path__):\n"
            "        importlib.import_module(f'bench_utils.{package}.{info.name}')\n"
            "import bench_utils.paths, bench_utils.messages\n"
            "print(len([m for m in sys.modules if m.startswith('bench_utils.')]), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    count, torch_loaded = out.stdout.split()
    assert int(count) >= 30 and torch_loaded == "False", out.stderr


@pytest.mark.parametrize("value, shown", [(".nan", "nan"), (".inf", "inf")])
def test_timeout_that_is_not_a_finite_number_is_refused(tmp_path, value, shown):
    # subprocess.wait(timeout=nan) never times out: a hung cell would hang the sweep
    with pytest.raises(ConfigError, match=f"timeout_s: {shown} is not allowed; allowed: a finite number"):
        load_config(write(tmp_path, GOOD + f"timeout_s: {value}\n"))


def test_configurations_are_a_mode_and_its_modifiers_declared_once():
    from bench_utils.config.configurations import configuration

    frozen = configuration("max-autotune-no-cudagraphs+freezing")
    assert (frozen.mode, frozen.precision, frozen.channels_last, frozen.compiled) == (
        "max-autotune-no-cudagraphs", "float32", False, True)
    # the mode goes to torch.compile; freezing is a global Inductor setting (dynamo reads it while
    # tracing, before torch.compile(options=...) would apply it)
    assert frozen.compile_options() == {"mode": "max-autotune-no-cudagraphs"}
    assert frozen.inductor_settings == {"freezing": True}
    assert configuration("default").compile_options() == {"mode": "default"}
    bf16 = configuration("eager+bf16-autocast")
    assert (bf16.compiled, bf16.precision, bf16.needs, bf16.words) == (False, "bfloat16", ("bf16",),
                                                                       "eager in bfloat16 autocast")
    assert configuration("reduce-overhead+fp16-autocast+channels-last").devices == ("cuda",)
    assert configuration("default+channels-last").devices == ("cpu", "cuda")
    assert configuration("default+freezing").compile_cost > configuration("default").compile_cost
    for bad in ("default+freezing+freezing", "default+channels-last+freezing", "eager+bf16-autocast+fp16-autocast"):
        with pytest.raises(ValueError):
            configuration(bad)
    # a form compiled ahead of time: its Inductor options go to the package's build; float32 and the
    # default layout only (it is exported as eager float32 runs)
    package = configuration("aot-inductor+freezing")
    assert (package.compiled, package.packaged, package.words) == (True, True, "an AOTInductor package with freezing")
    assert package.compile_options() == {"inductor_configs": {"freezing": True}}
    assert not configuration("default").packaged and configuration("aot-inductor").devices == ("cpu", "cuda")
    for bad in ("aot-inductor+bf16-autocast", "aot-inductor+channels-last", "aot-inductor+twin"):
        with pytest.raises(ValueError, match="aot-inductor takes Inductor options only"):
            configuration(bad)
    # a retired key says what replaced it, in one line
    with pytest.raises(ConfigError, match="^cold_compile: replaced by a compiler cache of each cell's own"):
        config_from_dict({"cold_compile": True})


def test_profiles_of_one_command_each_need_a_results_folder_of_their_own():
    from bench_utils.config.validation import check_distinct_folders

    first, second = BenchConfig(label="Lab A"), BenchConfig(label="lab-a")
    check_distinct_folders([first, BenchConfig(label="Lab B")], ["a.yaml", "b.yaml"])
    with pytest.raises(ConfigError, match="^label 'lab-a' of b.yaml uses the results folder 'lab-a' of a.yaml; "
                                          "give each profile a label of its own$"):
        check_distinct_folders([first, second], ["a.yaml", "b.yaml"])


def test_a_renamed_key_is_one_line_naming_the_new_one_and_exit_2(tmp_path):
    from conftest import one_error_line, run_cli

    params = write(tmp_path, GOOD + "profile: true\n")
    line = one_error_line(run_cli("plan", params, timeout=120))
    assert line == (f"error: {params}: profile: replaced by profiler (true or false: the torch.profiler pass "
                    "after timing)")
