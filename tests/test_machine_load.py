"""Others' CPU share while we time: from /proc/stat and this process's own CPU time."""

import subprocess
import sys
import time

import pytest

from bench_utils.measure import machine_load
from bench_utils.measure.machine_load import Snapshot, between
from bench_utils.results.aggregate import DISTURBED_PCT

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/stat")


def test_arithmetic_of_two_snapshots():
    before = Snapshot(wall_s=10.0, busy_s=100.0, steal_s=5.0, own_s=1.0)
    after = Snapshot(wall_s=12.0, busy_s=103.0, steal_s=5.4, own_s=2.8)  # 2 s on 2 cores = 4 s capacity
    load = between(before, after, cores=2)
    assert load.others_cpu_pct == pytest.approx((3.0 - 1.8) / 4 * 100)
    assert load.steal_pct == pytest.approx(10.0)
    assert between(None, after) is None and between(after, after, cores=2) is None


def test_shares_that_coarse_jiffies_round_past_either_end_stay_within_0_and_100():
    # a 0.5 s block on 2 cores (1 s capacity) where /proc/stat's 10 ms jiffies lagged: 1.06 s busy, none ours
    # (106% was read once, and the row schema refused the whole row: its cell was measured again)
    before = Snapshot(wall_s=0.0, busy_s=10.0, steal_s=1.0, own_s=5.0)
    load = between(before, Snapshot(wall_s=0.5, busy_s=11.06, steal_s=2.2, own_s=5.0), cores=2)
    assert (load.others_cpu_pct, load.steal_pct) == (100.0, 100.0)
    assert between(before, Snapshot(wall_s=0.5, busy_s=10.0, steal_s=1.0, own_s=5.02), cores=2).others_cpu_pct == 0.0


def test_a_busy_neighbour_is_seen_and_our_own_work_is_not():
    def spin(seconds):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    before = machine_load.snapshot()
    spin(0.5)  # our own work: not "others"
    alone = between(before, machine_load.snapshot())
    # the neighbour says when it spins and spins until told to stop: the measured second lies inside its
    # spinning, however long it took to start on a loaded machine
    spinner = ("import select, sys\nprint('spinning', flush=True)\n"
               "while not select.select([sys.stdin], [], [], 0)[0]: pass")
    neighbour = subprocess.Popen([sys.executable, "-c", spinner], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True)
    try:
        assert neighbour.stdout.readline() == "spinning\n"
        before = machine_load.snapshot()
        time.sleep(1.0)
        busy = between(before, machine_load.snapshot())
    finally:
        neighbour.stdin.write("stop\n")
        neighbour.stdin.close()
        neighbour.wait(60)
    # a process spinning one core of the machine takes 100 / cores % of its capacity
    assert alone.others_cpu_pct < busy.others_cpu_pct
    assert busy.others_cpu_pct > 0.6 * 100 / machine_load.os.cpu_count() > DISTURBED_PCT / 2
