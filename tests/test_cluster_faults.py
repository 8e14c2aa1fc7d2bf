"""The Ray launcher when its actors die: one killed mid-round (its measuring worker dies with it) is
restarted and the round measured again, each cell written once; one lost for good becomes one crashed
row that --retry-failed redoes; a node removed mid-round has its round measured again on another node.
The kills land at points the tests control: a cell that hangs (a test fault) until it is killed. Same
two-node local cluster as test_cluster.py (conftest.py).
"""

import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest

from bench_utils.config.parameters_file import load_config
from bench_utils.results.rows import read_results
from bench_utils.measure.injected_failures import ENV_VAR as FAULT, ONCE_DIR_VAR
from bench_utils.sweep.loop import run_sweeps_on_ray
from conftest import tiny_params


def _parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        pid = _parent(pid)
    return False


def _running_cell(folder: Path, under: int | None = None) -> tuple[int, int] | None:
    """(pid of the Ray worker, batch size) of a cell this test's cluster (or the Ray process `under`)
    is measuring: a measuring worker whose output goes to a cell's log under `folder`, forked by the
    fork server of a Ray worker."""
    for entry in Path("/proc").iterdir():
        try:
            log = os.readlink(entry / "fd" / "1") if entry.name.isdigit() else ""
            match = re.fullmatch(rf"{re.escape(str(folder))}/logs/.+-bs(\d+)-.+-r\d+\.log", log)
            if not match:
                continue
            worker = _parent(_parent(int(entry.name)))  # measuring worker <- fork server <- Ray worker
            is_ray_worker = Path(f"/proc/{worker}/cmdline").read_bytes().startswith(b"ray::")
            if is_ray_worker and _descends_from(worker, under or os.getpid()):
                return worker, int(match.group(1))
        except (OSError, IndexError, ValueError):  # a process that ended while we looked
            continue
    return None


def _kill_worker_of_a_hung_cell(results: Path, batch_size: int, timeout_s: float = 180) -> tuple:
    """SIGKILL the Ray worker (actor process) of the cell of `batch_size` once its log says it hangs
    (the test fault: it never ends by itself, so no row can race the kill); returns (worker pid, the
    results lines at the kill)."""
    log = results.parent / "logs" / f"vit-bs{batch_size}-eager-r0.log"
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        found = _running_cell(results.parent)
        if found and found[1] == batch_size and log.exists() and "injected fault: hang" in log.read_text():
            rows = results.read_text().splitlines() if results.exists() else []
            os.kill(found[0], signal.SIGKILL)
            return found[0], rows
        time.sleep(0.1)
    raise AssertionError(f"no hung cell of batch {batch_size} in a Ray worker appeared")


@pytest.mark.cluster
def test_worker_killed_mid_cell_is_retried_and_each_cell_written_once(cluster, tmp_path):
    cfg = load_config(tiny_params(tmp_path, label="A100", batch_sizes=[1, 2]))
    results, outcome = tmp_path / "results.jsonl", {}
    batch_size = 2  # its first attempt hangs until killed; the restarted actor measures it
    env = {FAULT: "vit/2/eager=hang-once", ONCE_DIR_VAR: str(tmp_path)}
    thread = threading.Thread(target=lambda: outcome.update(
        summaries=run_sweeps_on_ray([cfg], cluster.address, [results], progress=False, env=env)))
    thread.start()
    worker, _ = _kill_worker_of_a_hung_cell(results, batch_size)
    thread.join(timeout=300)
    rows = read_results(results).rows
    assert len(results.read_text().splitlines()) == 2
    assert sorted(r.batch_size for r in rows) == [1, 2] and {r.status for r in rows} == {"ok"}
    retried = next(r for r in rows if r.batch_size == batch_size)
    assert retried.env["ray_worker_pid"] != worker  # measured again by a new worker
    assert {r.env["ray_node_id"] for r in rows} == {cluster.a100}
    assert outcome["summaries"][0].line().startswith("2 rounds measured, 0 already done")


@pytest.mark.cluster
def test_worker_lost_for_good_becomes_one_crashed_row_then_retry_failed_redoes_it(cluster, tmp_path):
    cfg = load_config(tiny_params(tmp_path, label="T4", batch_sizes=[1, 2]))
    results = tmp_path / "results.jsonl"
    outcome = {}

    def sweep():
        try:
            outcome["summaries"] = run_sweeps_on_ray([cfg], cluster.address, [results], progress=False,
                                                     max_retries=0, env={FAULT: "vit/2/eager=hang"})
        except Exception as err:  # noqa: BLE001 - reported by the assertion below
            outcome["error"] = err

    thread = threading.Thread(target=sweep)
    thread.start()
    batch_size = 2  # hangs until killed: the kill cannot race its row
    _, rows_at_kill = _kill_worker_of_a_hung_cell(results, batch_size)
    thread.join(timeout=300)
    # one node CPU: the cells ran one after the other, and the first row was on disk mid-sweep
    assert len(rows_at_kill) == 1 and '"batch_size": 1' in rows_at_kill[0]
    assert "summaries" in outcome, outcome
    assert outcome["summaries"][0].statuses == {"ok": 1, "crashed": 1}
    rows = {r.batch_size: r for r in read_results(results).rows}
    assert len(results.read_text().splitlines()) == 2 and sorted(rows) == [1, 2]
    lost = rows[batch_size]
    assert lost.status == "crashed" and lost.error.startswith("Ray actor lost after its retries: ")
    assert "died" in lost.error
    again = run_sweeps_on_ray([cfg], cluster.address, [results], retry_failed=True, progress=False)
    assert (again[0].skipped, again[0].statuses) == (1, {"ok": 1})
    assert len(results.read_text().splitlines()) == 3  # the crashed row stays; the new row replaces it
    assert {r.status for r in read_results(results).rows} == {"ok"}


@pytest.mark.cluster
def test_node_removed_mid_cell_its_cell_is_measured_again_on_another_node(cluster, tmp_path):
    spare = cluster.cluster.add_node(num_cpus=1, resources={"accelerator_type:A100": 1})
    raylet = spare.all_processes["raylet"][0].process.pid
    cfg = load_config(tiny_params(tmp_path, label="A100", batch_sizes=[1, 2]))
    results, outcome = tmp_path / "results.jsonl", {}
    thread = threading.Thread(target=lambda: outcome.update(
        summaries=run_sweeps_on_ray([cfg], cluster.address, [results], progress=False)))
    thread.start()
    deadline = time.time() + 180
    while time.time() < deadline and not (found := _running_cell(tmp_path, under=raylet)):
        time.sleep(0.1)
    assert found, "no cell ran on the spare A100 node"
    time.sleep(0.5)
    cluster.cluster.remove_node(spare)
    thread.join(timeout=300)
    assert outcome["summaries"][0].statuses == {"ok": 2}
    rows = {r.batch_size: r for r in read_results(results).rows}
    assert len(results.read_text().splitlines()) == 2 and sorted(rows) == [1, 2]
    assert rows[found[1]].env["ray_node_id"] == cluster.a100 != spare.node_id  # re-run on the head node
