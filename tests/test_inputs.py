"""Model inputs: each checkpoint's own preprocessing, N identical copies, OWL-ViT's two text queries."""

import json
import math

import pytest
import torch
from PIL import Image

from bench_utils.config.registry import MODEL_NAMES, SIZES, get_spec
from bench_utils.measure.inputs import TEXT_QUERIES, build_inputs, default_image_path, load_image, text_inputs

DETR_FAMILY = ("mask2former", "maskformer", "detr", "detr-resnet-101", "conditional-detr")
CAT = [49406, 320, 1125, 539, 320, 2368, 49407]  # <|startoftext|> a photo of a cat <|endoftext|>
DOG = CAT[:5] + [1929, 49407]


def expected_keys(name: str) -> set:
    if name == "owlvit":
        return {"pixel_values", "input_ids", "attention_mask"}
    return {"pixel_values", "pixel_mask"} if name in DETR_FAMILY else {"pixel_values"}


def expected_hw(pp: dict, width: int, height: int) -> tuple[float, float]:
    """(height, width) that the preprocessor config asks for, before rounding to whole pixels."""
    if pp.get("do_center_crop"):
        return pp["crop_size"]["height"], pp["crop_size"]["width"]
    size = pp["size"]
    if "height" in size:
        return size["height"], size["width"]
    if "crop_pct" in pp:  # ConvNext style: resize to shortest_edge / crop_pct, centre-crop a square
        return size["shortest_edge"], size["shortest_edge"]
    scale = size["shortest_edge"] / min(width, height)
    if "longest_edge" in size:
        scale = min(scale, size["longest_edge"] / max(width, height))
    divisor = pp.get("size_divisor") or 1  # MaskFormer resizes up to a multiple of it (no padding)
    return tuple(math.ceil(side * scale / divisor) * divisor if divisor > 1 else side * scale
                 for side in (height, width))


def check_spatial_size(inputs: dict, pp: dict, image_size: tuple[int, int]):
    want_h, want_w = expected_hw(pp, *image_size)
    got_h, got_w = inputs["pixel_values"].shape[-2:]
    assert abs(got_h - want_h) <= 1 and abs(got_w - want_w) <= 1, (got_h, got_w, want_h, want_w)
    if "pixel_mask" in inputs:  # one image: nothing is padding
        assert inputs["pixel_mask"].shape[-2:] == (got_h, got_w) and bool(inputs["pixel_mask"].all())


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_inputs_follow_the_models_own_preprocessor_config(name, size):
    import transformers

    spec = get_spec(name)
    pp = json.loads((spec.config_dir(size) / "preprocessor_config.json").read_text())
    inputs = build_inputs(spec, size, 1, "cpu", torch.float32)
    assert set(inputs) == expected_keys(name)
    check_spatial_size(inputs, pp, Image.open(default_image_path()).size)
    # The same numbers as the processor class named in the file, built straight from the file's values.
    direct = getattr(transformers, pp["image_processor_type"])(**pp)(images=load_image(), return_tensors="pt")
    assert torch.equal(inputs["pixel_values"], direct["pixel_values"])


def test_full_size_examples_by_hand():
    """Spot values worked out by hand for the 640x480 (w x h) default photograph, the guide's COCO geometry."""
    shapes = {name: tuple(build_inputs(get_spec(name), "full", 1, "cpu", torch.float32)["pixel_values"].shape[-2:])
              for name in ("vit", "convnext", "segformer", "deeplabv3-mobilenet", "owlvit", "maskformer", "detr")}
    assert shapes == {"vit": (224, 224), "convnext": (224, 224), "segformer": (512, 512),
                      "deeplabv3-mobilenet": (513, 513), "owlvit": (768, 768),
                      "maskformer": (640, 864),  # shortest edge 640: 640 x 853, padded to multiples of 32
                      "detr": (800, 1066)}  # shortest edge 800: 640 * 800 / 480 = 1066.7, as in the guide


def test_owlvit_gets_the_two_queries_once_per_image():
    inputs = build_inputs(get_spec("owlvit"), "tiny", 3, "cpu", torch.float32)
    ids, mask = inputs["input_ids"], inputs["attention_mask"]
    assert ids.shape == mask.shape == (3 * len(TEXT_QUERIES), 16) and ids.dtype == torch.long
    for row in range(0, 6, 2):  # image i owns rows 2i (cat) and 2i+1 (dog)
        assert ids[row].tolist() == CAT + [0] * 9 and ids[row + 1].tolist() == DOG + [0] * 9
        assert mask[row].tolist() == mask[row + 1].tolist() == [1] * 7 + [0] * 9


def test_query_ids_fit_the_shipped_text_config():
    text = json.loads((get_spec("owlvit").config_dir("full") / "config.json").read_text())["text_config"]
    ids = text_inputs()["input_ids"]
    assert ids.shape[1] == text["max_position_embeddings"]
    # CLIP puts <|startoftext|>, <|endoftext|> last in its vocabulary
    assert (ids[:, 0] == text["vocab_size"] - 2).all() and (ids.max(dim=1).values == text["vocab_size"] - 1).all()


@pytest.mark.parametrize("name", ["detr", "owlvit", "vit"])
def test_batch_n_is_n_identical_copies(name):
    spec = get_spec(name)
    one = build_inputs(spec, "tiny", 1, "cpu", torch.float32)
    three = build_inputs(spec, "tiny", 3, "cpu", torch.float32)
    for key, tensor in three.items():
        per_image = one[key].shape[0]  # 2 text queries per image for OWL-ViT, else 1
        assert tensor.shape == (3 * per_image,) + one[key].shape[1:] and tensor.is_contiguous()
        assert torch.equal(tensor, one[key].repeat((3,) + (1,) * (tensor.dim() - 1)))


def test_only_floating_inputs_take_the_model_dtype():
    detr = build_inputs(get_spec("detr"), "tiny", 2, "cpu", torch.bfloat16)
    owl = build_inputs(get_spec("owlvit"), "tiny", 2, "cpu", torch.bfloat16)
    assert detr["pixel_values"].dtype == owl["pixel_values"].dtype == torch.bfloat16
    assert detr["pixel_mask"].dtype == owl["input_ids"].dtype == owl["attention_mask"].dtype == torch.long


def test_a_user_image_path_is_used(tmp_path):
    path = tmp_path / "wide.png"
    gradient = torch.arange(300, dtype=torch.uint8).repeat(100, 1)  # 300 wide, 100 tall
    Image.fromarray(gradient.numpy()).save(path)  # greyscale: load_image converts to RGB
    spec = get_spec("detr")
    pp = json.loads((spec.config_dir("tiny") / "preprocessor_config.json").read_text())
    inputs = build_inputs(spec, "tiny", 1, "cpu", torch.float32, image=str(path))
    check_spatial_size(inputs, pp, (300, 100))
    assert inputs["pixel_values"].shape[-2:] == (21, 64)  # longest edge 64: 100 * 64 / 300 = 21.3
    vit_default = build_inputs(get_spec("vit"), "tiny", 1, "cpu", torch.float32)["pixel_values"]
    vit_user = build_inputs(get_spec("vit"), "tiny", 1, "cpu", torch.float32, image=path)["pixel_values"]
    assert not torch.equal(vit_user, vit_default)
    assert torch.equal(vit_user[0, 0], vit_user[0, 1])  # grey image: the same in every channel


def test_bad_batch_size_and_missing_image():
    with pytest.raises(ValueError, match="batch_size: 0 is not allowed; allowed: >= 1"):
        build_inputs(get_spec("vit"), "tiny", 0, "cpu", torch.float32)
    with pytest.raises(FileNotFoundError):
        build_inputs(get_spec("vit"), "tiny", 1, "cpu", torch.float32, image="/no/such/photo.jpg")
