"""viz/narrow.py: the every-head grid and the tile strips carry the figure a phone draws instead (issue 55, item 6)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.overview import layer_average, pooled_maps
from viz import learning, narrow, tiles

TOKENS = ["the", " cat", " sat", " on", " the", " mat"]


def weights(*shape) -> np.ndarray:
    p = np.tril(np.random.default_rng(0).random(shape, dtype=np.float32))
    return p / p.sum(-1, keepdims=True)


def phone_figure(fig) -> dict:
    """What a phone draws: layout.meta.narrow as the page gets it."""
    return json.loads(fig.to_json())["layout"]["meta"]["narrow"]


def tile_px(layout: dict) -> float:
    """A tile's width on a phone: the plot area PHONE_GRID_PX shared by the tiles and gaps of a row."""
    grid = layout["meta"]["tile_grid"]
    cells = grid["cols"] * grid["step_x"] - (grid["step_x"] - grid["width"])
    return narrow.PHONE_GRID_PX * grid["width"] / cells


def smollm2_grid(selected=(2, 1)):
    maps = pooled_maps(weights(30, 9, len(TOKENS), len(TOKENS)))
    grid = tiles.all_heads_overview(maps, TOKENS, TOKENS, selected=selected, kv_heads=3)
    return narrow.narrow_grid(grid, maps, TOKENS, TOKENS, selected[0], "self-attention", selected=selected, kv_heads=3)


def test_a_phone_gets_the_open_heads_layer_a_key_value_group_a_row():
    fig = smollm2_grid()
    assert len(fig.layout.meta["tiles"]) == 30 * 9  # the grid as the server drew it, for a wide screen
    phone = phone_figure(fig)["layout"]
    assert phone["meta"]["tiles"] == [f"L3 H{h}" for h in range(1, 10)]
    assert phone["meta"]["tile_grid"]["cols"] == 3
    assert tile_px(phone) >= narrow.TAP_PX
    assert phone["title"]["text"].startswith("Layer 3 of 30: its 9 heads (self-attention)<br>")
    assert "each row here is one group" in phone["title"]["text"].replace("<br>", " ")
    assert any("▶ L3 H2" in a["text"] for a in phone["annotations"]), "the head open is marked"
    assert phone["meta"]["alt"].startswith("Layer 3 of 30") and "9 maps" in phone["meta"]["alt"]


def test_the_phones_grid_carries_the_weights_of_its_layer_only():
    maps = pooled_maps(weights(4, 4, len(TOKENS), len(TOKENS)))
    fig = narrow.narrow_grid(tiles.all_heads_overview(maps), maps, TOKENS, TOKENS, 1, "self-attention")
    trace = phone_figure(fig)["data"][0]
    assert trace["meta"]["z_divisor"] == 100  # whole hundredths, as the grid travels
    z = np.frombuffer(__import__("base64").b64decode(trace["z"]["bdata"]), np.uint8).reshape(
        [int(n) for n in trace["z"]["shape"].split(",")])
    t = len(TOKENS)
    label_rows = z.shape[0] // 2 - t  # two rows of two tiles
    first = z[label_rows:label_rows + t, :t]
    assert np.array_equal(first, np.rint(maps.tiles[1, 0] * 100).astype(np.uint8))


@pytest.mark.parametrize("count, columns", [(30, 4), (4, 2), (12, 4), (9, 3), (1, 1)])
def test_a_strip_wraps_into_rows_a_phone_holds(count, columns):
    maps = pooled_maps(layer_average(weights(count, 2, len(TOKENS), len(TOKENS)))[None])
    names = [f"L{i + 1} mean" for i in range(count)]
    fig = narrow.narrow_strip(tiles.layer_average_overview(maps), maps, names, "Average")
    phone = phone_figure(fig)["layout"]
    assert phone["meta"]["tile_grid"]["cols"] == columns
    assert [n for n in phone["meta"]["tiles"] if n] == names
    assert tile_px(phone) >= narrow.TAP_PX


def test_the_learning_snapshots_wrap_on_a_phone():
    fig = learning.snapshots_strip(weights(6, len(TOKENS), len(TOKENS)), [1, 10, 50, 100, 450, 500])
    phone = phone_figure(fig)["layout"]
    assert [n for n in phone["meta"]["tiles"] if n] == ["step 1", "step 10", "step 50", "step 100", "step 450",
                                                        "step 500"]
    assert phone["meta"]["tile_grid"]["cols"] == 3


def test_a_phones_text_alternative_is_what_its_maps_alone_would_give():
    """The phone's figure takes each head's description from the every-head grid's (viz.describe.carry_described):
    the same words as describing that layer's maps afresh, for maps of every kind describe_rows tells apart
    (one clear place, spread, a masked row)."""
    from viz import describe

    rng = np.random.default_rng(3)
    p = weights(4, 4, len(TOKENS), len(TOKENS))
    p[0, 1] = np.eye(len(TOKENS), dtype=np.float32)  # itself
    p[1, 2] = np.eye(len(TOKENS), k=-1, dtype=np.float32)
    p[1, 2, 0, 0] = 1  # the previous token, the first row on itself
    p[2, 3] = np.tril(rng.random((len(TOKENS), len(TOKENS)), dtype=np.float32))
    p[2, 3] /= p[2, 3].sum(-1, keepdims=True)
    p[3, 0, 2] = 0  # a row with no weight drawn
    maps = pooled_maps(p)
    for layer in range(4):
        grid = tiles.all_heads_overview(maps, TOKENS, TOKENS)  # describes every head (kept with maps.rows)
        fig = narrow.narrow_grid(grid, maps, TOKENS, TOKENS, layer, "self-attention")
        picks = [layer * 4 + head for head in range(4)]
        r = maps.rows
        fresh = describe.RowSummary(top=r.top[picks], weight=r.weight[picks], positive=r.positive[picks],
                                    live=r.live[picks], width=r.width)
        title = phone_figure(fig)["layout"]["title"]["text"]
        assert phone_figure(fig)["layout"]["meta"]["alt"] == describe.grid_alt(
            title, fresh, [[f"L{layer + 1} H{head + 1}" for head in range(4)]])


@pytest.mark.parametrize("selected", [(0, 3), (0, 0), (5, 11)])
def test_the_open_tiles_outline_stays_inside_the_grid_clear_of_the_colour_bar(selected):
    """minilm (6 layers × 12 heads) on a phone: the open tile, last in its row, had its outline run past the grid's
    area (cut there) onto the colour bar beside it; on a wide screen, so did head 12's. Each side of the outline, its
    stroke included, lies inside the x axis's range with at least 2 px to spare, at the width the tiles are drawn for."""
    maps = pooled_maps(weights(6, 12, len(TOKENS), len(TOKENS)))
    grid = tiles.all_heads_overview(maps, TOKENS, TOKENS, selected=selected)
    fig = narrow.narrow_grid(grid, maps, TOKENS, TOKENS, selected[0], "self-attention", selected=selected)
    for layout, width_px in ((json.loads(fig.to_json())["layout"], tiles.GRID_PX), (phone_figure(fig)["layout"],
                                                                                     narrow.PHONE_GRID_PX)):
        (outline,) = layout["shapes"]
        low, high = layout["xaxis"]["range"]
        px = width_px / (high - low)  # at most the px of a column: the tiles fill at most width_px
        room = outline["line"]["width"] / 2 + 2
        assert (outline["x0"] - low) * px >= room and (high - outline["x1"]) * px >= room, (selected, outline, low, high)
