from bench_utils.report.provenance import run_facts
from bench_utils.results.aggregate import to_dataframe
from conftest import make_row

VIT = "ViT-B/16"


def row(model="vit", batch_size=1, configuration="eager", ms=None, status="ok", **extra):
    env = {"device_name": "Test CPU", "torch": "2.9", "transformers": "4.50", "hostname": "h"}
    return make_row(model, batch_size, configuration, ms, status, env=env, weights_note="offline", **extra)


def df_rows() -> list:
    return [row("resnet", 1, "default", status="oom"), row("vit", 1, "eager", 10.0),
            row("vit", 1, "default", 8.0), row("resnet", 2, "eager", 20.0)]


def test_run_facts_make_random_weights_loud():
    df = to_dataframe(df_rows())
    facts = run_facts(df)
    assert list(facts.columns) == ["CPU"]
    assert facts.index.name is None  # a named index shows as a stray header row ("fact") on the page
    assert facts.loc["hardware", "CPU"] == "Test CPU"
    assert facts.loc["torch", "CPU"] == "2.9"
    assert facts.loc["cells", "CPU"] == "3 ok, 1 failed"
    unsupported = row("vit", 1, "default+bf16-autocast", status="unsupported", error="no native bfloat16")
    assert run_facts(to_dataframe([*df_rows(), unsupported])).loc["cells", "CPU"] == (
        "3 ok, 1 not supported here, 1 failed")
    assert facts.loc["weights", "CPU"].startswith("RANDOM weights, not pretrained, for 2 of 2 loaded models: ViT-B/16, ResNet-50")
    assert facts.loc[f"weights: {VIT}", "CPU"] == "random (offline)"
    pretrained = to_dataframe([make_row(ms=1.0, weights="pretrained", weights_note="")])
    assert run_facts(pretrained).loc["weights", "CPU"] == "pretrained (hub checkpoints)"


def test_an_empty_run_has_one_fact_and_says_so():
    empty = to_dataframe([])
    assert run_facts(empty).shape == (1, 1)


def test_the_facts_say_where_eager_was_timed_for_the_speedups():
    from conftest import fixture_samples

    beside = dict(eager_samples_s=fixture_samples(10.0), eager_block_lengths=[5, 5])
    apart = [row("vit", 1, "eager", 10.0), row("vit", 1, "default", 8.0)]
    together = [row("vit", 1, "eager", 10.0), row("vit", 1, "default", 8.0, **beside)]
    mixed = [*together, row("vit", 1, "default+freezing", 7.0)]
    said = {name: run_facts(to_dataframe(rows)).loc["eager timed for the speedups", "CPU"]
            for name, rows in (("apart", apart), ("together", together), ("mixed", mixed))}
    assert said["apart"] == "in eager's own worker, its blocks and each configuration's worker's taking turns"
    assert said["together"] == ("in each configuration's own processes, its blocks and eager's taking turns "
                                "(eager_in_process)")
    assert said["mixed"].startswith("in each configuration's own processes") and "for 1 of 2 cells" in said["mixed"]


def test_the_facts_say_when_eagers_own_worker_measured_the_selection_round_alone():
    # jobs.eager_after_selection false (a GPU's eager_in_process): eager's worker gives the eager row from
    # round 0; the configurations' rounds after it time eager beside themselves
    from conftest import fixture_samples

    beside = dict(eager_samples_s=fixture_samples(10.0), eager_block_lengths=[5, 5])
    rows = [row("vit", 1, "eager", 10.0)] + [row("vit", 1, "default", 8.0, repeat=r, **beside) for r in range(3)]
    said = run_facts(to_dataframe(rows)).loc["eager timed for the speedups", "CPU"]
    assert said.endswith("(eager_in_process); eager's own worker, for the eager row alone, measured the selection "
                         "round")


def test_a_gpu_runs_facts_say_where_its_launching_threads_ran_and_its_sm_clock():
    gpu = {"device_name": "NVIDIA H200", "torch": "2.11", "transformers": "5.17", "hostname": "h"}

    def cuda_row(configuration, ms, **extra):
        return make_row("resnet", 1, configuration, ms, device="cuda", label="H200", env=gpu, **extra)

    rows = [cuda_row("eager", 4.0, block_cpus=[3, 3], block_sm_clock_mhz=[1980.0, 1965.0], pinned_cpu=3),
            cuda_row("default", 2.5, block_cpus=[5, 5], block_sm_clock_mhz=[1755.0], pinned_cpu=5)]
    facts = run_facts(to_dataframe(rows))
    assert facts.loc["the host while timing", "H200"] == (
        "each worker's launching thread pinned to the CPU it warmed up on (2 CPUs among the workers); GPU SM clock "
        "1,760–1,980 MHz at the blocks' ends (NVML)")
    no_nvml = [cuda_row("eager", 4.0, block_cpus=[3])]
    assert run_facts(to_dataframe(no_nvml)).loc["the host while timing", "H200"].endswith(
        "GPU SM clock not read (no pynvml)")
    assert "the host while timing" not in run_facts(to_dataframe([row("vit", 1, "eager", 10.0)])).index  # a CPU run
    older = [cuda_row("eager", 4.0)]  # measured before the host was recorded
    assert run_facts(to_dataframe(older)).loc["the host while timing", "H200"] == "not recorded by this run's version"
