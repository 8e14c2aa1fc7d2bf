"""The page header: run, machine with cores (GPU and its memory on CUDA), versions, date, weights."""

from bench_utils.report.header import page_header
from bench_utils.results.aggregate import to_dataframe
from conftest import FIXTURE_ENV, make_row


def test_cpu_header_names_the_machine_its_cores_and_the_versions():
    head = page_header(to_dataframe([make_row("vit", 1, "eager", 2.0)]))
    assert head.facts == ["CPU", "Fixture CPU (synthetic rows), 2 cores", "torch 2.fixture · transformers 5.fixture · "
                          "Python 3.11", "measured 2026-11-23", "random weights", "tiny test models"]
    assert head.title == " · ".join(head.facts)


def test_cuda_header_names_the_gpu_and_its_memory():
    env = FIXTURE_ENV | {"device": "cuda", "device_name": "NVIDIA H100 80GB HBM3", "gpu_memory_gb": 79.1,
                         "cpu_count": 16}
    head = page_header(to_dataframe([make_row("vit", 1, "eager", 2.0, env=env, device="cuda",
                                              weights="pretrained")]))
    assert head.hardware == "NVIDIA H100 80GB HBM3 (79.1 GB), 16 CPU cores"
    assert head.weights == "pretrained weights"


def test_a_run_without_rows_still_has_a_header():
    head = page_header(to_dataframe([]), "CPU")
    assert head.label == "CPU" and head.weights == "weights —"


def test_a_run_pinned_to_one_core_says_one_core():
    env = FIXTURE_ENV | {"cpu_count": 1}
    head = page_header(to_dataframe([make_row("vit", 1, "eager", 2.0, env=env)]))
    assert head.hardware == "Fixture CPU (synthetic rows), 1 core"


def test_the_size_is_said_for_tiny_models_only():
    full = page_header(to_dataframe([make_row("vit", 1, "eager", 2.0, size="full")]))
    assert full.size == "" and len(full.facts) == 5
    mixed = page_header(to_dataframe([make_row("vit", 1, "eager", 2.0, size="full"),
                                      make_row("resnet", 1, "eager", 2.0)]))
    assert mixed.size == "tiny test models for 1 of 2 models"


def test_a_notebooks_object_has_its_own_weights_not_pretrained_ones():
    from bench_utils.report.header import weights_words

    rows = [make_row(configuration=name, weights="own") for name in ("eager", "default")]
    assert weights_words(to_dataframe(rows)) == "the notebook's own weights"
