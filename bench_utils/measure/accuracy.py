"""Does the compiled model still give the eager model's answer?

Two views: the largest element-wise difference of every floating output (a pass/fail against a
tolerance), and a task-level agreement a user cares about:
- classification: share of images whose top-1 class is the same;
- segmentation: IoU of the predicted label masks (argmax over classes, or over mask queries);
- detection: share of predicted boxes (per query) whose IoU with the eager box is >= BOX_IOU_MATCH;
- a notebook's object with no known task (task ""): the cosine similarity of all its floating outputs
  taken as one vector (1: the same answer; a lower precision's rounding keeps it near 1, a wrong
  kernel does not), so a lower precision is judged by it as a task's answer is.
"""

from __future__ import annotations

import torch

# Pass if max|compiled - eager| <= TOLERANCE[numerics] * max(1, max|eager|): relative for large outputs,
# absolute for small ones. float32 kernels reorder reductions (e.g. fused matmul + add), so exact
# equality is not expected. A lower precision (autocast) is judged by the task's answer instead
# (task_agreement against config/configurations.TASK_AGREEMENT_MIN): every number changes by rounding.
# "tf32": float32 on CUDA where matmuls or cuDNN convolutions run in TF32 (10-bit mantissa, like
# float16): Inductor's layout changes can pick another TF32 convolution algorithm than eager did.
TOLERANCE = {"float32": 1e-3, "tf32": 1e-2}
BOX_IOU_MATCH = 0.9


def floating_tensors(output) -> list[torch.Tensor]:
    """Every floating tensor in a model output (ModelOutput, tuple, dict, tensor), in order."""
    if isinstance(output, torch.Tensor):
        return [output] if output.is_floating_point() else []
    if isinstance(output, dict):  # ModelOutput is an OrderedDict
        output = list(output.values())
    if isinstance(output, (list, tuple)):
        return [t for item in output for t in floating_tensors(item)]
    return []


def to_host(output):
    """A model output with every tensor copied to the CPU; dicts (ModelOutput) stay dicts with the same
    keys in order, tuples and lists become lists. The reference outputs wait on the host while the
    compiled model is timed: an eager process holds no such tensors, so neither may a compiled one."""
    if isinstance(output, torch.Tensor):
        return output.detach().to("cpu")
    if isinstance(output, dict):
        return {key: to_host(value) for key, value in output.items()}
    if isinstance(output, (list, tuple)):
        return [to_host(item) for item in output]
    return output


def numerics(device: str) -> str:
    """The tolerance class of a float32 comparison with eager: "tf32" on CUDA when TF32 is on."""
    from .environment import tf32_in_use

    return "tf32" if device == "cuda" and tf32_in_use() else "float32"


def agreement_fields(reference, candidate, task: str, precision: str, numerics: str) -> dict:
    """A row's accuracy fields for `candidate` against eager float32's `reference`: float32 element-wise
    within rounding (`numerics`: TOLERANCE's key); a lower `precision` keeps the task's answer (its
    agreement at least config/configurations.TASK_AGREEMENT_MIN)."""
    from ..config.configurations import TASK_AGREEMENT_MIN

    diff = max_abs_diff(reference, candidate)
    fields = {"max_abs_diff": diff, "task_agreement": task_agreement(task, reference, candidate)}
    if precision == "float32":  # the same arithmetic: element-wise, within rounding
        return fields | {"accuracy_ok": within_tolerance(reference, diff, numerics),
                         "accuracy_reference": "elementwise"}
    return fields | {"accuracy_ok": fields["task_agreement"] >= TASK_AGREEMENT_MIN, "accuracy_reference": "task"}


def max_abs_diff(reference, candidate) -> float:
    ref, cand = floating_tensors(reference), floating_tensors(candidate)
    if len(ref) != len(cand) or not ref:
        raise ValueError(f"outputs differ in structure: {len(ref)} vs {len(cand)} floating tensors")
    return max(float((r.float() - c.float()).abs().max()) for r, c in zip(ref, cand))


def within_tolerance(reference, diff: float, numerics: str) -> bool:
    scale = max(1.0, max(float(t.float().abs().max()) for t in floating_tensors(reference)))
    return diff <= TOLERANCE[numerics] * scale


def top1_agreement(ref_logits: torch.Tensor, cand_logits: torch.Tensor) -> float:
    return float((ref_logits.argmax(-1) == cand_logits.argmax(-1)).float().mean())


def mask_iou(ref_mask: torch.Tensor, cand_mask: torch.Tensor) -> float:
    """Mean over present labels of |A∩B| / |A∪B| between two integer label masks."""
    if ref_mask.shape != cand_mask.shape:
        raise ValueError(f"mask shapes differ: {tuple(ref_mask.shape)} vs {tuple(cand_mask.shape)}")
    ious = []
    for label in torch.unique(torch.cat([ref_mask.flatten(), cand_mask.flatten()])):
        a, b = ref_mask == label, cand_mask == label
        ious.append(float((a & b).sum()) / float((a | b).sum()))
    return sum(ious) / len(ious)


def box_iou_cxcywh(ref: torch.Tensor, cand: torch.Tensor) -> torch.Tensor:
    """Element-wise IoU of boxes given as (center x, center y, width, height), same shape (..., 4)."""
    def corners(b):
        return b[..., 0] - b[..., 2] / 2, b[..., 1] - b[..., 3] / 2, b[..., 0] + b[..., 2] / 2, b[..., 1] + b[..., 3] / 2

    ax0, ay0, ax1, ay1 = corners(ref.float())
    bx0, by0, bx1, by1 = corners(cand.float())
    inter = (torch.min(ax1, bx1) - torch.max(ax0, bx0)).clamp(min=0) * (torch.min(ay1, by1) - torch.max(ay0, by0)).clamp(min=0)
    union = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter
    return inter / union.clamp(min=1e-12)


def box_agreement(ref_boxes: torch.Tensor, cand_boxes: torch.Tensor) -> float:
    return float((box_iou_cxcywh(ref_boxes, cand_boxes) >= BOX_IOU_MATCH).float().mean())


def output_cosine(reference, candidate) -> float:
    """The cosine similarity of every floating output of `reference` and `candidate`, each flattened into one
    vector (1.0 where both are all zeros)."""
    ref = torch.cat([t.float().flatten() for t in floating_tensors(reference)])
    cand = torch.cat([t.float().flatten() for t in floating_tensors(candidate)])
    if ref.shape != cand.shape:
        raise ValueError(f"outputs differ in size: {ref.numel()} vs {cand.numel()} floating elements")
    norms = float(ref.norm() * cand.norm())
    return float(ref @ cand) / norms if norms else float(torch.equal(ref, cand))


def task_agreement(task: str, reference, candidate) -> float:
    """The task-level agreement (0..1) between eager float32's output (`reference`) and a configuration's;
    for an object with no known task (""), output_cosine (opposed outputs: 0, no agreement)."""
    if task == "":
        return min(1.0, max(0.0, output_cosine(reference, candidate)))
    if task == "image-classification":
        return top1_agreement(reference["logits"], candidate["logits"])
    if task == "semantic-segmentation":
        return mask_iou(reference["logits"].argmax(1), candidate["logits"].argmax(1))
    if task in ("universal-segmentation", "instance-segmentation"):
        # Which mask query wins each pixel: a label map that needs no post-processing sizes.
        return mask_iou(reference["masks_queries_logits"].argmax(1), candidate["masks_queries_logits"].argmax(1))
    if task in ("object-detection", "zero-shot-object-detection"):
        return box_agreement(reference["pred_boxes"], candidate["pred_boxes"])
    raise ValueError(f"task: {task!r} has no agreement measure")
