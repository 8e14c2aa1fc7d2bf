"""Regional compilation (measure/regions.py): the repeated blocks of real models, and a model without
them a row saying so."""

import pytest
from transformers import ResNetConfig, ResNetForImageClassification

from bench_utils.config.configurations import configuration
from bench_utils.config.registry import get_spec
from bench_utils.measure.models import load_model
from bench_utils.measure.regions import NO_BLOCKS, block_count, describe_blocks, distinct_blocks, find_repeated_blocks
from bench_utils.measure.settings import Unsupported, check_supported


def _resnet(depths: list[int]) -> ResNetForImageClassification:
    config = ResNetConfig(embedding_size=8, hidden_sizes=[16, 32, 64, 128][:len(depths)], depths=depths,
                          layer_type="bottleneck", num_labels=10)
    return ResNetForImageClassification(config)


def test_vit_layers_are_its_repeated_blocks():
    model = load_model(get_spec("vit"), "tiny", "random", "cpu", "float32").model
    groups = find_repeated_blocks(model)
    assert [group.path for group in groups] == ["vit.layers"]
    assert list(groups[0].blocks) == list(model.vit.layers)
    assert describe_blocks(groups) == "2 x ViTLayer at vit.layers"
    assert block_count(groups) == 2 and distinct_blocks(groups) == 1  # one graph serves both


def test_resnet_blocks_are_the_layers_of_stages_with_two_alike():
    # a stage's first layer has a projection shortcut (8 -> 16 channels), the next ones are alike
    # (16 -> 16): with two alike, all of the stage's layers are blocks; a 2-layer stage has no two alike
    groups = find_repeated_blocks(_resnet([3, 2]))
    assert [(group.path, len(group.blocks)) for group in groups] == [("resnet.encoder.stages.0.layers", 3)]
    both = find_repeated_blocks(_resnet([3, 3]))
    assert [len(group.blocks) for group in both] == [3, 3]
    assert describe_blocks(both) == "6 x ResNetBottleNeckLayer at resnet.encoder.stages.*.layers"
    assert distinct_blocks(both) == 4  # per stage: the first layer, and the two alike


def test_regional_on_a_model_without_repeated_blocks_is_a_row_saying_so():
    tiny = load_model(get_spec("resnet"), "tiny", "random", "cpu", "float32").model  # depths [1, 1, 1, 1]
    assert find_repeated_blocks(tiny) == []  # its four stages differ in shape: not repeated blocks
    with pytest.raises(Unsupported, match=f"^{NO_BLOCKS}: regional compilation does not apply$"):
        check_supported(configuration("default+regional"), "cpu", tiny)
    check_supported(configuration("default+regional"), "cpu", _resnet([3, 3]))  # applies
