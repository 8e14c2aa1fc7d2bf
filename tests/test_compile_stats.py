"""What dynamo did, read from its own counters: graphs, breaks with reasons, recompiles with failed guards."""

import torch


def test_graph_stats_name_graph_breaks_and_failed_guards_from_dynamo():
    from bench_utils.measure.compile_stats import clear_graph_stats, graph_stats

    def breaks(x):
        x = x * 2
        torch._dynamo.graph_break()  # explicit: how dynamo words a print() break varied with earlier tests (CI)
        return x + 1

    torch._dynamo.reset()
    clear_graph_stats()
    compiled = torch.compile(breaks, dynamic=False, backend="eager")  # dynamo only: no codegen, fast
    compiled(torch.ones(2))
    first = graph_stats(frames_after_first_call=0)
    assert first["graph_breaks"] >= 1 and first["graph_count"] == 2
    assert first["break_reasons"] == ["Call to `torch._dynamo.graph_break()`"]
    frames = int(torch._dynamo.utils.counters["frames"]["total"])
    compiled(torch.ones(3))  # a new static shape: the size guard fails and dynamo compiles again
    again = graph_stats(frames)
    assert again["recompiles"] >= 1
    assert any("size mismatch" in reason and "expected 2, actual 3" in reason for reason in again["recompile_reasons"])
    torch._dynamo.reset()
