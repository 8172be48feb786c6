"""The Generation tab's figures: their data contracts and text alternatives, from the numbers drawn."""
from __future__ import annotations

import numpy as np
import pytest

from viz import generation as viz


def parts(fig):
    return fig._plain_parts()


def test_the_row_marks_the_query_and_the_dropped_keys():
    row = np.array([0.0, 0.0, 0.7, 0.2, 0.1], dtype=np.float32)
    fig = viz.row_figure(row, ["<s>", "a", "<b>", "c", "d"], kept_from=2, title="Head L1 H1")
    data, layout = parts(fig)
    assert data[0]["marker"]["color"] == [viz.DROPPED, viz.DROPPED, viz.KEPT, viz.KEPT, viz.NEW]
    assert "&lt;b&gt;" in data[0]["text"]
    alt = layout["meta"]["alt"]
    assert "reads 3 keys" in alt and "0.70, on <b> (position 3)" in alt and "positions 1 to 2 have fallen out" in alt
    with pytest.raises(ValueError, match="one token per key position"):
        viz.row_figure(row, ["a"])


def test_the_cache_grows_and_drops():
    cells = viz.cache_cells(2, 3, total=8, seen=6, kept_from=2, new=1)
    assert cells.shape == (6, 8)
    s = viz.STATES
    assert list(cells[0]) == [s["dropped"]] * 2 + [s["kept"]] * 3 + [s["new"]] + [s["empty"]] * 2
    fig = viz.cache_figure(2, 3, 3, 8, 6, 2, 1, cache_bytes=4 * 96, per_token=96, title="cache")
    data, layout = parts(fig)
    assert "4 positions kept in each of 2 layers × 3 key/value heads" in layout["meta"]["alt"]
    assert "384 bytes (4 × 96 bytes per token)" in layout["meta"]["alt"]
    assert "positions 1 to 2 dropped" in layout["meta"]["alt"]


def test_the_cache_names_each_key_value_head_once_with_the_query_heads_it_serves():
    """smollm2: 90 lines labelled every third read "L1 kv1 (q 1–3)" … "L30 kv1": one KV head per layer, it seemed."""
    fig = viz.cache_figure(30, 3, 3, 20, 14, 0, 14, cache_bytes=14 * 46_080, per_token=46_080, title="cache",
                           font_size=20)
    data, layout = parts(fig)
    panels = [a["text"] for a in layout["annotations"]]
    assert panels == ["<b>kv head 1</b><br><b>queries 1–3</b>", "<b>kv head 2</b><br><b>queries 4–6</b>",
                      "<b>kv head 3</b><br><b>queries 7–9</b>"]
    z = np.asarray(data[0]["z"], dtype=float)
    assert z.shape[0] == 30  # a line per layer in every panel
    ticks = layout["yaxis"]["ticktext"]
    title = layout["yaxis"]["title"]["text"]
    assert ticks[0] == "L1" and (len(ticks) == 30 or "labelled" in title), (ticks, title)
    # every panel counts positions from 1
    assert layout["xaxis"]["ticktext"].count("1") == 3 and "0" not in layout["xaxis"]["ticktext"]
    hover = np.asarray(data[0]["text"], dtype=object)
    assert hover[29, 0] == "layer 30 · kv head 1 · query heads 1–3 · position 1: new"
    assert all(text == "" for text, value in zip(hover[0], z[0]) if np.isnan(value))  # the gaps have no hover
    one = parts(viz.cache_figure(4, 4, 1, 5, 5, 0, 5, cache_bytes=1, per_token=1, title="lm"))[1]
    assert [a["text"] for a in one["annotations"]][1] == "<b>kv head 2</b><br><b>query head 2</b>"


def test_positions_are_counted_from_one():
    """Generation's axis counted from 0 while its text said "▁of (position 9)"."""
    row = np.array([0.1, 0.2, 0.7], dtype=np.float32)
    data, layout = parts(viz.row_figure(row, ["a", "b", "c"], title="Head L1 H1"))
    assert list(data[0]["x"]) == [1, 2, 3] and layout["xaxis"]["tickvals"] == [1, 2, 3]
    assert "0.70, on c (position 3)" in layout["meta"]["alt"]


def test_the_strip_names_shared_heads_and_hides_in_quiz_mode():
    rows = np.array([[0.1, 0.9], [0.8, 0.2]], dtype=np.float32)
    data, layout = parts(viz.strip_figure(rows, ["x", "y"], groups=2, title="layer 1"))
    assert layout["yaxis"]["ticktext"] == ["H1 (kv 1)", "H2 (kv 1)"]
    assert "H1 (kv 1) most on y (0.90); H2 (kv 1) most on x (0.80)" in layout["meta"]["alt"]
    data, layout = parts(viz.strip_figure(rows, ["x", "y"], hidden=True, title="layer 1"))
    assert np.isnan(np.asarray(data[0]["z"], dtype=float)).all() and "hidden" in layout["meta"]["alt"]


def test_every_line_of_the_strip_and_the_cache_is_as_tall_as_its_label():
    """Presenter mode (20 px): lm's strip drew 9-px lines under 20-px names, and its cache 4 layers in 38 px."""
    for h in (4, 9):
        layout = parts(viz.strip_figure(np.full((h, 5), 0.2, np.float32), list("abcde"), title="s", font_size=20))[1]
        plot = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
        assert plot / h >= 1.3 * 20, (h, plot)
    for layers in (4, 30):
        layout = parts(viz.cache_figure(layers, 3, 3, 10, 5, 0, 5, cache_bytes=1, per_token=1, font_size=20))[1]
        plot = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
        ticks = layout["yaxis"]["tickvals"]
        assert (ticks[1] - ticks[0]) * plot / layers >= 1.25 * 20, (layers, plot, ticks)
