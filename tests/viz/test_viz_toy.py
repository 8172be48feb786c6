"""viz/toy.py: the live-training figures from plain arrays (no torch)."""
from __future__ import annotations

import numpy as np
import pytest

from viz import toy

TEXT, OUTPUT = "abcd", "dcba"


def anti_diagonal(layers=2, heads=2, t=4) -> np.ndarray:
    maps = np.full((layers, heads, t, t), 1 / t, np.float32)
    maps[-1, :] = np.eye(t, dtype=np.float32)[::-1]
    return maps


def test_progress_figure_draws_loss_accuracy_and_the_reference_levels():
    fig = toy.progress_figure([10, 20], [2.0, 0.5], [0, 10, 20], [0.05, 0.5, 1.0], chance=0.05, blind_best=1 / 9)
    names = [trace.name for trace in fig.data]
    assert names == ["training loss", "held-out accuracy", "guessing (5%)", "best without positions (11%)"]
    assert list(fig.data[1].y) == pytest.approx([0.05, 0.5, 1.0])
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis2.range == (0, 1.04) and fig.layout.height
    assert list(fig.data[2].x) == [0, 20], "the guessing line spans the steps trained so far"
    assert fig.layout.yaxis.dtick is None, "within one decade Plotly labels the axis itself"
    assert toy.progress_figure([1, 2], [3.0, 0.01], [0], [0.1], chance=0.1).layout.yaxis.dtick == 1
    before = toy.progress_figure([], [], [0], [0.05], chance=0.05)
    assert len(before.data) == 3 and before.layout.yaxis.range == (-2.3, 1.1)  # 0.01 clear of the corner
    with pytest.raises(ValueError, match="one value per step"):
        toy.progress_figure([1, 2], [1.0], [0], [0.1], chance=0.1)


def test_heads_figure_tiles_every_head_and_names_them():
    fig = toy.heads_figure(anti_diagonal(), TEXT, OUTPUT)
    assert fig.layout.meta["tiles"] == ["L1 H1", "L1 H2", "L2 H1", "L2 H2"]
    assert "abcd → dcba" in fig.layout.title.text
    with pytest.raises(ValueError, match="layers, heads, 4, 4"):
        toy.heads_figure(anti_diagonal(t=5), TEXT, OUTPUT)


def test_text_in_titles_is_escaped():
    fig = toy.heads_figure(anti_diagonal(t=3), "<b>", "a&b")
    assert "&lt;b&gt;" in fig.layout.title.text and "a&amp;b" in fig.layout.title.text


def test_sharpest_head_finds_the_one_pattern_and_detail_labels_rows():
    maps = anti_diagonal()
    maps[-1, 0] = 1 / 4  # only L2 H2 keeps the anti-diagonal
    assert toy.sharpest_head(maps) == (1, 1)
    detail = toy.head_detail(maps, TEXT, OUTPUT, 1, 1)
    np.testing.assert_allclose(np.asarray(detail.data[0].z), np.eye(4)[::-1])
    assert list(detail.layout.yaxis.ticktext) == ["1: a→d", "2: b→c", "3: c→b", "4: d→a"]  # positions from 1
    assert "L2 H2" in detail.layout.title.text


def test_comparison_figure_table_and_heads():
    runs = {"narrow": ([0, 50, 100], [0.0, 0.2, 0.4], [0.05, 0.6, 1.0]),
            "wide": ([0, 50, 100], [0.0, 0.5, 1.0], [0.05, 0.97, 1.0])}
    fig = toy.comparison_figure(runs, chance=0.05)
    assert [t.name for t in fig.data] == ["narrow", "narrow", "wide", "wide", "guessing (5%)"]
    assert list(fig.data[3].x) == [0.0, 0.5, 1.0], "the right panel is against seconds"
    rows = [{"label": label, "parameters": p, "steps": 100, "seconds": s[-1], "accuracy": a[-1], "eval_steps": st,
             "accuracies": a} for (label, (st, s, a)), p in zip(runs.items(), (1000, 3000))]
    table = toy.comparison_table(rows)
    assert list(table["steps to 95%"]) == [100, 50]
    assert list(table["steps per second"]) == [250, 100] and list(table["held-out accuracy"]) == ["100.0%"] * 2
    heads = toy.comparison_heads({"narrow": anti_diagonal(), "wide": anti_diagonal()}, TEXT)
    assert heads.layout.meta["tiles"][:2] == ["narrow L1 H1", "narrow L1 H2"] and len(heads.layout.meta["tiles"]) == 8
    with pytest.raises(ValueError, match="same shape"):
        toy.comparison_heads({"narrow": anti_diagonal(), "wide": anti_diagonal(heads=1)}, TEXT)


def test_steps_to_a_goal():
    assert toy.steps_to([0, 10, 20], [0.1, 0.96, 0.9], 0.95) == 10
    assert toy.steps_to([0, 10], [0.1, 0.2], 0.95) is None


def test_a_lower_progress_figure_keeps_its_legend_below_the_axis_title():
    full = toy.progress_figure([1, 2], [3.0, 1.0], [0, 2], [0.1, 0.5], chance=0.05, font_size=20)
    low = toy.progress_figure([1, 2], [3.0, 1.0], [0, 2], [0.1, 0.5], chance=0.05, font_size=20, max_height=380)
    assert full.layout.height == 440 and low.layout.height == 380
    # the legend's place is a share of the plot area: a smaller area needs a larger share for the same pixels
    assert low.layout.legend.y < full.layout.legend.y < 0
    assert toy.progress_figure([1], [1.0], [0], [0.1], chance=0.1, max_height=1000).layout.height == 408
