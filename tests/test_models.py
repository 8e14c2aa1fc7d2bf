"""Building the 12 checkpoints offline: tiny variants in seconds, full size once each (slow), the
full-size parameter counts against the published ones, and how `weights` chooses what to load."""

import math
import shutil
import time

import pytest
import torch

from bench_utils.config.registry import MODEL_NAMES, get_spec
from bench_utils.measure.inputs import TEXT_QUERIES, build_inputs
from bench_utils.measure.models import build_random, count_params, hub_reachable, load_model

COMMIT = "0" * 40  # a snapshot name for checkpoints laid out in a temporary hub cache
SEGMENTATION_STRIDE = {"segformer": 4, "deeplabv3-mobilenet": 8}  # logits resolution vs the input


def num_queries(config) -> int:
    return config.num_queries if config.model_type != "maskformer" else config.decoder_config.num_queries


def check_outputs(spec, config, inputs: dict, out, batch: int):
    """Output keys and shapes for `spec`'s task, worked out from its config and its inputs."""
    h, w = inputs["pixel_values"].shape[-2:]
    if spec.task == "image-classification":
        shapes = {"logits": (batch, config.num_labels)}
    elif spec.task == "semantic-segmentation":
        stride = SEGMENTATION_STRIDE[spec.name]
        shapes = {"logits": (batch, config.num_labels, math.ceil(h / stride), math.ceil(w / stride))}
    elif spec.task in ("universal-segmentation", "instance-segmentation"):
        queries = num_queries(config)
        shapes = {"class_queries_logits": (batch, queries, config.num_labels + 1),  # + "no object"
                  "masks_queries_logits": (batch, queries, h // 4, w // 4)}
    elif spec.task == "zero-shot-object-detection":
        patches = (h // config.vision_config.patch_size) * (w // config.vision_config.patch_size)
        shapes = {"logits": (batch, patches, len(TEXT_QUERIES)), "pred_boxes": (batch, patches, 4)}
    else:  # object detection; Conditional DETR's sigmoid focal loss has no "no object" class
        classes = config.num_labels + (config.model_type == "detr")
        shapes = {"logits": (batch, num_queries(config), classes), "pred_boxes": (batch, num_queries(config), 4)}
    assert {key: tuple(out[key].shape) for key in shapes} == shapes
    for key in shapes:
        assert torch.isfinite(out[key]).all(), key
    if "pred_boxes" in shapes:  # (cx, cy, w, h) relative to the image
        assert 0 <= out["pred_boxes"].min() and out["pred_boxes"].max() <= 1


def forward(loaded, spec, size: str, batch: int):
    inputs = build_inputs(spec, size, batch, "cpu", torch.float32)
    with torch.inference_mode():
        out = loaded.model(**inputs)
    check_outputs(spec, loaded.model.config, inputs, out, batch)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_tiny_variant_builds_and_runs_a_batch_of_two(name):
    spec = get_spec(name)
    loaded = load_model(spec, "tiny", "random", "cpu", "float32")
    assert (loaded.weights, loaded.note) == ("random", "random weights (tiny config), shipped config")
    assert type(loaded.model).__name__ == spec.model_class and not loaded.model.training
    assert loaded.num_params == count_params(loaded.model) < 2_000_000  # tiny: smoke runs take seconds
    forward(loaded, spec, "tiny", batch=2)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_full_size_parameter_count_is_within_1_percent_of_published(name):
    spec = get_spec(name)
    with torch.device("meta"):  # shapes only: no memory, no weight initialisation
        model = build_random(spec, "full")
    assert abs(count_params(model) - spec.published_params) <= 0.01 * spec.published_params


@pytest.mark.slow
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_full_size_checkpoint_builds_offline_and_runs_one_image(name):
    spec = get_spec(name)
    loaded = load_model(spec, "full", "random", "cpu", "float32")
    assert loaded.weights == "random" and type(loaded.model).__name__ == spec.model_class
    assert abs(loaded.num_params - spec.published_params) <= 0.01 * spec.published_params
    forward(loaded, spec, "full", batch=1)


def test_load_model_refuses_bad_weights_values():
    with pytest.raises(ValueError, match="weights: 'imagenet' is not allowed; allowed: auto, pretrained, random"):
        load_model(get_spec("vit"), "tiny", "imagenet", "cpu", "float32")
    with pytest.raises(ValueError, match="weights: 'pretrained' is not allowed with size 'tiny'"):
        load_model(get_spec("vit"), "tiny", "pretrained", "cpu", "float32")


def test_random_weights_are_the_same_in_every_build_and_follow_dtype():
    first = build_random(get_spec("vit"), "tiny").state_dict()
    second = build_random(get_spec("vit"), "tiny").state_dict()
    assert all(torch.equal(first[key], second[key]) for key in first)
    half = load_model(get_spec("vit"), "tiny", "random", "cpu", "bfloat16").model
    assert {p.dtype for p in half.parameters()} == {torch.bfloat16}


@pytest.fixture
def offline_hub(tmp_path, monkeypatch):
    """HF_HUB_OFFLINE=1 and an empty hub cache of our own (the machine's cache is not consulted)."""
    import huggingface_hub.constants

    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


@pytest.fixture
def no_network(monkeypatch):
    """Every attempt to open a connection, recorded and refused: "no hub retries" is then a count of
    attempts, not a wall-clock margin."""
    import socket

    attempts = []

    def refuse(self, address):
        attempts.append(address)
        raise ConnectionRefusedError(f"test: no network ({address})")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", lambda self, address: refuse(self, address))
    return attempts


# a guard against a wait without end (minutes of retries), not a margin the test hopes to win
HANG_GUARD_S = 60


def cached_snapshot(cache, checkpoint: str):
    """A snapshot folder laid out as huggingface_hub lays out a download: refs/main -> snapshots/<commit>."""
    repo = cache / ("models--" + checkpoint.replace("/", "--"))
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    snapshot = repo / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    return snapshot


def test_auto_offline_falls_back_to_random_without_trying_the_hub(offline_hub, no_network):
    loaded = load_model(get_spec("deeplabv3-mobilenet"), "full", "auto", "cpu", "float32")
    assert no_network == []  # offline: not one connection tried (retries would take minutes)
    assert loaded.weights == "random"
    assert loaded.note == "not in local Hugging Face cache; HF_HUB_OFFLINE is set"


def test_auto_takes_a_complete_cached_checkpoint(offline_hub):
    spec = get_spec("deeplabv3-mobilenet")
    saved = build_random(spec, "full")
    with torch.no_grad():
        saved.segmentation_head.classifier.convolution.bias.fill_(0.25)  # a value random initialisation does not give
    saved.save_pretrained(cached_snapshot(offline_hub, spec.checkpoint))
    loaded = load_model(spec, "full", "auto", "cpu", "float32")
    assert (loaded.weights, loaded.note) == ("pretrained", "local Hugging Face cache")
    assert bool((loaded.model.segmentation_head.classifier.convolution.bias == 0.25).all())


def test_auto_with_a_cached_config_but_no_weights_says_so(offline_hub):
    spec = get_spec("deeplabv3-mobilenet")
    shutil.copy(spec.config_dir("full") / "config.json", cached_snapshot(offline_hub, spec.checkpoint))
    loaded = load_model(spec, "full", "auto", "cpu", "float32")
    assert loaded.weights == "random"
    assert loaded.note == "local cache incomplete (OSError); HF_HUB_OFFLINE is set"


def test_pretrained_offline_and_not_cached_is_an_error(offline_hub, no_network):
    with pytest.raises(OSError):
        load_model(get_spec("deeplabv3-mobilenet"), "full", "pretrained", "cpu", "float32")
    assert no_network == []


def test_auto_with_an_unreachable_hub_falls_back_in_seconds(offline_hub, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the discard port: nothing listens
    hub_reachable.cache_clear()
    try:
        start = time.perf_counter()
        loaded = load_model(get_spec("deeplabv3-mobilenet"), "full", "auto", "cpu", "float32")
        assert time.perf_counter() - start < HANG_GUARD_S
    finally:
        hub_reachable.cache_clear()  # the next caller probes the real endpoint again
    assert (loaded.weights, loaded.note) == ("random", "not in local Hugging Face cache; hub unreachable")


def test_a_hub_that_accepts_connections_but_never_answers_is_unreachable_in_seconds(monkeypatch):
    """A tarpit (a proxy or firewall that accepts TCP and says nothing): the probe is an HTTP request
    with a timeout, so `weights: auto` falls back instead of hanging until the cell's timeout_s."""
    import socket

    from bench_utils.measure import models

    with socket.socket() as tarpit:
        tarpit.bind(("127.0.0.1", 0))
        tarpit.listen(8)  # connections complete in the kernel's backlog; nothing ever reads or answers
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{tarpit.getsockname()[1]}")
        monkeypatch.setattr(models, "HUB_PROBE_TIMEOUT_S", 0.5)
        hub_reachable.cache_clear()
        try:
            start = time.perf_counter()
            assert hub_reachable() is False
            assert time.perf_counter() - start < HANG_GUARD_S  # the probe's own 0.5 s timeout ended it
        finally:
            hub_reachable.cache_clear()


def test_a_hub_that_answers_http_is_reachable(monkeypatch):
    import http.server
    import threading

    class Hub(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    hub_reachable.cache_clear()
    try:
        assert hub_reachable() is True
    finally:
        hub_reachable.cache_clear()
        server.shutdown()


def test_an_own_hub_id_with_a_silent_hub_is_one_clear_error_in_seconds(offline_hub, monkeypatch):
    import socket

    from bench_utils.config.registry import own_spec
    from bench_utils.measure import models

    monkeypatch.delenv("HF_HUB_OFFLINE")
    with socket.socket() as tarpit:
        tarpit.bind(("127.0.0.1", 0))
        tarpit.listen(8)
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{tarpit.getsockname()[1]}")
        monkeypatch.setattr(models, "HUB_PROBE_TIMEOUT_S", 0.5)
        hub_reachable.cache_clear()
        try:
            start = time.perf_counter()
            with pytest.raises(OSError, match="org/mine: not in the local Hugging Face cache, and the hub is "
                                              "offline or did not answer"):
                load_model(own_spec("mine", "org/mine", "image-classification"), "full", "auto", "cpu", "float32")
            assert time.perf_counter() - start < HANG_GUARD_S
        finally:
            hub_reachable.cache_clear()


def test_an_own_folder_is_named_on_pages_by_its_name_never_its_absolute_path(tmp_path):
    from transformers import AutoConfig, AutoImageProcessor

    from bench_utils.config.registry import own_spec

    folder = tmp_path / "private" / "my-vit"
    AutoConfig.from_pretrained(get_spec("vit").config_dir("tiny")).save_pretrained(folder)
    AutoImageProcessor.from_pretrained(get_spec("vit").config_dir("tiny")).save_pretrained(folder)
    loaded = load_model(own_spec("mine", str(folder)), "full", "auto", "cpu", "float32")
    assert loaded.note == "random weights (no weights file in the checkpoint), architecture of my-vit"
