from bench_utils.report.provenance import run_facts, weights_notice
from bench_utils.results.aggregate import to_dataframe
from conftest import make_row

VIT = "Image Classification/ViT"


def row(model="vit", batch_size=1, mode="eager", ms=None, status="ok", **extra):
    env = {"device_name": "Test CPU", "torch": "2.9", "transformers": "4.50", "hostname": "h"}
    return make_row(model, batch_size, mode, ms, status, env=env, weights_note="offline", **extra)


def test_run_facts_and_weights_notice_make_random_weights_loud():
    df = to_dataframe([row("resnet", 1, "default", status="oom"), row("vit", 1, "eager", 10.0),
                       row("vit", 1, "default", 8.0), row("resnet", 2, "eager", 20.0)])
    facts = run_facts(df)
    assert list(facts.columns) == ["CPU"]
    assert facts.loc["hardware", "CPU"] == "Test CPU"
    assert facts.loc["torch", "CPU"] == "2.9"
    assert facts.loc["cells", "CPU"] == "3 ok, 1 failed"
    assert facts.loc["weights", "CPU"].startswith("RANDOM weights, not pretrained, for 2 of 2 loaded models: vit, resnet")
    assert facts.loc[f"weights: {VIT}", "CPU"] == "random (offline)"
    assert "RANDOM" in weights_notice(df)
    pretrained = to_dataframe([make_row(ms=1.0, weights="pretrained", weights_note="")])
    assert weights_notice(pretrained).startswith("**Pretrained weights**")
    assert run_facts(pretrained).loc["weights", "CPU"] == "pretrained (hub checkpoints)"


def test_an_empty_run_has_one_fact_and_says_so():
    empty = to_dataframe([])
    assert run_facts(empty).shape == (1, 1)
    assert weights_notice(empty).startswith("No measured cells")
