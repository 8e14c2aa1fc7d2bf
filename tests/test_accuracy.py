"""Accuracy against eager float32: a tolerance for float32, the task's answer for a lower precision."""

import torch

from bench_utils.measure import accuracy


def test_a_lower_precision_is_judged_by_the_answer_not_the_numbers():
    """bfloat16 rounding moves every logit (element-wise it fails any float32 tolerance), yet the top-1
    class stays: the configuration is accurate. A configuration that changes the answer is not."""
    from bench_utils.config.configurations import TASK_AGREEMENT_MIN

    torch.manual_seed(0)
    reference = {"logits": torch.randn(64, 1000) * 4}  # eager float32: clear winners
    rounded = {"logits": reference["logits"].to(torch.bfloat16).float()}
    diff = accuracy.max_abs_diff(reference, rounded)
    assert not accuracy.within_tolerance(reference, diff, "float32")
    assert accuracy.task_agreement("image-classification", reference, rounded) >= TASK_AGREEMENT_MIN
    shuffled = {"logits": reference["logits"][torch.randperm(64)]}
    assert accuracy.task_agreement("image-classification", reference, shuffled) < TASK_AGREEMENT_MIN


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
