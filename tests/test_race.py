"""bench_utils.race (bench_utils/explore/): a model the caller holds, raced by the engine. A bad argument is
one line before any process starts; a race measures eager and a compiled configuration with intervals and
an answer, resumes in its folder, saves as a report the usual pipeline re-renders; the stop button (SIGINT)
ends every measuring process and keeps the rounds measured."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import types
import uuid
from pathlib import Path

import pytest
import torch

import bench_utils
from bench_utils.config.validation import ConfigError
from bench_utils.results.rows import read_results
from conftest import REPO

# a race's fastest settings: these tests check behaviour, not figures
QUICK = dict(budget_min=0.2, min_time_s=0.2, max_warmup_s=0.2, warmup=1, repeats=2, blocks=2, settle_s=0.05,
             configurations=["eager", "default"], progress=False)


def notebook_net():
    """A small convolutional module whose class is defined as in a notebook (in __main__)."""

    def init(self):
        torch.nn.Module.__init__(self)
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.head(torch.relu(self.conv(x)).mean((2, 3)))

    cls = types.new_class("SmallNet", (torch.nn.Module,), exec_body=lambda ns: ns.update(
        __init__=init, forward=forward, __module__="__main__"))
    torch.manual_seed(0)
    return cls()


class Locked(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)
        self.lock = threading.Lock()  # nothing pickles a lock

    def forward(self, x):
        return self.linear(x)


class Counting(torch.nn.Module):
    def forward(self, x):
        return x.argmax(-1)  # integers only: nothing to compare a compiled answer with


@pytest.mark.parametrize("model, example_inputs, line", [
    ([1, 2], torch.ones(1), r"^model: a list is not a torch.nn.Module; allowed: a module"),
    (torch.nn.Linear(2, 2), "x", r"^example_inputs: a str is not allowed; allowed: a tensor, a tuple"),
    (torch.nn.Linear(2, 2), (3,), r"^example_inputs: no tensor among them"),
    (torch.nn.Linear(2, 2), torch.ones(1, 3), r"^model: cannot be called with example_inputs as given: RuntimeError: "
                                              r"mat1 and mat2 shapes cannot be multiplied"),
    (Locked(), torch.ones(1, 2), r"^model: cannot be written for the measuring processes \(cloudpickle\): TypeError: "
                                 r"cannot pickle '_thread.lock' object$"),
    (Counting(), torch.ones(1, 2), r"^model: returned a Tensor holding no floating-point tensor"),
    (torch.compile(torch.nn.Linear(2, 2)), torch.ones(1, 2), r"^model: already compiled by torch.compile"),
])
def test_a_bad_argument_is_one_line_before_anything_is_written(tmp_path, model, example_inputs, line):
    with pytest.raises(ConfigError, match=line) as refused:
        bench_utils.race(model, example_inputs, folder=tmp_path / "race", progress=False)
    assert "\n" not in str(refused.value) and not (tmp_path / "race").exists()


@pytest.mark.parametrize("settings, line", [
    ({"models": ["vit"]}, r"^models: set by the race itself"),
    ({"worthwhile": "a lot"}, r"^worthwhile: 'a lot' is not allowed"),
    ({"configurations": ["default"]}, r"^configurations: .*eager"),
    ({"device": "tpu"}, r"^device: 'tpu' is not allowed; allowed: auto, cpu, cuda"),
    ({"name": "../up"}, r"^name: '../up' is not allowed"),
])
def test_a_bad_setting_is_one_line_before_the_model_is_written(tmp_path, settings, line):
    with pytest.raises(ConfigError, match=line):
        bench_utils.race(torch.nn.Linear(2, 2), torch.ones(1, 2), folder=tmp_path / "race", **settings)
    assert not (tmp_path / "race").exists()


def test_the_users_model_is_left_as_it_was(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.5)).train()
    before = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    with pytest.raises(ConfigError):  # stops after the checks: a setting the config refuses
        bench_utils.race(model, torch.ones(1, 2), folder=tmp_path / "race", warmup=-1)
    from bench_utils.explore.arguments import checked

    checked(model, torch.ones(1, 2))
    assert all(module.training for module in model.modules())
    assert all(torch.equal(before[name], tensor) for name, tensor in model.state_dict().items())


def test_a_race_answers_resumes_and_saves_as_a_report(tmp_path):
    folder = tmp_path / "race"
    answer = bench_utils.race(notebook_net(), torch.randn(2, 3, 16, 16), folder=folder, **QUICK)
    frame = answer.frame
    assert list(frame.index) == ["eager", "default"] and (frame["status"] == "ok").all()
    assert frame.loc["default", "race_rounds"] >= 2
    assert frame.loc["default", "race_ci95_low"] < frame.loc["default", "race_speedup"] < frame.loc[
        "default", "race_ci95_high"]
    assert frame.loc["default", "compile_s"] > 0 and frame.loc["default", "accuracy_ok"]
    assert answer.verdict["verdict"].iloc[0] in ("compile", "no_gain", "slower", "cant_tell", "use")
    html = answer._repr_html_()
    assert "Should you compile?" in html and "SmallNet" in html and not answer.interrupted
    rows = len(read_results(answer.results_path).rows)
    other = bench_utils.race(notebook_net(), torch.ones(2, 3, 16, 16), folder=tmp_path / "other",
                             **QUICK | {"budget_min": 0.0, "repeats": 1})
    assert len(read_results(other.results_path).rows) == 2  # another folder: a race of its own
    resumed = bench_utils.race(notebook_net(), _same_inputs(answer), folder=folder, **QUICK)
    assert len(read_results(resumed.results_path).rows) == rows  # the same object, its budget spent: nothing new
    page = answer.save(tmp_path / "saved")
    assert page.is_file() and "Should you compile?" in page.read_text()
    saved = tmp_path / "saved" / answer.cfg.slug()
    again = subprocess.run([sys.executable, "-m", "bench_utils", "report", str(saved / "parameters.yaml"),
                            "--report-only", "--out", str(tmp_path / "saved")], capture_output=True, text=True,
                           timeout=600, cwd=REPO)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "warning" not in again.stderr  # the copy's rows are its own settings' (the object's digest)
    compared = subprocess.run([sys.executable, "-m", "bench_utils", "report", "--compare", str(answer.results_path),
                               str(saved / "results.jsonl"), "--out", str(tmp_path / "compare")], capture_output=True,
                              text=True, timeout=600, cwd=REPO)
    assert compared.returncode == 0 and (tmp_path / "compare" / "compare.html").is_file(), compared.stderr[-3000:]


def _same_inputs(answer):
    from bench_utils.measure import objects

    spec = answer.cfg.spec(answer.cfg.models[0])
    return objects.inputs(spec.checkpoint, 2, "cpu", torch.float32)["input_0"]


def test_another_object_in_a_races_folder_is_refused(tmp_path):
    folder = tmp_path / "race"
    bench_utils.race(notebook_net(), torch.ones(1, 3, 8, 8), folder=folder, **QUICK | {"budget_min": 0.0,
                                                                                      "repeats": 1})
    with pytest.raises(ConfigError, match=r"holds a race of another 'SmallNet' \(its class, weights or inputs differ"):
        bench_utils.race(notebook_net(), torch.zeros(1, 3, 8, 8), folder=folder, **QUICK)


RACE_SCRIPT = textwrap.dedent("""
    import json, sys, torch, bench_utils
    from multiprocessing import forkserver, resource_tracker
    from bench_utils.results.rows import read_results

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)

        def forward(self, x):
            return self.conv(x).relu().mean((2, 3))

    if __name__ == "__main__":
        answer = bench_utils.race(Net(), torch.randn(1, 3, 32, 32), folder=sys.argv[1], budget_min=5, min_time_s=2,
                                  repeats=8, configurations=["eager", "default"], progress=False)
        print(json.dumps({"interrupted": answer.interrupted, "rows": len(read_results(answer.results_path).rows),
                          "frame": len(answer.frame),
                          "helpers": [forkserver._forkserver._forkserver_pid, resource_tracker._resource_tracker._pid]}),
              flush=True)
        sys.stdin.read()  # alive (its fork server too) until the test has looked for processes left
""")


def marked_processes(marker: str) -> set[int]:
    """Processes whose environment holds `marker` (every process a race started inherits it)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "environ").read_bytes():
                found.add(int(entry.name))
        except OSError:  # ended meanwhile, or not ours to read
            pass
    return found


def test_the_stop_button_ends_every_measuring_process_and_keeps_the_rounds(tmp_path):
    marker = f"BENCH_RACE_TEST={uuid.uuid4().hex}"
    script = tmp_path / "race.py"
    script.write_text(RACE_SCRIPT)
    results = tmp_path / "race" / "net" / "results.jsonl"
    env = {**os.environ, marker.split("=")[0]: marker.split("=")[1]}
    race = subprocess.Popen([sys.executable, str(script), str(tmp_path / "race")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 400
        while not (results.is_file() and len(results.read_text().splitlines()) >= 2):  # round 0: eager and default
            assert race.poll() is None and time.monotonic() < deadline, race.stderr.read()[-3000:]
            time.sleep(0.5)
        time.sleep(2)  # into round 1: its processes forked and timing
        measuring = marked_processes(marker) - {race.pid}
        race.send_signal(signal.SIGINT)  # what the kernel's stop button sends
        lines = iter(race.stdout.readline, "")
        reply = json.loads(next((line for line in lines if line.startswith("{")), "{}"))
        assert reply.get("interrupted") is True, race.stderr.read()[-3000:]
        assert reply["rows"] >= 2 and reply["frame"] == 2  # eager and default of round 0 at least
        # multiprocessing's fork server and resource tracker serve the kernel as long as it lives
        left = marked_processes(marker) - {race.pid, *reply["helpers"]}
        assert len(measuring) >= 4 and left == set()  # the helpers, two workers and round 1's forks were there
    finally:
        race.communicate("", timeout=60)
    assert race.returncode == 0
