"""Labels a projector's back row reads (issue 55): never under 14 px in presenter mode's 20-px font, never on top
of one another; where they do not all fit, every k-th is labelled and the axis says so. Positions count from 1."""
from __future__ import annotations

import numpy as np

from viz import head_finder, positions, qk
from viz.describe import plain
from viz.heatmap import attention_heatmap
from viz.labels import SLANT, label_fit, overlaps, plot_scale, text_box
from viz.panels import Panel, heatmap_row

LM_TOKENS = ["<s>", "W", "hen", "▁M", "ary", "▁and", "▁J", "ohn", "▁went", "▁to", "▁the", "▁st", "ore", ",", "▁J",
             "ohn", "▁gave", "▁a", "▁drink", "▁to"]  # lm's reading of the page's first sentence


def test_label_fit_never_goes_under_the_smallest_text_and_keeps_labels_apart():
    for cell in (0.5, 3.0, 9.0, 12.8, 16.7, 30.0):
        for slanted in (False, True):
            size, step = label_fit(cell, 40, 20, slanted=slanted)
            assert 14 <= size <= 20
            assert step * cell * (SLANT if slanted else 1) >= 1.17 * size - 1e-6, (cell, slanted, size, step)
    assert label_fit(30.0, 40, 20) == (20, 1)


def test_the_one_head_in_presenter_mode_labels_in_14_px_or_more_and_says_which():
    t = len(LM_TOKENS)
    probs = np.tril(np.ones((t, t), np.float32)) / np.arange(1, t + 1, dtype=np.float32)[:, None]
    layout = attention_heatmap(probs, LM_TOKENS, LM_TOKENS, title="L1 H4", font_size=20, max_height=440).layout
    assert layout.xaxis.tickfont.size >= 14 and layout.yaxis.tickfont.size >= 14  # were 12 px, overlapping
    for axis, count in ((layout.xaxis, t), (layout.yaxis, t)):
        if len(axis.tickvals) < count:
            assert "labelled" in axis.title.text


def test_side_by_side_panels_label_rows_and_columns_in_14_px_or_more():
    t = len(LM_TOKENS)
    panels = [Panel(np.zeros((t, t)), name, LM_TOKENS, LM_TOKENS) for name in ("a", "b", "c", "d")]
    layout = heatmap_row(panels, font_size=20, max_height=440).layout
    assert layout.height == 440
    assert layout.xaxis.tickfont.size >= 14 and layout.yaxis.tickfont.size >= 14  # were 9 px
    assert "labelled" in layout.xaxis.title.text and "labelled" in layout.yaxis.title.text


def test_qk_point_labels_do_not_overlap_where_the_plot_is_as_wide_as_tall():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(20, 2))
    k = q + 0.01  # every key on its query: the labels would pair up
    fig = qk.qk_figure(q, k, [0.5, 0.2], list(range(20)), LM_TOKENS, LM_TOKENS, font_size=20)
    plot = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    scale = plot_scale(np.r_[q[:, 0], k[:, 0]], np.r_[q[:, 1], k[:, 1]], plot, plot, square=True)
    boxes = [text_box(x * scale[0], -y * scale[1], plain(text), 20, where)
             for trace in fig.data[1:] for (x, y, text, where) in zip(trace.x, trace.y, trace.text, trace.textposition)
             if text]
    assert 0 < len(boxes) < 40 and not any(overlaps(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert all(trace.customdata for trace in fig.data[1:]), "the hover still names every point"


def test_the_head_finders_numbers_keep_apart_and_its_axes_corner_clear():
    names = [f"L{i} H1" for i in range(1, 7)]
    fig = head_finder.scatter(names, [1, 2, 3, 4, 5, 6], [0.9, 0.9, 0.901, 0.1, 0.5, 0.2], [0.8, 0.8, 0.8, 0.1, 0.3, 0.0],
                              "x", "y", names, "t", font_size=20)
    ringed = fig.data[1]
    assert sorted(ringed.text) == ["1", "2", "3", "4", "5"]
    assert len(set(ringed.textposition[:3])) == 3, "three heads on one spot: three sides"
    assert fig.layout.yaxis.ticklabelstandoff >= 10


def test_position_figures_count_from_1():
    table = np.random.default_rng(0).normal(size=(20, 8)).astype(np.float32)
    tables = positions.tables_figure({"sin": table}, t=5)
    assert list(tables.data[0].y[:2]) == [1, 2] and list(tables.data[0].x[:2]) == [0, 1]  # dimensions from 0
    assert tables.data[0].hovertemplate.startswith("position %{y} · dimension %{x}")
    similar = positions.similarity_figure({"sin": table @ table.T}, t=5)
    assert list(similar.data[0].x[:1]) == [1] and list(similar.data[0].y[:1]) == [1]
    waves = positions.waves_figure(table, [0, 1], t=5)
    assert waves.data[0].x[0] == 1 and list(waves.data[1].x) == [1, 2, 3, 4, 5]


def test_the_dates_figures_label_characters_in_14_px_or_more_on_the_first_screen():
    from viz import cross

    source, written = list("When Mary and John went to the store, John gave a drink to"), list("0008-01-08") + ["</s>"]
    probs = np.full((len(written), len(source)), 1 / len(source), np.float32)
    heat = cross.cross_figure(probs, written, source, step=5, font_size=20, max_height=410).layout
    assert heat.height <= 410 and heat.yaxis.tickfont.size >= 14 and heat.xaxis.tickfont.size >= 14
    for axis, count in ((heat.xaxis, len(source)), (heat.yaxis, len(written))):
        assert len(axis.tickvals) == count or "labelled" in axis.title.text
    bars = cross.step_figure(probs[5], source, "0", 5, font_size=20).layout
    assert bars.xaxis.tickfont.size >= 14 and bars.xaxis.tickangle == 0
    spacing = 1050 / len(source) * (bars.xaxis.tickvals[1] - bars.xaxis.tickvals[0])
    assert spacing >= (0.62 + 0.5) * bars.xaxis.tickfont.size  # upright characters side by side stand apart


def test_numbered_rows_stand_off_the_corner():
    table = np.zeros((128, 64), np.float32)
    layout = positions.tables_figure({"sin": table}, t=5, font_size=20).layout
    assert layout.yaxis.ticklabelstandoff >= 10 and "labelled" not in layout.xaxis.title.text


def test_qk_point_labels_do_not_overlap_in_a_plot_wider_than_tall():
    # presenter mode at 1280 px draws the plot 1068 × 440: where the points spread wider than tall the scale is the
    # height's, larger than a square plot's, and a pair kept apart for a square plot met (“q ▁the” on “k W”, issue 55)
    met = []
    for seed in range(12):
        rng = np.random.default_rng(seed)
        q, k = rng.normal(size=(16, 2)) * [2.5, 1.0], rng.normal(size=(16, 2)) * [2.5, 1.0]
        fig = qk.qk_figure(q, k, [0.5, 0.2], rng.integers(0, 16, 16), LM_TOKENS[:16], LM_TOKENS[:16], font_size=20)
        plot = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
        for width in (plot, 1.6 * plot, 1068 / 440 * plot):
            scale = plot_scale(np.r_[q[:, 0], k[:, 0]], np.r_[q[:, 1], k[:, 1]], width, plot, square=True)
            boxes = [(text, text_box(x * scale[0], -y * scale[1], plain(text), 20, where))
                     for trace in fig.data[1:]
                     for (x, y, text, where) in zip(trace.x, trace.y, trace.text, trace.textposition) if text]
            met += [(seed, width, a, b) for i, (a, box) in enumerate(boxes) for b, other in boxes[i + 1:]
                    if overlaps(box, other)]
    assert not met, met[:3]
