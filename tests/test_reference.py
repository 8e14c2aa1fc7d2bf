import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import make_row

from bench_utils.config.registry import MODEL_NAMES
from bench_utils.results.aggregate import to_dataframe
from bench_utils.results.reference import compare_with_reference, load_reference, reference_path

REPO = Path(__file__).resolve().parent.parent
GUIDE = REPO.parent / "shared" / "reference" / "perf_torch_compile.zh.md"  # CI: shared/ beside the clone
needs_guide = pytest.mark.skipif(not GUIDE.is_file(), reason=f"{GUIDE} absent (shared/ is not beside the repo)")
# 3 GPUs x (12 + 11 + 11) main rows (no OwlViT at batch 4/16) + 3 x 6 nightly + 2 x 8 reduce-overhead
TABLE_ROWS = 3 * 34 + 18 + 16


def cell(ref, study, gpu, model, batch_size):
    hit = ref[(ref.study == study) & (ref.gpu == gpu) & (ref.model == model) & (ref.batch_size == batch_size)]
    assert len(hit) == 1
    return hit.iloc[0]


def test_published_values_are_parsed():
    ref = load_reference()
    vit = cell(ref, "torch 2.0.1", "A100", "vit", 1)
    assert (vit.eager_ms, vit.compiled_ms, vit.status, vit["mode"]) == (9.325, 7.584, "ok", "default")
    detr = cell(ref, "torch 2.0.1", "V100", "detr", 16)
    assert detr.status == "oom" and math.isnan(detr.eager_ms) and math.isnan(detr.compiled_ms)
    resnet = cell(ref, "nightly 2.1.0dev reduce-overhead", "T4", "resnet", 4)
    assert (resnet.eager_ms, resnet.compiled_ms, resnet["mode"]) == (15.215, 13.871, "reduce-overhead")
    assert cell(ref, "torch 2.0.1", "A100", "detr-resnet-101", 1).eager_ms == 36.276
    assert cell(ref, "torch 2.0.1", "T4", "deeplabv3-mobilenet", 16).compiled_ms == 201.942
    assert cell(ref, "nightly 2.1.0dev", "V100", "beit", 1).eager_ms == 13.477  # heading "###<NBSP>V100"


def test_shape_dtypes_and_names():
    ref = load_reference()
    assert len(ref) == TABLE_ROWS
    assert list(ref.columns) == ["study", "gpu", "model", "batch_size", "mode", "eager_ms", "compiled_ms",
                                 "status", "note"]
    assert ref.batch_size.dtype == "int64" and ref.eager_ms.dtype == "float64"
    assert set(ref.model) <= set(MODEL_NAMES) and set(ref.gpu) == {"A100", "V100", "T4"}
    assert set(ref.batch_size) == {1, 4, 16} and set(ref.status) == {"ok", "oom"}
    assert ref.groupby("study").size().to_dict() == {
        "torch 2.0.1": 102, "nightly 2.1.0dev": 18, "nightly 2.1.0dev reduce-overhead": 16}
    assert len(ref[ref.status == "oom"]) == 4
    assert not ref.duplicated(["study", "gpu", "model", "batch_size"]).any()
    assert ref[ref.model == "owlvit"].batch_size.unique().tolist() == [1]  # rows absent in the source


def test_duplicate_row_in_the_source_is_flagged():
    ref = load_reference()
    flagged = ref[ref.note.str.startswith("duplicate")]
    assert flagged[["study", "gpu", "model", "batch_size"]].values.tolist() == [
        ["nightly 2.1.0dev", "T4", "beit", 16]]
    a100 = cell(ref, "nightly 2.1.0dev", "A100", "beit", 16)
    assert (flagged.iloc[0].eager_ms, flagged.iloc[0].compiled_ms) == (a100.eager_ms, a100.compiled_ms)


def test_file_starts_with_source_comment():
    first = reference_path().read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# source: Hugging Face Transformers docs") and "(c) The HuggingFace Team" in first


@needs_guide
def test_row_count_equals_table_rows_in_the_markdown():
    lines = [line.strip() for line in GUIDE.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    data = [line for line in lines if "**Task/Model**" not in line and not set(line) <= set("|:- ")]
    assert len(data) == TABLE_ROWS == len(load_reference())


@needs_guide
def test_extract_script_reproduces_the_committed_csv(tmp_path):
    out = tmp_path / "ref.csv"
    script = REPO / "benchmarks" / "extract_reference.py"
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # the script imports bench_utils.registry
    subprocess.run([sys.executable, str(script), str(GUIDE), "--out", str(out)], check=True, env=env, cwd=REPO)
    assert out.read_bytes() == reference_path().read_bytes()


EAGER_MS = 10.0


def ours(model, batch_size, mode, speedup, status="ok"):
    """Our eager cell at 10 ms and a compiled cell `speedup` times faster (the speedup is derived)."""
    env = {"device_name": "NVIDIA H100", "torch": "2.5.1"}
    common = dict(model=model, batch_size=batch_size, label="H100", size="full", device="cuda", env=env)
    return [make_row(configuration="eager", ms=EAGER_MS, **common),
            make_row(configuration=mode, ms=EAGER_MS / speedup, status=status, **common)]


def test_compare_with_reference_one_gpu():
    df = to_dataframe([*ours("vit", 1, "default", 1.5), *ours("resnet", 4, "reduce-overhead", 2.0),
                       *ours("owlvit", 4, "default", 1.1), *ours("beit", 1, "default", 1.2, status="oom")])
    out = compare_with_reference(df)
    out = out[(out.gpu == "A100") | out.gpu.isna()].reset_index(drop=True)
    assert out[["model", "batch_size", "mode"]].values.tolist() == [  # no eager cells, no failed ones
        ["owlvit", 4, "default"], ["resnet", 4, "reduce-overhead"], ["vit", 1, "default"]]
    vit = out.iloc[2]
    assert (vit.gpu, vit.study, vit.race_speedup) == ("A100", "torch 2.0.1", pytest.approx(1.5))
    ours_vit = df[(df.model == "vit") & (df["mode"] == "default")].iloc[0]
    assert (vit.race_ci95_low, vit.race_ci95_high) == (ours_vit.race_ci95_low, ours_vit.race_ci95_high)
    assert vit.race_ci95_low == pytest.approx(1.5) == vit.race_ci95_high  # paired: every round 1.5x
    assert vit.eager_ms_median == EAGER_MS and vit.latency_ms_median == pytest.approx(EAGER_MS / 1.5)
    assert vit.ref_speedup == pytest.approx(9.325 / 7.584)
    assert vit.speedup_vs_ref == pytest.approx(1.5 / (9.325 / 7.584))
    assert vit.improvement_pct == pytest.approx(100 / 3)  # (10 - 10/1.5) / 10
    assert vit.ref_improvement_pct == pytest.approx((9.325 - 7.584) / 9.325 * 100)
    resnet = out.iloc[1]
    assert resnet.race_speedup == pytest.approx(2.0) and resnet.improvement_pct == pytest.approx(50.0)
    assert (resnet.study, resnet.ref_eager_ms, resnet.ref_compiled_ms) == (
        "nightly 2.1.0dev reduce-overhead", 7.261, 2.187)
    assert pd.isna(out.iloc[0].ref_speedup) and pd.isna(out.iloc[0].gpu)  # not published


def test_our_figure_beside_the_guide_is_the_race_figure_the_pages_show():
    # default recommended over default+freezing, its round 0 the luckier: the race lowers its figure for
    # the pick (results/race.py), and the guide comparison shows that lowered figure, as every table does
    env = {"device_name": "NVIDIA H100", "torch": "2.5.1"}
    common = dict(model="vit", batch_size=1, label="H100", size="full", device="cuda", env=env)
    rows = []
    for r, (plain, frozen) in enumerate(((1.8, 1.4), (1.5, 1.45), (1.5, 1.45), (1.5, 1.45), (1.5, 1.45))):
        rows += [make_row(configuration="eager", ms=EAGER_MS, repeat=r, **common),
                 make_row(configuration="default", ms=EAGER_MS / plain, repeat=r, **common),
                 make_row(configuration="default+freezing", ms=EAGER_MS / frozen, repeat=r, **common)]
    df = to_dataframe(rows)
    chosen = df[df["configuration"] == "default"].iloc[0]
    assert chosen["race_outcome"] == "recommended" and chosen["race_speedup"] < chosen["speedup"]
    vit = compare_with_reference(df).query("gpu == 'A100'").iloc[0]
    assert (vit.race_speedup, vit.race_ci95_low, vit.race_ci95_high) == pytest.approx(
        (chosen["race_speedup"], chosen["race_ci95_low"], chosen["race_ci95_high"]))


def test_compare_with_reference_all_gpus():
    df = to_dataframe([*ours("detr", 16, "default", 1.2), *ours("beit", 1, "default", 1.3)])
    out = compare_with_reference(df)
    detr = out[out.model == "detr"]
    assert detr.gpu.tolist() == ["A100", "V100", "T4"]  # the guide's order, as the summary's other tables
    assert detr.ref_status.tolist() == ["ok", "oom", "oom"] and detr.ref_speedup.isna().tolist() == [False, True, True]
    beit = out[out.model == "beit"]  # mode default: compared with the torch 2.0.1 tables on every GPU
    assert beit.gpu.tolist() == ["A100", "V100", "T4"] and set(beit.study) == {"torch 2.0.1"}
