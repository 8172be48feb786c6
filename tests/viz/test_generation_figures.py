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
    assert layout["yaxis"]["ticktext"][:3] == ["L1 kv1 (q 1–3)", "L1 kv2 (q 4–6)", "L1 kv3 (q 7–9)"]
    assert "4 positions kept in each of 2 layers × 3 key/value heads, 384 bytes (4 × 96 bytes per token)" in \
        layout["meta"]["alt"] and "positions 1 to 2 dropped" in layout["meta"]["alt"]


def test_the_strip_names_shared_heads_and_hides_in_quiz_mode():
    rows = np.array([[0.1, 0.9], [0.8, 0.2]], dtype=np.float32)
    data, layout = parts(viz.strip_figure(rows, ["x", "y"], groups=2, title="layer 1"))
    assert layout["yaxis"]["ticktext"] == ["H1 (kv 1)", "H2 (kv 1)"]
    assert "H1 (kv 1) most on y (0.90); H2 (kv 1) most on x (0.80)" in layout["meta"]["alt"]
    data, layout = parts(viz.strip_figure(rows, ["x", "y"], hidden=True, title="layer 1"))
    assert np.isnan(np.asarray(data[0]["z"], dtype=float)).all() and "hidden" in layout["meta"]["alt"]
