"""What a profile asks to measure, as jobs and rounds, and which of them a results file still lacks
(bench_utils/sweep/jobs.py). No torch, no process: rows are written by hand."""

import dataclasses

import pytest

from bench_utils.config.bench_config import BenchConfig
from bench_utils.results.rows import BenchResult, cell_fields
from bench_utils.studies.serving import SETTINGS as SERVING_SETTINGS, STUDY as SERVING, ServingResult
from bench_utils.results.writer import ResultsWriter
from bench_utils.sweep.jobs import (Job, Round, SettingsMismatchError, done_keys, first_rounds, job_row,
                                    pending_study_jobs, read_cell_rows, round_pending, study_jobs)

CFG = BenchConfig(label="test", models=("vit", "resnet"), batch_sizes=(1, 4), configurations=("eager", "default"), repeats=2)


def row(cfg, model, batch_size, mode, repeat=0, status="ok"):
    """A row of `cfg`'s cell; an ok one with its samples (an ok row without any is not believed)."""
    samples = dict(samples_s=[0.002] * cfg.iterations, block_lengths=[cfg.iterations]) if status == "ok" else {}
    return BenchResult(**cell_fields(cfg, model, batch_size, mode, "cpu", repeat), status=status, **samples)


def test_names_as_people_read_them_and_logs_are_named():
    assert Job("cell", "vit", 1, "default", 2).name == "vit-bs1-default-r2"
    assert Job("serving", "vit", 1, "auto").name == "serving-vit-auto"
    round_ = Round("vit", 4, 1, ("eager", "default", "max-autotune"))
    assert round_.name == "vit-bs4-r1" and round_.group == ("vit", 4)
    assert round_.jobs == [Job("cell", "vit", 4, "eager", 1), Job("cell", "vit", 4, "default", 1),
                           Job("cell", "vit", 4, "max-autotune", 1)]  # one worker per mode, eager first


def test_first_rounds_are_round_major_so_a_cells_rounds_spread_over_the_run():
    rounds = first_rounds(CFG)
    assert [(r.model, r.batch_size, r.repeat) for r in rounds] == [
        ("vit", 1, 0), ("vit", 4, 0), ("resnet", 1, 0), ("resnet", 4, 0),
        ("vit", 1, 1), ("vit", 4, 1), ("resnet", 1, 1), ("resnet", 4, 1)]
    assert all(r.configurations == ("eager", "default") for r in rounds)
    # the same processes as the config's runs, grouped by round
    assert [(j.model, j.batch_size, j.option, j.repeat) for r in rounds for j in r.jobs] == CFG.runs()


def test_study_jobs_in_each_studys_order():
    assert study_jobs(CFG) == []  # no studies asked for
    cfg = BenchConfig(models=("vit", "resnet"), batch_sizes=(4, 1), serving_batch_sizes=(2, 8, 3))
    jobs = study_jobs(cfg)
    assert [(j.kind, j.model, j.batch_size, j.option) for j in jobs] == [
        *[("serving", "vit", 2, s) for s in SERVING_SETTINGS], *[("serving", "resnet", 2, s) for s in SERVING_SETTINGS]]


def test_a_round_is_pending_until_every_mode_has_its_row(tmp_path):
    path = tmp_path / "results.jsonl"
    assert read_cell_rows(CFG, path) == []  # no file yet: nothing done
    with ResultsWriter(path) as writer:
        writer.append(row(CFG, "vit", 1, "eager"))
        writer.append(row(CFG, "vit", 1, "default", status="crashed"))
        writer.append(row(CFG, "vit", 4, "eager"))  # its compiled mode is missing (a kill mid-round)
    rows = read_cell_rows(CFG, path)
    assert len(rows) == 3
    done = done_keys(rows)
    pending = [r.name for r in first_rounds(CFG) if round_pending(CFG, r, done)]
    assert pending == ["vit-bs4-r0", "resnet-bs1-r0", "resnet-bs4-r0", "vit-bs1-r1", "vit-bs4-r1",
                       "resnet-bs1-r1", "resnet-bs4-r1"]  # vit bs1 round 0 is done, its crash included
    retry = done_keys(rows, retry_failed=True)  # only the ok rows count as done: the crash is measured again
    assert len(retry) == 2 and round_pending(CFG, first_rounds(CFG)[0], retry)


def test_rows_of_other_settings_are_refused(tmp_path):
    path = tmp_path / "results.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(row(CFG, "vit", 1, "eager"))
    # the matrix, repeats and precision target may change between runs; a setting of the measurement may not
    assert len(read_cell_rows(BenchConfig(label="test", models=("beit",), repeats=5, target_halfwidth=0.05), path)) == 1
    with pytest.raises(SettingsMismatchError, match="other settings"):
        read_cell_rows(BenchConfig(label="test", blocks=3), path)
    # the refusal names what differs where the rows record it, else the settings only their fingerprint holds
    with pytest.raises(SettingsMismatchError, match=r"\(iterations 8 there, 9 here\); choose another --results file"):
        read_cell_rows(BenchConfig(label="test", iterations=9), path)
    with pytest.raises(SettingsMismatchError, match=r"\(one of device, weights, max_warmup_s, blocks, settle_s, .*"
                                                    r"keep_freed_memory differs: rows keep those in a fingerprint only\)"):
        read_cell_rows(BenchConfig(label="test", device="cpu", settle_s=0.5), path)
    with pytest.raises(SettingsMismatchError, match=r"\(one of device, weights, .*differs"):  # auto: the row's is resolved
        read_cell_rows(BenchConfig(label="test", device="auto", settle_s=0.5), path)


def test_pending_study_jobs_leave_out_the_processes_the_study_file_holds(tmp_path):
    cfg = BenchConfig(models=("vit",), serving_batch_sizes=(1, 4))
    results = tmp_path / "results.jsonl"
    assert pending_study_jobs(cfg, results) == study_jobs(cfg)
    with ResultsWriter(SERVING.path(results)) as writer:
        writer.append(ServingResult(**SERVING.identity(cfg, "vit", "static", "cpu"), status="crashed"))
        other = BenchConfig(models=("vit",), serving_batch_sizes=(1, 4), iterations=7)  # other settings: not done
        writer.append(ServingResult(**SERVING.identity(other, "vit", "auto", "cpu"), status="ok"))
    with pytest.warns(UserWarning, match="different settings under one label; their rows are kept apart"):
        assert [j.option for j in pending_study_jobs(cfg, results)] == ["eager", "dynamic", "auto"]


def test_a_jobs_row_type_and_identity_give_the_key_its_row_is_found_by():
    from bench_utils.results.rows import run_key

    cfg = BenchConfig(models=("vit",), batch_sizes=(4,), serving_batch_sizes=(1, 4))
    row_type, identity = job_row(cfg, Job("cell", "vit", 4, "default", 2))
    assert row_type is BenchResult and identity == cell_fields(cfg, "vit", 4, "default", cfg.device, 2)
    assert row_type(**identity, status="crashed").key == run_key(cfg, ("vit", 4, "default", 2))
    row_type, identity = job_row(cfg, Job("serving", "vit", 1, "auto"))
    assert row_type is ServingResult and identity == SERVING.identity(cfg, "vit", "auto", cfg.device)


def test_fresh_workers_every_rounds_per_process_rounds_and_at_the_end_of_a_gpus_first_pass():
    from bench_utils.sweep.jobs import needs_fresh_workers, pair_start

    cfg = BenchConfig(repeats=3, rounds_per_process=4, device="cuda")
    # pair A: rounds 0-1; pair B from the first pass's last round (2) for 4 rounds; then C from 6
    assert [pair_start(cfg, r, 1) for r in range(3)] == [0, 0, 2]
    assert needs_fresh_workers(cfg, 0, None, 1) and not needs_fresh_workers(cfg, 1, 0, 1)
    assert needs_fresh_workers(cfg, 2, 0, 1)
    assert not needs_fresh_workers(cfg, 5, 2, 1) and needs_fresh_workers(cfg, 6, 2, 1)
    assert [pair_start(BenchConfig(repeats=1, device="cuda"), r, 1) for r in range(1)] == [0]  # one round: one pair
    assert [pair_start(BenchConfig(repeats=6, rounds_per_process=2, device="cuda"), r, 1) for r in range(6)] == [
        0, 0, 2, 2, 4, 5]
    # on a CPU each round forks a process of its own from the prepared one: fresh ones every rounds_per_process
    # rounds only (the warm compile is measured in a fork: measure/forked.py)
    cpu = BenchConfig(repeats=3, rounds_per_process=4, device="cpu")
    assert [pair_start(cpu, r, 1) for r in range(6)] == [0, 0, 0, 0, 4, 4]
    # where eager is timed beside every configuration, only a model's smallest batch size starts a fresh worker
    # at the first pass's end (its warm compile is the model's); the others measure the first pass in their first
    beside = BenchConfig(repeats=3, rounds_per_process=4, device="cuda", batch_sizes=(1, 4, 16),
                         configurations=("eager", "default"))
    assert [pair_start(beside, r, 1) for r in range(3)] == [0, 0, 2]
    assert [pair_start(beside, r, 16) for r in range(3)] == [0, 0, 0] and not needs_fresh_workers(beside, 2, 0, 4)
    apart = dataclasses.replace(beside, eager_in_process=False)  # eager's worker: every batch size's pair again
    assert [pair_start(apart, r, 16) for r in range(3)] == [0, 0, 2]

def test_a_later_round_cut_between_eager_and_its_contender_is_measured_again(tmp_path):
    """Killed after eager's row of round 1 and before the contender's: the round is pending, not lost."""
    path = tmp_path / "results.jsonl"
    with ResultsWriter(path) as writer:
        for name in ("eager", "default"):
            writer.append(row(CFG, "vit", 1, name))
        writer.append(row(CFG, "vit", 1, "eager", repeat=1))  # round 1: eager only
    rows = read_cell_rows(CFG, path)
    later = next(r for r in first_rounds(CFG) if r.name == "vit-bs1-r1")
    assert round_pending(CFG, later, done_keys(rows))
    with ResultsWriter(path) as writer:
        writer.append(row(CFG, "vit", 1, "default", repeat=1))
    assert not round_pending(CFG, later, done_keys(read_cell_rows(CFG, path)))


def test_eager_measures_later_rounds_unless_every_raced_configuration_times_it_beside():
    from bench_utils.sweep.jobs import eager_after_selection, later_round_configurations, profiled

    gpu = BenchConfig(configurations=("eager", "default", "reduce-overhead"), device="cuda", repeats=3)
    # on a GPU each compiled worker times eager beside its blocks (eager_in_process auto): eager's own worker
    # gives the eager row from the selection round, later rounds hold the contenders only
    assert not eager_after_selection(gpu)
    assert later_round_configurations(gpu, ["reduce-overhead", "eager"]) == ("reduce-overhead",)
    # ... and its profiler's pass is in round 0, the contenders' in round 1 (jobs.profiled)
    assert profiled(gpu, 1, 0, "eager") and not profiled(gpu, 1, 1, "eager")
    assert profiled(gpu, 1, 1, "default") and not profiled(gpu, 1, 0, "default")
    # a layout change or a package keeps eager's worker in the later rounds; so do a CPU and an eager-only profile
    for cfg in (BenchConfig(configurations=("eager", "default", "default+channels-last"), device="cuda"),
                BenchConfig(configurations=("eager", "default"), device="cuda", eager_in_process=False),
                BenchConfig(configurations=("eager", "default"), device="cpu"),
                BenchConfig(configurations=("eager",), device="cuda")):
        assert eager_after_selection(cfg), cfg.configurations
    cpu = BenchConfig(configurations=("eager", "default", "max-autotune"), device="cpu", repeats=3)
    assert later_round_configurations(cpu, ["max-autotune"]) == ("eager", "max-autotune")  # the profile's order
    assert profiled(cpu, 1, 1, "eager") and not profiled(cpu, 1, 0, "eager")


def test_a_later_round_without_eagers_worker_ran_when_a_contenders_row_is_there(tmp_path):
    cfg = BenchConfig(label="test", models=("vit",), batch_sizes=(1,), configurations=("eager", "default"), repeats=2,
                      device="cuda")
    path = tmp_path / "results.jsonl"
    with ResultsWriter(path) as writer:
        for name in ("eager", "default"):
            writer.append(row(cfg, "vit", 1, name))
    later = next(r for r in first_rounds(cfg) if r.repeat == 1)
    assert round_pending(cfg, later, done_keys(read_cell_rows(cfg, path)))
    with ResultsWriter(path) as writer:
        writer.append(row(cfg, "vit", 1, "default", repeat=1))  # eager's worker measured the selection round alone
    assert not round_pending(cfg, later, done_keys(read_cell_rows(cfg, path)))


def test_only_failures_a_retry_reopens_are_counted_as_retryable():
    from bench_utils.sweep.jobs import retryable_failures

    rows = [row(CFG, "vit", 1, "eager"), row(CFG, "vit", 1, "default", status="timeout"),  # round 0: reopened
            row(CFG, "vit", 1, "eager", repeat=1), row(CFG, "vit", 1, "default", repeat=1),
            row(CFG, "vit", 1, "eager", repeat=2), row(CFG, "vit", 1, "default", repeat=2, status="crashed")]
    # round 2 is an extra round (repeats 2): no re-run measures it again, --retry-failed included
    assert retryable_failures(CFG, rows) == 1
    assert retryable_failures(CFG, rows[:1] + rows[2:4]) == 0
