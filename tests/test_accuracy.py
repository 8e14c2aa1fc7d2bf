"""Accuracy against eager: a tolerance for float32, dynamo's float64-reference rule for low precision."""

import torch

from bench_utils.measure import accuracy


def test_low_precision_rounding_passes_where_a_fixed_tolerance_between_outputs_would_not():
    torch.manual_seed(0)
    exact = torch.rand(4096, dtype=torch.float64) * 2 - 1  # outputs within [-1, 1]
    # long bfloat16 reductions: eager and compiled each off the exact value by rounding noise of 0.03,
    # summed in another order, so their errors are independent
    eager = (exact + 0.03 * torch.randn(4096, dtype=torch.float64)).to(torch.bfloat16)
    compiled = (exact + 0.03 * torch.randn(4096, dtype=torch.float64)).to(torch.bfloat16)
    diff = accuracy.max_abs_diff({"logits": eager}, {"logits": compiled})
    assert not accuracy.within_tolerance({"logits": eager}, diff, "bfloat16")
    assert accuracy.as_accurate_as_eager({"logits": eager}, {"logits": compiled}, {"logits": exact}, "bfloat16")


def test_low_precision_error_larger_than_eager_fails():
    torch.manual_seed(0)
    exact = torch.randn(4096, dtype=torch.float64)
    eager = exact.to(torch.float16)
    wrong = (exact + 0.2 * torch.randn(4096, dtype=torch.float64)).to(torch.float16)  # a real numerical bug
    assert not accuracy.as_accurate_as_eager({"logits": eager}, {"logits": wrong}, {"logits": exact}, "float16")


def test_float64_reference_runs_a_float64_copy_and_leaves_the_model_alone():
    model = torch.nn.Linear(8, 3).to(torch.bfloat16)
    inputs = {"input": torch.randn(2, 8, dtype=torch.bfloat16)}
    with torch.inference_mode():
        output = accuracy.float64_reference(model, inputs)
    assert output.dtype == torch.float64 and model.weight.dtype == torch.bfloat16
    expected = inputs["input"].double() @ model.weight.double().T + model.bias.double()
    assert torch.allclose(output, expected)


def test_to_host_keeps_the_structure_the_checks_read():
    """The reference outputs wait on the host while timing; the comparisons read them unchanged."""
    from transformers.modeling_outputs import ImageClassifierOutput

    logits = torch.tensor([[0.1, 2.0, -1.0]])
    output = ImageClassifierOutput(logits=logits, hidden_states=(torch.ones(1, 2), torch.zeros(1, 2)))
    host = accuracy.to_host(output)
    assert list(host) == ["logits", "hidden_states"] and torch.equal(host["logits"], logits)
    assert [t.device.type for t in accuracy.floating_tensors(host)] == ["cpu"] * 3
    assert accuracy.max_abs_diff(output, host) == 0.0
    assert accuracy.task_agreement("image-classification", host, output) == 1.0
    assert accuracy.to_host(7) == 7
