import numpy as np
import pytest

from tests import tolerances
from viz import heatmap, multihead, panels, tiles


def causal(t: int, seed: int = 0, layers: int = 2, heads: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    mask = np.tril(np.ones((t, t), dtype=bool))
    probs = rng.random((layers, heads, t, t)).astype(np.float32) * mask
    return probs / probs.sum(-1, keepdims=True), mask


def test_one_head_puts_tokens_on_both_axes_by_position_with_a_fixed_colour_scale():
    probs, mask = causal(4)
    tokens = ["<s>", "the", "cat", "the"]
    fig = heatmap.attention_heatmap(probs[0, 0], tokens, tokens, title="L1 H1", mask=mask)
    trace = fig.data[0]
    assert (trace.zmin, trace.zmax) == (0.0, 1.0)
    assert list(fig.layout.xaxis.tickvals) == [0, 1, 2, 3]
    assert list(fig.layout.xaxis.ticktext) == ["&lt;s&gt;", "the", "cat", "the"]
    assert list(fig.layout.yaxis.ticktext) == list(fig.layout.xaxis.ticktext)
    assert fig.layout.yaxis.autorange == "reversed"  # first query on top
    assert fig.layout.height and fig.layout.height >= 300
    assert trace.text[3][1] == "the → the"
    assert "%{z" in trace.hovertemplate
    z = np.asarray(trace.z)
    assert z.dtype == np.float32
    assert np.isnan(z[0, 1]) and z[1, 0] == probs[0, 0, 1, 0]  # masked future left blank; the float32 weight as it is


def test_one_head_rejects_wrong_shapes_with_a_fix():
    probs, _ = causal(3)
    with pytest.raises(ValueError, match="2 dimensions"):
        heatmap.attention_heatmap(probs, ["a"] * 3, ["a"] * 3)
    with pytest.raises(ValueError, match="query labels"):
        heatmap.attention_heatmap(probs[0, 0], ["a"] * 2, ["a"] * 3)
    with pytest.raises(ValueError, match="key labels"):
        heatmap.attention_heatmap(probs[0, 0], ["a"] * 3, ["a"] * 4)


def test_all_heads_are_one_trace_with_every_tile_named_and_placed():
    t, layers, heads = 5, 2, 3
    probs, mask = causal(t, layers=layers, heads=heads)
    fig = tiles.all_heads_grid(probs, ["x"] * t, ["x"] * t, mask=mask)
    assert len(fig.data) == 1, "one tiled heatmap, not a trace per subplot"
    names = [a.text for a in fig.layout.annotations]
    assert names == [f"<b>L{l} H{h}</b>" for l in range(1, layers + 1) for h in range(1, heads + 1)]
    big = np.asarray(fig.data[0].z)
    assert big.dtype == np.float32, "the overview reads as float32, rounded to 0.01 (it travels as hundredths)"
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0, 1), "the 0..1 scale of every other view"
    assert list(fig.data[0].colorbar.ticktext) == ["0", "0.25", "0.5", "0.75", "1"]
    assert "%{z:.2f}" in fig.data[0].hovertemplate and "%" not in fig.data[0].hovertemplate.replace("%{", "")
    # every tile's values appear exactly once (rounded to 0.01, as np.round gives in float32), with gaps between tiles:
    # the same numbers, compared as one sorted list (not their sums at a tolerance)
    expected = np.round(probs * mask, 2).astype(np.float32)
    np.testing.assert_array_equal(np.sort(big[~np.isnan(big)]), np.sort(expected.ravel()))
    assert big.shape[0] > layers * t and big.shape[1] > heads * t
    # the last tile (layer 2, head 3) sits in the bottom-right corner
    np.testing.assert_array_equal(big[-t:, -t:], expected[-1, -1])
    assert fig.layout.height and fig.layout.height > 0


def test_layer_average_keeps_rows_summing_to_one():
    probs, mask = causal(6)
    average = tiles.layer_average(probs)
    assert average.shape == (2, 6, 6)
    # each head's float32 row within weights_sum of 1 (its own sum and division, and the sum here), and the float32
    # mean over 3 heads (3 roundings of 2^-24 on each weight, so on the row's 1)
    np.testing.assert_allclose(average.sum(-1), 1.0, atol=tolerances.weights_sum(6) + 3 * tolerances.EPS32 / 2, rtol=0)
    # two float32 means of the same 3 weights, each sum in its own order, each division rounded once
    expected = probs[1].mean(0)
    allowed = tolerances.summed(3, probs[1].astype(np.float64).sum(0)) / 3 + tolerances.EPS32 * expected
    tolerances.assert_within(average[1], expected, allowed)
    fig = tiles.layer_average_grid(probs, mask=mask)
    assert [a.text for a in fig.layout.annotations] == ["<b>L1 mean</b>", "<b>L2 mean</b>"]


def test_grid_rejects_a_single_head():
    probs, _ = causal(3)
    with pytest.raises(ValueError, match=r"\(L, H|4 dimensions"):
        tiles.all_heads_grid(probs[0, 0])


def test_cross_attention_shapes_are_allowed():
    probs = np.full((1, 2, 3, 5), 0.2, dtype=np.float32)
    fig = heatmap.attention_heatmap(probs[0, 1], ["a", "b", "c"], list("vwxyz"))
    assert list(fig.layout.xaxis.tickvals) == [0, 1, 2, 3, 4]
    assert len(tiles.all_heads_grid(probs).layout.annotations) == 2


def test_a_long_input_labels_every_kth_token_and_says_so():
    n = 256
    tokens = [f"w{i}" for i in range(n)]
    fig = heatmap.attention_heatmap(np.full((n, n), 1 / n, dtype=np.float32), tokens, tokens)
    # 2.2-px cells: every 7th key (slanted labels of 10 px need 12 px apart) and every 6th query labelled, in the
    # smallest readable text, never less (they were every 4th in 8 px)
    assert fig.layout.xaxis.ticktext[:2] == ("w0", "w7") and len(fig.layout.xaxis.tickvals) == 37
    assert fig.layout.xaxis.title.text.endswith("every 7th labelled")
    assert fig.layout.yaxis.title.text.endswith("every 6th labelled")
    assert min(fig.layout.xaxis.tickfont.size, fig.layout.yaxis.tickfont.size) >= 10  # a page's least
    # the hover still names both tokens of every cell: one name per row and column, not a string per cell
    trace = fig.data[0]
    assert trace.text is None and trace.x[5] == "w5 (#6)" and trace.y[255] == "w255 (#256)"  # from 1
    assert "%{y} → %{x}" in trace.hovertemplate
    assert list(fig.layout.xaxis.tickvals[:2]) == ["w0 (#1)", "w7 (#8)"]  # ticks name their categories
    short = heatmap.attention_heatmap(np.eye(3), ["a", "b", "c"], ["a", "b", "c"])
    assert "labelled" not in short.layout.xaxis.title.text


def test_a_pooled_tile_keeps_the_maximum_of_each_block():
    """Past TILE_CELLS tokens a tile is max-pooled: a one-token stripe keeps its full strength."""
    n, layers, heads = 200, 2, 2
    rng = np.random.default_rng(3)
    probs = (rng.random((layers, heads, n, n)) * 0.05).astype(np.float32)
    probs[1, 0, :, 77] = 0.93  # a sink on one key: a one-token stripe
    probs[0, 1, 150, 3] = 0.61  # a single strong cell
    block = heatmap.pool_block(n)
    assert block == 4 and -(-n // block) <= heatmap.TILE_CELLS
    pooled = heatmap.max_pool(probs, block)
    assert pooled.shape == (layers, heads, 50, 50)
    for layer, head, row, col in [(0, 0, 0, 0), (0, 1, 37, 0), (1, 0, 12, 19), (1, 1, 49, 49)]:
        expected = probs[layer, head, 4 * row:4 * row + 4, 4 * col:4 * col + 4].max()
        assert pooled[layer, head, row, col] == expected
    assert (pooled[1, 0, :, 77 // 4] == np.float32(0.93)).all()  # the stripe survives, at full strength
    assert pooled[0, 1, 150 // 4, 0] == np.float32(0.61)
    fig = tiles.all_heads_grid(probs, [f"q{i}" for i in range(n)], [f"k{i}" for i in range(n)])
    big = np.asarray(fig.data[0].z)
    assert np.nanmax(big) == np.float32(0.93) and "max pooling" in fig.layout.title.text and "4 × 4" in fig.layout.title.text
    assert "k76…k79 (#77-80)" in fig.data[0].x[19] and "largest" in fig.data[0].hovertemplate
    # a length that is not a whole number of blocks: the last block takes what it has
    edge = heatmap.max_pool(np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5), 2)
    np.testing.assert_array_equal(edge[0, 0], [[6, 8, 9], [16, 18, 19], [21, 23, 24]])


def test_short_inputs_are_not_pooled():
    probs, mask = causal(heatmap.TILE_CELLS)
    fig = tiles.all_heads_grid(probs, mask=mask)
    assert "pooling" not in fig.layout.title.text
    z = np.asarray(fig.data[0].z)  # every weight, unpooled, rounded to 0.01: the same numbers, each once
    np.testing.assert_array_equal(np.sort(z[~np.isnan(z)]), np.sort(np.round(probs * mask, 2).ravel()))


def test_no_zero_line_crosses_the_masked_cells():
    """Row 0 sits at y = 0: Plotly's zero line ran through it, drawn over the grey (masked) cells."""
    probs, mask = causal(5)
    one = heatmap.attention_heatmap(probs[0, 0], ["x"] * 5, ["x"] * 5, mask=mask)
    row = panels.heatmap_row([panels.Panel(probs[0, 0], "a", None, None), panels.Panel(probs[0, 1], "b", None, None)])
    axes = [one.layout.xaxis, one.layout.yaxis, row.layout.xaxis, row.layout.yaxis, row.layout.xaxis2, row.layout.yaxis2]
    assert all(axis.zeroline is False for axis in axes)


def test_long_row_names_get_the_room_they_need():
    """Classifier's "share of the pooled vector (max)" was cut to "the pooled vector (max)" at the left edge."""
    z = np.full((2, 3), 0.5, np.float32)
    short = panels.heatmap_row([panels.Panel(z, "", ["rollout", "attention"], ["a", "b", "c"])])
    long = panels.heatmap_row([panels.Panel(z, "", ["share of the pooled vector (max)", "rollout"], ["a", "b", "c"])])
    assert long.layout.margin.l >= 0.6 * 12 * len("share of the pooled vector (max)") > short.layout.margin.l


def test_a_layers_heads_wrap_in_rows_of_four_with_their_tokens():
    """Multi-head: minilm's 12 heads in one strip were too small to read, and had no token labels."""
    from viz import multihead

    probs, mask = causal(5, layers=1, heads=12)
    fig = multihead.heads_figure(probs[0], 0, mask=mask, queries=list("abcde"), keys=list("abcde"))
    names = [a.text for a in fig.layout.annotations]
    assert names == [f"<b>head {h}</b>" for h in range(1, 13)]
    assert len(set(fig.data[0].y)) == len(fig.data[0].y), "every row of the big matrix has its own name"
    assert list(fig.layout.yaxis.ticktext) == list("abcde") * 3 and list(fig.layout.xaxis.ticktext) == list("abcde") * 4
    assert fig.layout.yaxis.visible and fig.layout.xaxis.visible


def test_many_columns_of_tiles_get_a_figure_as_tall_as_the_tiles_drawn():
    """minilm's 6 × 12 grid: 55-px tiles sat in a figure sized for 170-px ones (650 px blank)."""
    probs, _ = causal(12, layers=6, heads=12)
    tall = tiles.all_heads_grid(probs).layout.height
    assert tall < 6 * heatmap.GRID_PX / 12 * 1.6 + 150


def tile_at(grid: dict, i: int, j: int) -> int:
    """The tile a cell (row i, column j) of the big matrix belongs to, as ui/runtime/tile_click.py's page
    script reads it from meta.tile_grid (a gap goes to the nearer tile)."""
    col, within = divmod(j, grid["step_x"])
    if within >= grid["width"] + (grid["step_x"] - grid["width"]) / 2:
        col += 1
    return (i // grid["step_y"]) * grid["cols"] + min(col, grid["cols"] - 1)


@pytest.mark.parametrize("t", [5, 200])  # one cell a token, and max-pooled
def test_the_grid_says_which_tile_each_cell_is_in(t):
    layers, heads = 3, 4
    probs = np.zeros((layers, heads, t, t), dtype=np.float32)
    for k in range(layers * heads):  # every tile filled with its own number
        probs[k // heads, k % heads] = (k + 1) / 100
    fig = tiles.all_heads_grid(probs, [f"q{i}" for i in range(t)], [f"k{i}" for i in range(t)])
    grid, names = fig.layout.meta["tile_grid"], fig.layout.meta["tiles"]
    big = np.asarray(fig.data[0].z)
    for i, j in zip(*np.nonzero(np.nan_to_num(big))):
        assert names[tile_at(grid, i, j)] == names[round(float(big[i, j]) * 100) - 1]
    # a cell of a tile's name (above it) and of a gap open a tile beside it
    assert names[tile_at(grid, 0, 0)] == "L1 H1"
    assert names[tile_at(grid, big.shape[0] - 1, big.shape[1] - 1)] == "L3 H4"
    assert names[tile_at(grid, 0, grid["width"])] in ("L1 H1", "L1 H2")


def test_a_heatmap_fits_a_height_with_smaller_cells_not_a_cut():
    """Presenter mode: a tab's main figure lies whole on a 720-px screen (tests/e2e/test_e2e_lecture_hall.py)."""
    probs, mask = causal(20)
    tokens = [f"w{i}" for i in range(20)]
    tall = heatmap.attention_heatmap(probs[0, 0], tokens, tokens, mask=mask, font_size=20)
    fitted = heatmap.attention_heatmap(probs[0, 0], tokens, tokens, mask=mask, font_size=20, max_height=440)
    assert tall.layout.height > 440 and fitted.layout.height == 440
    assert fitted.layout.yaxis.scaleanchor == "x", "the cells stay square: Plotly shrinks them into the room left"
    assert fitted.layout.xaxis.tickfont.size < tall.layout.xaxis.tickfont.size, "labels as small as the cells"
    short = heatmap.attention_heatmap(probs[0, 0, :3, :3], tokens[:3], tokens[:3], font_size=20, max_height=440)
    assert short.layout.height <= 440 and short.layout.xaxis.tickfont.size == 20


def test_no_taller_lowers_only_a_taller_figure():
    from viz.figure import no_taller

    probs, mask = causal(12)
    fig = tiles.all_heads_grid(probs, mask=mask)
    height = fig.layout.height
    assert no_taller(fig, None).layout.height == height and no_taller(fig, height + 100).layout.height == height
    assert no_taller(tiles.all_heads_grid(probs, mask=mask), 200).layout.height == 200
    assert no_taller(fig, 200).layout.height == 200, "a figure already built by plotly.py too"


@pytest.mark.parametrize("heads, kv_heads, said", [
    (9, 3, "H1–H3, H4–H6 and H7–H9 each share one key/value head (3 for 9 query heads)"),
    (4, 2, "H1–H2 and H3–H4 each share one key/value head (2 for 4 query heads)"),
    (4, 1, "all 4 query heads share one key/value head")])
def test_the_grid_boxes_the_query_heads_that_share_keys_and_values(heads, kv_heads, said):
    t, layers = 6, 2
    probs, mask = causal(t, layers=layers, heads=heads)
    plain = tiles.all_heads_grid(probs, ["x"] * t, ["x"] * t, mask=mask)
    fig = tiles.all_heads_grid(probs, ["x"] * t, ["x"] * t, mask=mask, kv_heads=kv_heads, selected=(1, 0))
    assert said in fig.layout.title.text and said in fig.layout.meta["alt"]
    boxes = [s for s in fig.layout.shapes if s.line.dash == "dot"]
    assert len(boxes) == kv_heads
    grid = fig.layout.meta["tile_grid"]
    group = heads // kv_heads
    for g, box in enumerate(boxes):  # each box spans exactly its group's columns of tiles, every layer
        first, last = g * group, (g + 1) * group - 1
        assert box.x0 < first * grid["step_x"] < last * grid["step_x"] + grid["width"] - 1 < box.x1
        assert box.x1 < (last + 1) * grid["step_x"] and (first == 0 or box.x0 > (first - 1) * grid["step_x"] + grid["width"] - 1)
        assert box.y0 < 0 and box.y1 >= layers * grid["step_y"] - 1
    assert fig.layout.height > plain.layout.height  # room for the title's second line
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), np.asarray(plain.data[0].z))  # the weights unchanged
    # one key/value head per query head (or none given): nothing boxed, nothing said
    for same in (tiles.all_heads_grid(probs, kv_heads=heads), tiles.all_heads_grid(probs)):
        assert not [s for s in (same.layout.shapes or ()) if s.line.dash == "dot"]
        assert "share" not in same.layout.title.text


def test_the_grids_gaps_and_title_rows_have_no_hover():
    """Only a tile's cells are hovered: the gaps between tiles and the rows under each tile's name are gaps
    (NaN, hoverongaps off), so the hover never shows the axis's internal names ("title row 16 → gap 44")."""
    t, layers, heads = 5, 2, 3
    probs = np.full((layers, heads, t, t), 1 / t, dtype=np.float32)
    fig = tiles.all_heads_grid(probs, [f"w{i}" for i in range(t)], [f"w{i}" for i in range(t)])
    trace = fig.data[0]
    big = np.asarray(trace.z)
    assert trace.hoverongaps is False
    for axis, names in (("x", trace.x), ("y", trace.y)):
        internal = [i for i, name in enumerate(names) if name.startswith(("gap", "title row"))]
        assert internal, f"the {axis} axis has gaps"
        cut = big[:, internal] if axis == "x" else big[internal, :]
        assert np.isnan(cut).all(), f"every {axis} gap is a gap, not a 0 with a hover"
    assert np.count_nonzero(~np.isnan(big)) == layers * heads * t * t


def test_a_long_input_on_one_screen_keeps_its_width_and_readable_labels():
    """500 tokens in presenter mode's first screen: square cells would be half a pixel (a head 260 px wide with
    4-px labels); the cells go wider than tall instead, with fewer labels in the figure's font, and the note of
    which queries are labelled moves to the keys' title (the rows' title was cut)."""
    from viz.heatmap import attention_heatmap

    t = 504
    probs = np.full((t, t), 1.0 / t, dtype=np.float32)
    tokens = [f"tok{i}" for i in range(t)]
    layout = attention_heatmap(probs, tokens, tokens, "L1 H1", font_size=20, max_height=440).to_plotly_json()["layout"]
    assert "scaleanchor" not in layout["yaxis"]
    assert min(layout["xaxis"]["tickfont"]["size"], layout["yaxis"]["tickfont"]["size"]) >= 14  # a projector's least
    x_step, y_step = (-(-t // len(layout[axis]["tickvals"])) for axis in ("xaxis", "yaxis"))
    assert layout["xaxis"]["title"]["text"] == f"keys, every {x_step}th labelled; queries, every {y_step}th labelled"
    assert len(layout["yaxis"]["tickvals"]) <= 14  # rows of under a pixel: a label every line of 14-px text
    assert layout["yaxis"]["title"]["text"] == "queries (looking)"
    short = attention_heatmap(probs[:8, :8], tokens[:8], tokens[:8], "L1 H1", font_size=20, max_height=440)
    assert short.to_plotly_json()["layout"]["yaxis"]["scaleanchor"] == "x"  # a short input keeps square cells


def test_multihead_at_nine_heads_fills_the_projector_with_no_blank_tiles_and_draws_the_sharing():
    """smollm2 in presenter mode: nine tiles in three rows of four (three of them empty placeholders) took a third
    of the width, their token labels overprinted, and nothing said which heads share keys and values."""
    t = 14
    probs = np.random.default_rng(1).random((9, t, t)).astype(np.float32)
    tokens = [f"▁Mary{i}" for i in range(t)]
    fig = multihead.heads_figure(probs, 0, font_size=20, queries=tokens, keys=tokens, kv_heads=3, max_height=440)
    layout = fig._plain_parts()[1]
    grid = layout["meta"]["tile_grid"]
    assert grid["cols"] == 9, "one row of nine fills the width"
    names = layout["meta"]["tiles"]
    assert all(names) and len(names) == 9, "no placeholder tiles"
    assert "H1–H3, H4–H6 and H7–H9 each share one key/value head" in layout["title"]["text"]
    boxes = [shape for shape in layout["shapes"] if shape["line"].get("dash") == "dot"]
    assert len(boxes) == 3 and boxes[0]["x1"] < boxes[1]["x0"], "a dotted box per group of three"
    # token labels stand apart: a label per k-th token, k cells leaving 1.25 of the font's size, and the axis says so
    size = layout["yaxis"]["tickfont"]["size"]
    assert size >= 14
    y_names = fig._plain_parts()[0][0]["y"]
    rows = [y_names.index(v) for v in layout["yaxis"]["tickvals"]]
    cell_px = (layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]) / len(y_names)
    assert min(b - a for a, b in zip(rows, rows[1:])) * cell_px >= size, (rows, cell_px)
    assert "labelled" in layout["xaxis"]["title"]["text"]
    page = multihead.heads_figure(probs, 0, queries=tokens, keys=tokens, kv_heads=3)._plain_parts()[1]
    assert page["meta"]["tile_grid"]["cols"] == 3, "on a page a row per key/value head"
    odd = multihead.heads_figure(np.random.default_rng(2).random((7, 5, 5)).astype(np.float32), 0)
    z = np.asarray(odd._plain_parts()[0][0]["z"], dtype=float)
    grid = odd._plain_parts()[1]["meta"]["tile_grid"]
    assert odd._plain_parts()[1]["meta"]["tiles"][-1] == "" and len(odd._plain_parts()[1]["annotations"]) == 7
    last = z[-5:, 3 * grid["step_x"]:3 * grid["step_x"] + grid["width"]]
    assert np.isnan(last).all(), "the eighth tile of seven heads is blank, not an empty map"


def test_thirty_layer_averages_name_every_kth_tile_and_say_so():
    # smollm2's 30 layers in presenter mode's 20-px type: "L1 mean" ran into "L2 mean" (issue 55's walk)
    probs = np.full((30, 2, 8, 8), 1 / 8, dtype=np.float32)
    fig = tiles.layer_average_grid(probs, font_size=20)
    shown = [a for a in fig.layout.annotations if a.visible is not False]
    step = round((shown[1].x - shown[0].x) / fig.layout.meta["tile_grid"]["step_x"])
    assert 1 < step and len(fig.layout.annotations) == 30  # every tile still has its name (the hover, a selection)
    assert [a.text for a in shown][:2] == ["<b>L1 mean</b>", f"<b>L{1 + step} mean</b>"]
    assert "labelled" in fig.layout.title.text
    # the names shown are apart: each bold name's width (about 0.6 of the font size a character) fits its pitch
    cell_px = (fig.layout.height - 60 - 3 * 20) / step_y_of(fig)  # the strip's height over its rows of cells
    assert cell_px * step * fig.layout.meta["tile_grid"]["step_x"] >= 0.6 * len("L30 mean") * 20
    # the colour bar's two labels ("1" was drawn on "0" beside a strip) and the first name (its "L" cut off) have room
    bar = fig.data[0].colorbar
    assert bar.title.side == "right" and bar.len == 1 and list(bar.tickvals) == [0, 1]  # the title off its length
    assert fig.layout.margin.l >= (0.6 * len("L1 mean") * 20 - cell_px * 8) / 2
    # two layers have room for every name
    assert all(a.visible is not False for a in tiles.layer_average_grid(probs[:2], font_size=20).layout.annotations)


def step_y_of(fig) -> int:
    return fig.layout.meta["tile_grid"]["step_y"]
