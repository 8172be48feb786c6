"""The every-head views' numbers computed where the trace is (experiments/view_numbers.py, what a GPU runs) agree with
the numpy reference (analysis/overview.py, analysis/head_stats.head_numbers) within float32 sums' bound, on a CPU: on the
shipped models (causal lm, masked mlm, the dates model's encoder, masked decoder and cross-attention, minilm)
and a tiny Llama with grouped-query attention and a <s> token, short and long enough to be max-pooled with a
block cut short by the edge."""
from __future__ import annotations

import base64
import json

import numpy as np
import pytest
import torch

from analysis import overview
from analysis.overview import HostViews, pooled_maps
from experiments import view_numbers
from experiments.view_numbers import DeviceViews, to_host
from tests import tolerances
from tests.llama_checkpoints import save_tiny
from ui.tabs import attention
from model.registry import ModelRegistry

# Each figure is a float32 sum (or mean) of at most 512 nonnegative weights, or of their logs times the weights: numpy
# and torch add them in their own orders, so they differ by at most 2 * 511 * 2^-24 of the sum (tests/tolerances.py);
# atol the same for figures near 0 whose terms add to at most 1.
TOLERANCE = dict(rtol=float(tolerances.summed(512, 1.0)), atol=float(tolerances.summed(512, 1.0)))
# the table rounds those numbers to 3 places (np.round: each moved by at most half a thousandth): the rounded ones
# within the unrounded ones' TOLERANCE (of a value moved by up to half a thousandth) plus one thousandth, and each
# float64 thousandth's own rounding (half a spacing: 2^-53 relative)
ROUNDED = dict(rtol=TOLERANCE["rtol"] + tolerances.EPS64,
               atol=TOLERANCE["atol"] + 1e-3 + TOLERANCE["rtol"] * 5e-4)
SHORT = "The cat sat on the mat because it was tired, and the cat slept."
# 100-300 tokens: past 64 the overview max-pools, and no length here is a multiple of its block
LONG = " ".join(f"the {w} near the old {v} keeps {i} quiet stones" for i, (w, v) in
                enumerate(zip(["river", "garden", "lamp", "cloud", "window", "forest", "engine"] * 2,
                              ["mirror", "candle", "island", "harbor", "ladder", "pencil"] * 2)))


def _check_rows(host: overview.RowSummary, device: overview.RowSummary, maps: np.ndarray, same_maps: bool):
    assert device.width == host.width
    np.testing.assert_array_equal(device.live, host.live)
    np.testing.assert_array_equal(device.positive, host.positive)
    np.testing.assert_allclose(device.weight, host.weight, **TOLERANCE)
    if same_maps:  # the very same weights: the same key, the first of equals
        np.testing.assert_array_equal(device.top, host.top)
    else:  # averages summed in another order: the key each found holds the row's largest weight
        flat = np.nan_to_num(maps.reshape(-1, *maps.shape[-2:]))
        at = np.take_along_axis(flat, device.top[..., None], axis=-1)[..., 0]
        np.testing.assert_allclose(at, host.weight, **TOLERANCE)


def _check_pooled(host: overview.PooledMaps, device: overview.PooledMaps, maps, same_maps: bool):
    assert (device.block, device.shape) == (host.block, host.shape)
    assert device.tiles.shape == host.tiles.shape and device.tiles.dtype == np.float32
    np.testing.assert_allclose(device.tiles, host.tiles, **TOLERANCE)
    _check_rows(host.rows, device.rows, maps, same_maps)


def _check_views(registry: ModelRegistry, name: str, text: str) -> int:
    """Every kind of the model's attention on `text`, both ways; the longest query side seen."""
    host = HostViews(registry.trace(name, text))
    device = DeviceViews(registry.kept(name, text))
    longest = 0
    for kind, att in host.trace.attention.items():
        kept = device.trace.attention[kind]
        assert isinstance(kept.probs, torch.Tensor) and not isinstance(att.probs, torch.Tensor)
        np.testing.assert_array_equal(kept.mask, att.mask)
        _check_pooled(host.heads(att), device.heads(kept), np.where(att.mask, att.probs, 0), same_maps=True)
        average = np.where(att.mask, att.probs.mean(1), 0)
        _check_pooled(host.averages(att), device.averages(kept), average, same_maps=False)
        aligned = kind != "cross"
        special = [0] if aligned else None
        ids = host.trace.ids if kind in ("self", "encoder") else None
        numbers = host.numbers(att, aligned, special, ids)
        twins = device.numbers(kept, aligned, special, ids)
        assert twins.keys() == numbers.keys()
        for column, values in numbers.items():
            assert twins[column].shape == (att.n_layers, att.n_heads), column
            np.testing.assert_allclose(twins[column], values, equal_nan=True, err_msg=column, **TOLERANCE)
        for layer, head in {(0, 0), (att.n_layers - 1, att.n_heads - 1)}:
            # one head's weights, from the same forward pass run twice on the same input (kept, and on the host)
            np.testing.assert_array_equal(device.head(kept, layer, head), host.head(att, layer, head))
        longest = max(longest, att.probs.shape[-2])
    return longest


@pytest.mark.parametrize("name", ["lm", "mlm", "dates", "minilm"])
def test_the_device_numbers_equal_the_numpy_reference_on_the_shipped_models(registry, name):
    kinds = registry.kinds(name)
    assert _check_views(registry, name, SHORT) > 4
    if len(kinds) == 1:  # the dates model reads dates, not long prose
        lengths = [_check_views(registry, name, text) for text in (LONG, LONG + " rain", LONG + " rain falls")]
        assert all(overview.pool_block(t) > 1 for t in lengths), lengths  # max-pooled
        assert any(t % overview.pool_block(t) for t in lengths), lengths  # a last block cut short by the edge


@pytest.fixture(scope="module")
def llama_registry(tmp_path_factory, model_assets):
    """A tiny Llama with grouped-query attention (4 query heads on 2 key/value heads) and a <s> token."""
    folder = save_tiny("llama", tmp_path_factory.mktemp("views") / "tiny-llama", bos=True, num_key_value_heads=2,
                       max_position_embeddings=512)
    loaded = ModelRegistry.load(model_assets, names=(), device="cpu", extra={"tiny-llama": str(folder)})
    assert not loaded.errors, loaded.errors
    return loaded


def test_the_device_numbers_equal_the_numpy_reference_on_a_grouped_query_llama(llama_registry):
    assert llama_registry.get("tiny-llama").config.kv_heads == 2
    for text in (SHORT, LONG):
        _check_views(llama_registry, "tiny-llama", text)


def test_the_twins_agree_on_hand_made_maps_with_nan_masked_cells_and_short_edges():
    """Maps no model makes: NaN cells, negative values, all-zero rows, a query side shorter than a block."""
    rng = np.random.default_rng(0)
    for rows, cols, t, s in [(2, 3, 5, 7), (1, 2, 3, 200), (2, 2, 130, 130), (1, 1, 1, 1)]:
        maps = rng.random((rows, cols, t, s), dtype=np.float32)
        maps[0, 0, 0] = 0  # a row with no weight
        maps[..., -1, -1] = np.nan
        if s > 1:
            maps[-1, -1, :, 1] = -0.5
        mask = rng.random((t, s)) > 0.3
        for m in (None, mask):
            host = pooled_maps(maps, m)
            device = view_numbers.pooled_maps(torch.from_numpy(maps), None if m is None else torch.from_numpy(m))
            shown = maps if m is None else np.where(m, maps, 0)
            assert device.tiles.shape == (rows, cols, -(-t // host.block), -(-s // host.block))
            _check_pooled(host, device, np.fmax(shown, 0), same_maps=True)


def test_on_the_device_path_the_attention_tab_shows_what_the_numpy_path_shows(registry, llama_registry):
    """The whole /analyze answer, with a head open, through a registry that reads the kept trace: the same figures
    (every hundredth within one, at a rounding edge), the same table within its rounding, the same detail view."""
    for source, name, text in [(registry, "lm", LONG), (registry, "dates", SHORT), (llama_registry, "tiny-llama", SHORT)]:
        device = ModelRegistry(source.assets, models=source.models, errors=source.errors,
                               histories=source.histories, views_on_device=True)
        for kind in source.kinds(name):
            host_out = attention.analyze(source, text, name, kind, layer=1, head=2)
            device_out = attention.analyze(device, text, name, kind, layer=1, head=2)
            assert device_out[0] == host_out[0] and device_out[1] == host_out[1] and device_out[5] == host_out[5]
            for ours, theirs in zip(device_out[2:4], host_out[2:4]):
                a, b = json.loads(ours.to_json()), json.loads(theirs.to_json())
                assert a["layout"]["meta"]["alt"] == b["layout"]["meta"]["alt"]
                z, w = (np.frombuffer(base64.b64decode(f["data"][0]["z"]["bdata"]), np.uint8) for f in (a, b))
                assert np.abs(z.astype(int) - w.astype(int)).max() <= 1
            for column, values in host_out[4].items():
                theirs = np.array(values, dtype=object)
                ours = np.array(device_out[4][column], dtype=object)
                if isinstance(values[0], str):  # head names and labels (measured on the unrounded numbers)
                    assert list(ours) == list(theirs), column
                else:
                    np.testing.assert_allclose(ours.astype(float), theirs.astype(float), equal_nan=True,
                                               err_msg=column, **ROUNDED)
            for layer, head in [(1, 1), (2, 2)]:
                ours = attention.show_head(device, text, name, layer, head, kind)
                theirs = attention.show_head(source, text, name, layer, head, kind)
                # one head's weights as the forward pass wrote them, on both paths (views.head slices them): exactly
                np.testing.assert_array_equal(np.asarray(ours.data[0]["z"]), np.asarray(theirs.data[0]["z"]))
        # the views that read every weight get the kept trace copied to the host: the same arrays
        full = device.trace(name, text)
        for kind, att in source.trace(name, text).attention.items():
            # the same forward pass run twice on the same input (its kept copy and the host's): the same numbers
            np.testing.assert_array_equal(full.attention[kind].probs, att.probs)
            np.testing.assert_array_equal(full.attention[kind].q, att.q)
        assert full.tokens == source.trace(name, text).tokens


def test_to_host_copies_every_tensor_of_a_kept_trace(registry):
    kept = registry.kept("lm", SHORT)
    host = to_host(kept)
    assert isinstance(kept.attention["self"].probs, torch.Tensor)
    for att in host.attention.values():
        for field in ("inputs", "q", "k", "v", "probs"):
            assert isinstance(getattr(att, field), np.ndarray) and getattr(att, field).dtype == np.float32
    assert isinstance(host.token_embeddings, np.ndarray)


def test_on_the_default_device_the_twins_agree_with_the_host_copy(model_assets):
    """On the device the tests run on (ATTENTION_DEVICE=cuda on a lent GPU: model.device), the kept trace's
    numbers against numpy's on its own copy on the host."""
    from model import api
    from model.device import default_device

    lm = api.load("lm", model_assets, device=default_device())
    kept = lm.trace(LONG, predictions=False, scores=False, on_device=True)
    assert kept.attention["self"].probs.device.type == default_device().type
    host, device = HostViews(to_host(kept)), DeviceViews(kept)
    att, on = host.trace.attention["self"], kept.attention["self"]
    _check_pooled(host.heads(att), device.heads(on), np.where(att.mask, att.probs, 0), same_maps=True)
    _check_pooled(host.averages(att), device.averages(on), np.where(att.mask, att.probs.mean(1), 0), same_maps=False)
    numbers, twins = host.numbers(att, True, [0], host.trace.ids), device.numbers(on, True, [0], host.trace.ids)
    for column, values in numbers.items():
        np.testing.assert_allclose(twins[column], values, equal_nan=True, err_msg=column, **TOLERANCE)
    np.testing.assert_array_equal(device.head(on, 1, 2), host.head(att, 1, 2))  # the kept weights and their copy
