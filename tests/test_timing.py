"""The timing engine's clock (measure/timing.py) on a stand-in CUDA device: a block stops on the device
time its calls completed, not on the host's clock, which runs ahead of the device."""

import pytest

import bench_utils.measure.timing as timing


class FakeDevice:
    """A GPU that runs one queued call per `call_s` of device time and makes progress only when the host
    waits for it (the worst case: a host that queues calls far faster than the device runs them)."""

    def __init__(self, call_s: float):
        self.call_s, self.launched, self.finished, self.most_queued = call_s, 0, 0, 0

    def launch(self) -> None:  # the callable being timed: queues one call, returns at once
        self.launched += 1
        self.most_queued = max(self.most_queued, self.launched - self.finished)

    def event(self):
        return FakeEvent(self)


class FakeEvent:
    """torch.cuda.Event's interface: record, query, synchronize, elapsed_time (milliseconds)."""

    def __init__(self, device: FakeDevice):
        self.device, self.position = device, None

    def record(self) -> None:
        self.position = self.device.launched  # completes once the calls queued before it have run

    def query(self) -> bool:
        return self.position <= self.device.finished

    def synchronize(self) -> None:
        self.device.finished = max(self.device.finished, self.position)

    def elapsed_time(self, end: "FakeEvent") -> float:
        assert self.query() and end.query(), "elapsed_time of an event the device has not reached"
        return (end.position - self.position) * self.device.call_s * 1000.0


@pytest.fixture
def device(monkeypatch):
    gpu = FakeDevice(call_s=0.010)
    monkeypatch.setattr(timing, "_cuda_event", gpu.event)
    monkeypatch.setattr(timing.torch.cuda, "synchronize", lambda: setattr(gpu, "finished", gpu.launched))
    return gpu


def test_a_block_stops_on_completed_device_time_not_on_the_host_clock(device):
    # 0.5 s of timed calls at 10 ms each on the device: 50 calls, and at most IN_FLIGHT_CALLS more that
    # were queued when the rule was met. On the host's clock (calls that return at once) the block
    # would have queued thousands of calls, seconds of device time past its turn.
    samples = timing.time_calls(device.launch, "cuda", min_calls=8, min_time_s=0.5)
    assert 50 <= len(samples) <= 50 + timing.IN_FLIGHT_CALLS
    assert samples == pytest.approx([0.010] * len(samples))
    assert device.most_queued <= timing.IN_FLIGHT_CALLS + 1  # the host never ran far ahead
    assert device.finished == device.launched  # returns after the device finished every call it timed


def test_the_call_count_still_binds_when_device_time_is_short(device):
    samples = timing.time_calls(device.launch, "cuda", min_calls=30, min_time_s=0.05)
    assert len(samples) == 30


def test_a_warm_up_window_keeps_the_host_within_the_bound(device):
    record = timing.warm_until_steady(device.launch, "cuda", min_calls=3, window_s=0.05, max_s=5.0)
    assert record.steady and record.calls >= 3
    assert device.most_queued <= timing.IN_FLIGHT_CALLS + 1
