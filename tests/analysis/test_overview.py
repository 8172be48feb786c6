"""The every-head views' numbers in one pass (analysis.overview.HostViews(whole=True)) are exactly those of each
view computed on its own: the grid's tiles and rows, the layer averages, the head statistics."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from analysis.overview import HostViews, layer_average, pooled_maps

LONG = " ".join(f"the {w} near the old {v} keeps {i} quiet stones" for i, (w, v) in
                enumerate(zip(["river", "garden", "lamp", "cloud", "window"] * 2, ["mirror", "candle", "island"] * 4)))


def assert_same_pooled(a, b):
    assert (a.block, a.shape, a.rows.width) == (b.block, b.shape, b.rows.width)
    np.testing.assert_array_equal(a.tiles, b.tiles)
    for field in ("top", "weight", "positive", "live"):
        np.testing.assert_array_equal(getattr(a.rows, field), getattr(b.rows, field), err_msg=field)


def assert_same_views(att, ids=None):
    one, each = HostViews(None, whole=True), HostViews(None)
    assert_same_pooled(one.heads(att), each.heads(att))  # the one pass: heads() first
    assert_same_pooled(one.averages(att), each.averages(att))
    aligned = att.kind != "cross"
    ours, theirs = (views.numbers(att, aligned, [0] if aligned else None, ids) for views in (one, each))
    for column, values in theirs.items():
        np.testing.assert_array_equal(ours[column], values, err_msg=column)


@pytest.mark.parametrize("name, text", [("lm", LONG), ("mlm", LONG), ("dates", "the 3rd of March 2021"),
                                        ("minilm", LONG)])
def test_in_one_pass_the_numbers_are_those_of_each_view_on_the_shipped_models(registry, name, text):
    trace = registry.trace(name, text)
    for att in trace.attention.values():
        assert_same_views(att, trace.ids if att.kind in ("self", "encoder") else None)


def test_in_one_pass_maps_with_nan_negative_and_empty_rows_give_the_same_numbers():
    rng = np.random.default_rng(1)
    probs = rng.random((2, 3, 70, 70), dtype=np.float32)
    probs[0, 0, 5] = 0  # a row with no weight
    probs[1, 2, :, 3] = -0.25
    probs[1, 1, -1, -1] = np.nan  # one map with NaN: every map is read with NaN and below 0 as 0
    for mask in (np.ones((70, 70), bool), np.tril(np.ones((70, 70), bool))):
        att = SimpleNamespace(kind="self", probs=probs, mask=mask)
        assert_same_views(att, np.arange(70) % 9)


def test_the_pass_reads_each_map_once_in_order_even_when_nan_makes_it_start_again():
    maps = np.ones((2, 2, 9, 9), dtype=np.float32)
    maps[1, 0, 4, 4] = np.nan
    seen = []
    pooled = pooled_maps(maps, each=lambda r, c, m: seen.append((r, c, m.shape)))
    assert seen == [(0, 0, (9, 9)), (0, 1, (9, 9)), (1, 0, (9, 9)), (1, 1, (9, 9))]
    assert pooled.tiles[1, 0].max() == 1 and not np.isnan(pooled.tiles).any()


def test_the_layer_means_of_the_pass_are_numpys_mean_over_the_heads(registry):
    att = registry.trace("lm", LONG).attention["self"]
    views = HostViews(None, whole=True)
    views.heads(att)
    np.testing.assert_array_equal(views._kept[id(att.probs)].average(), layer_average(att.probs))


def test_a_small_stack_read_in_whole_stack_passes_gives_the_numbers_of_the_pass_over_each_map():
    """pooled_maps of at most WHOLE_STACK_CELLS weights (a 32-token /analyze) takes a few passes over the whole
    stack; `each` makes it read map by map, the way a long input is read: the same numbers either way."""
    from analysis.overview import WHOLE_STACK_CELLS

    rng = np.random.default_rng(2)
    probs = rng.random((2, 3, 40, 40), dtype=np.float32)
    assert probs.size <= WHOLE_STACK_CELLS
    probs[0, 1, 7] = 0  # a row with no weight
    probs[1, 0, :, 2] = -0.5
    with_nan = probs.copy()
    with_nan[1, 2, 3, 3] = np.nan
    for maps in (probs, with_nan):
        for mask in (None, np.ones((40, 40), bool), np.tril(np.ones((40, 40), bool))):
            assert_same_pooled(pooled_maps(maps, mask), pooled_maps(maps, mask, each=lambda *_: None))
    big = rng.random((1, 1, 70, 70), dtype=np.float32)  # pooled: 2 x 2 blocks
    assert_same_pooled(pooled_maps(big), pooled_maps(big, each=lambda *_: None))
