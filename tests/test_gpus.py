"""Which profile a GPU gets, under which label, and how many cell groups' workers it holds
(config/gpus.py): pure rules on the facts torch reports."""

import pytest

from bench_utils.config.bench_config import BenchConfig
from bench_utils.config.gpus import choose_profile, fit_to_gpu, live_groups_for, short_name

# torch.cuda.get_device_properties(0): name, total_memory in GiB, (major, minor)
GPUS = [
    ("NVIDIA A100-SXM4-80GB", 79.2, (8, 0), "a100", None),
    ("NVIDIA A100-PCIE-40GB", 39.4, (8, 0), "a100", None),
    ("Tesla V100-SXM2-16GB", 15.8, (7, 0), "v100", None),
    ("Tesla T4", 14.6, (7, 5), "t4", None),
    ("NVIDIA H100 80GB HBM3", 79.1, (9, 0), "h100", None),
    ("NVIDIA H100 PCIe", 79.1, (9, 0), "h100", None),
    ("NVIDIA H200", 139.8, (9, 0), "h100", "H200"),
    ("NVIDIA GH200 480GB", 94.5, (9, 0), "h100", "GH200"),
    ("NVIDIA H800", 79.1, (9, 0), "h100", "H800"),
    ("NVIDIA A800-SXM4-80GB", 79.2, (8, 0), "a100", "A800"),
    ("NVIDIA A800 40GB Active", 39.4, (8, 0), "a100", "A800 Active"),
    ("NVIDIA L4", 22.0, (8, 9), "a100", "L4"),
    ("NVIDIA L40S", 44.4, (8, 9), "a100", "L40S"),
    ("NVIDIA A10G", 22.0, (8, 6), "a100", "A10G"),
    ("NVIDIA GeForce RTX 4090", 23.6, (8, 9), "a100", "RTX 4090"),
    ("NVIDIA B200", 178.4, (10, 0), "h100", "B200"),
    ("Quadro RTX 6000", 23.6, (7, 5), "v100", "RTX 6000"),
    # MIG slices: the slice's memory decides, under the slice's own name, never the card's profile
    ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", 9.8, (9, 0), "t4", "H100 MIG 1g.10gb"),
    ("NVIDIA A100-SXM4-40GB MIG 3g.20gb", 19.6, (8, 0), "t4", "A100 MIG 3g.20gb"),
    ("NVIDIA A100-SXM4-80GB MIG 7g.80gb", 79.2, (8, 0), "a100", "A100 MIG 7g.80gb"),
    ("NVIDIA H100 80GB HBM3 MIG 4g.40gb", 39.4, (9, 0), "a100", "H100 MIG 4g.40gb"),
    ("NVIDIA H100 80GB HBM3 MIG 7g.80gb", 79.1, (9, 0), "h100", "H100 MIG 7g.80gb"),
]


@pytest.mark.parametrize("name, memory_gb, capability, profile, label", GPUS)
def test_each_gpu_gets_the_profile_of_its_class_under_its_own_name(name, memory_gb, capability, profile, label):
    choice = choose_profile(name, memory_gb, capability)
    assert (choice.profile, choice.label) == (profile, label)
    assert choice.why.startswith(name) and "\n" not in choice.why
    assert choice.profile != "gpu"  # max-autotune's hours are never chosen for you


def test_a_label_is_the_name_without_vendor_memory_or_form_factor():
    assert short_name("NVIDIA H100 80GB HBM3 MIG 1g.10gb") == "H100 MIG 1g.10gb"
    assert short_name("NVIDIA A800-SXM4-80GB") == "A800" and short_name("Tesla T4") == "T4"
    assert short_name("NVIDIA") == "NVIDIA"  # nothing left: the name as it is


@pytest.mark.parametrize("memory_gb, groups", [(9.8, 1), (14.6, 1), (22.0, 1), (39.4, 2), (44.4, 2),
                                               (79.2, 4), (139.8, 7)])
def test_live_groups_follow_the_gpus_memory(memory_gb, groups):
    assert live_groups_for(memory_gb) == groups


def test_a_profile_keeps_fewer_groups_alive_on_a_small_gpu_and_never_more_than_it_asks():
    cfg = BenchConfig(label="T4", device="cuda", live_groups=4)
    small, note = fit_to_gpu(cfg, 14.6)
    assert small.live_groups == 1 and note == "T4: live_groups 4 -> 1 on a 15 GB GPU (docs/gpu.md)"
    assert small.settings_fingerprint() == cfg.settings_fingerprint()  # a run resumes across the change
    assert fit_to_gpu(cfg, 139.8) == (cfg, "")  # a big GPU does not raise what the profile asks
    assert fit_to_gpu(BenchConfig(label="c", device="cpu", live_groups=4), 14.6) == (
        BenchConfig(label="c", device="cpu", live_groups=4), "")


def test_run_and_report_fit_live_groups_to_the_gpu_they_find(monkeypatch, capsys):
    from bench_utils.measure import environment

    monkeypatch.setattr(environment, "gpu_facts", lambda: ("Tesla T4", 14.6, (7, 5)))
    monkeypatch.setattr(environment, "check_device_available", lambda configs: None)  # as if torch saw the T4
    cuda, cpu = BenchConfig(label="T4", device="cuda"), BenchConfig(label="c", device="cpu")
    assert [c.live_groups for c in environment.ready_here([cuda, cpu], "gpu")] == [1, 4]  # run's tag
    assert [c.live_groups for c in environment.ready_here([cuda], "report")] == [1]
    assert capsys.readouterr().err.splitlines() == ["[gpu] T4: live_groups 4 -> 1 on a 15 GB GPU (docs/gpu.md)",
                                                    "[report] T4: live_groups 4 -> 1 on a 15 GB GPU (docs/gpu.md)"]
    monkeypatch.setattr(environment, "gpu_facts", lambda: None)  # no GPU: as asked
    assert environment.ready_here([cuda], "gpu") == [cuda]
