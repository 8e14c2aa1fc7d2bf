"""The report command's pipeline (bench_utils/pipeline.py): which profiles a machine runs, the plan
before a long run, a refused sweep, a failed summary. The pages it builds: test_report.py."""

import argparse
import json

import pytest

from bench_utils import pipeline
from bench_utils.config.bench_config import ConfigError
from bench_utils.config.parameters_file import load_config
from conftest import REPO, tiny_params
from test_report import LONG_PROFILE


def test_default_profiles_follow_the_hardware(monkeypatch, capsys):
    monkeypatch.setattr(pipeline, "_cuda_device", lambda: None)
    assert [(p.name, label) for p, label in pipeline.default_runs(REPO)] == [("cpu-report.yaml", None)]
    for gpu, expected in ((("NVIDIA A100-SXM4-80GB", 79.2, (8, 0)), ("a100.yaml", None)),
                          (("Tesla T4", 14.6, (7, 5)), ("t4.yaml", None)),
                          (("NVIDIA H100 80GB HBM3", 79.1, (9, 0)), ("h100.yaml", None)),
                          (("NVIDIA H200", 139.8, (9, 0)), ("h100.yaml", "H200")),
                          (("NVIDIA L4", 22.0, (8, 9)), ("a100.yaml", "L4"))):  # not gpu.yaml's hours
        monkeypatch.setattr(pipeline, "_cuda_device", lambda gpu=gpu: gpu)
        assert [(p.name, label) for p, label in pipeline.default_runs(REPO)] == [expected]
    assert 'NVIDIA L4 (22 GB, compute capability 8.9): the A100 profile' in capsys.readouterr().err


def test_report_prints_the_plan_and_refuses_a_run_over_an_hour_without_allow_long(tmp_path, capsys):
    params = tmp_path / "long.yaml"
    params.write_text(LONG_PROFILE)
    cfg = load_config(params)
    results = tmp_path / "out" / "long" / "results.jsonl"
    with pytest.raises(ConfigError, match=r"long.yaml: plan estimates \d\.\d h to measure \(above\), more than "
                                          r"1 h: run again with --allow-long, or trim the profile$"):
        pipeline.check_duration([cfg], [params], [results], allow_long=False)
    assert capsys.readouterr().out.startswith(f"{params}: long: 2 models x 2 configurations")  # the plan, then the refusal
    pipeline.check_duration([cfg], [params], [results], allow_long=True)  # asked for: no refusal
    short = load_config(tiny_params(tmp_path))
    pipeline.check_duration([short], [params], [results], allow_long=False)


def test_a_refused_sweep_keeps_the_page_it_had(tmp_path, monkeypatch):
    params = tiny_params(tmp_path, label="Locked")
    page = tmp_path / "out" / "locked" / "report.html"
    page.parent.mkdir(parents=True)
    page.write_text("<p>complete</p>")
    refusal = f"ResultsLockedError: {page.parent}/results.jsonl is being written by process 42"
    monkeypatch.setattr(pipeline, "measure_profile", lambda cfg, params, results, sweep: refusal)
    outcome = pipeline.run_profile(params, tmp_path / "out", 300, True, load_config(params))
    assert outcome.error == refusal and page.read_text() == "<p>complete</p>"
    state = json.loads((page.parent / "profile.json").read_text())
    assert state["error"] == "ResultsLockedError: results.jsonl is being written by process 42"


def test_a_failed_summary_says_so_on_the_terminal_and_exits_1(tmp_path, monkeypatch, capsys):
    params = tiny_params(tmp_path)
    outcome = pipeline.ProfileOutcome(load_config(params), tmp_path / "out" / "test" / "report.html",
                                      tmp_path / "out" / "test" / "results.jsonl")
    monkeypatch.setattr(pipeline, "run_profile", lambda *args, **kwargs: outcome)
    monkeypatch.setattr(pipeline, "build_summary", lambda out, timeout: (out / "summary.html", "notebook step 3: KeyError: 'x'"))
    args = argparse.Namespace(params=[params], out=str(tmp_path / "out"), report_only=False,
                              notebook_timeout=60, compare=None, allow_long=False)
    assert pipeline.main(args) == 1
    assert "[report] summary: FAILED (notebook step 3: KeyError: 'x')" in capsys.readouterr().out


def test_report_measures_with_runs_options(tmp_path, monkeypatch):
    from bench_utils.sweep import loop

    asked = {}

    class Summary:
        def line(self):
            return "measured"

    def run_sweep(cfg, results, retry_failed=False, progress=True):
        asked.update(results=results, retry_failed=retry_failed, progress=progress)
        return Summary()

    monkeypatch.setattr(loop, "run_sweep", run_sweep)
    params = tiny_params(tmp_path)
    results = tmp_path / "elsewhere" / "results.jsonl"
    assert pipeline.measure_profile(load_config(params), params, results, pipeline.Sweep(True, False)) == ""
    assert asked == {"results": results, "retry_failed": True, "progress": False}


def test_report_with_results_writes_the_page_beside_that_file_and_takes_one_profile(tmp_path, monkeypatch):
    made = []
    monkeypatch.setattr(pipeline, "run_profile", lambda *args: made.append(args) or pipeline.ProfileOutcome(
        args[4], tmp_path / "page.html", tmp_path / "r.jsonl"))
    monkeypatch.setattr(pipeline, "build_summary", lambda out, timeout: (out / "summary.html", ""))
    monkeypatch.setattr(pipeline, "ready_here", lambda configs, why: configs)
    monkeypatch.setattr(pipeline, "check_duration", lambda *args: None)
    params, named = tiny_params(tmp_path), tmp_path / "elsewhere" / "mine.jsonl"
    args = argparse.Namespace(params=[params], out=str(tmp_path / "out"), report_only=False, notebook_timeout=60,
                              compare=None, allow_long=False, results=str(named), retry_failed=True, quiet=True)
    assert pipeline.main(args) == 0
    assert made[0][5:] == (str(named), pipeline.Sweep(retry_failed=True, progress=False))
    assert pipeline.profile_results(load_config(params), tmp_path / "out", named) == named.resolve()
    with pytest.raises(ConfigError, match="--results names one file: give one parameters file with it"):
        pipeline.main(argparse.Namespace(**(vars(args) | {"params": [params, tiny_params(tmp_path, "b.yaml", label="b")]})))
