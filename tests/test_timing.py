"""The timing engine's clock (measure/timing.py) on a stand-in CUDA device: a sample is the latency a
caller waits, the host's work for the call included, not the device's time alone (what CUDA events
around calls queued back to back read)."""

import pytest

import bench_utils.measure.timing as timing


class FakeGPU:
    """A host and a device on one simulated clock. A call costs `host_s` of host work (guards, launches:
    the host's clock moves) and queues `device_s` of device work, which runs once the device is free;
    `synchronize` waits for the device."""

    def __init__(self, host_s: float, device_s: float):
        self.host_s, self.device_s = host_s, device_s
        self.now = 0.0  # the host's clock, seconds
        self.device_free_at = 0.0
        self.busy_at_call = 0  # calls that began while the device still ran an earlier one

    def perf_counter(self) -> float:
        return self.now

    def launch(self) -> None:  # the callable being timed
        self.busy_at_call += self.device_free_at > self.now
        self.now += self.host_s
        self.device_free_at = max(self.device_free_at, self.now) + self.device_s

    def synchronize(self) -> None:
        self.now = max(self.now, self.device_free_at)


@pytest.fixture
def gpu(monkeypatch):
    fake = FakeGPU(host_s=0.003, device_s=0.010)
    monkeypatch.setattr(timing.time, "perf_counter", fake.perf_counter)
    monkeypatch.setattr(timing.torch.cuda, "synchronize", fake.synchronize)
    return fake


def test_a_sample_is_what_a_caller_waits_host_work_included(gpu):
    # 3 ms of host work and 10 ms on the device: a caller waits 13 ms; events around calls queued back
    # to back would read the device's 10 ms (the host's work hidden behind the previous call)
    samples = timing.time_calls(gpu.launch, "cuda", min_calls=8, min_time_s=0.0)
    assert samples == pytest.approx([0.013] * 8)
    assert gpu.busy_at_call == 0  # every call found the device idle: no call overlapped the one before


def test_a_block_stops_on_the_time_its_calls_took(gpu):
    samples = timing.time_calls(gpu.launch, "cuda", min_calls=8, min_time_s=0.5)
    assert len(samples) == 39  # 0.5 s at 13 ms a call: the 39th call ends past it (38 x 13 ms = 0.494 s)
    assert gpu.now == pytest.approx(39 * 0.013)  # returns once the device finished the last call


def test_the_call_count_still_binds_when_the_calls_are_short(gpu):
    assert len(timing.time_calls(gpu.launch, "cuda", min_calls=30, min_time_s=0.05)) == 30


def test_a_warm_up_on_a_steady_device_is_steady_after_two_windows(gpu):
    record = timing.warm_until_steady(gpu.launch, "cuda", min_calls=3, window_s=0.05, max_s=5.0)
    assert record.steady and record.calls == 3 + 4  # a first window of 3 calls, then 0.05 s at 13 ms: 4


def test_a_known_steady_latency_ends_the_warm_up_at_the_first_window_that_agrees(gpu):
    # a process forked from a prepared one starts from the latency the last round measured
    record = timing.warm_until_steady(gpu.launch, "cuda", min_calls=3, window_s=0.05, max_s=5.0, steady_s=0.013)
    assert record.steady and record.calls == 4
    far = timing.warm_until_steady(gpu.launch, "cuda", min_calls=3, window_s=0.05, max_s=5.0, steady_s=0.020)
    # 35% off: two windows that agree with each other, as without it (the first sized by the seed: 3 calls)
    assert far.steady and far.calls == 3 + 4
    with pytest.raises(ValueError, match="steady_s"):
        timing.warm_until_steady(gpu.launch, "cuda", min_calls=3, window_s=0.05, max_s=5.0, steady_s=0.0)


def test_on_a_cpu_a_sample_is_the_host_clock_around_the_call(monkeypatch):
    clock = FakeGPU(host_s=0.004, device_s=0.0)
    monkeypatch.setattr(timing.time, "perf_counter", clock.perf_counter)
    assert timing.time_calls(clock.launch, "cpu", min_calls=5, min_time_s=0.0) == pytest.approx([0.004] * 5)
