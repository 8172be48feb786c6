"""viz/compare.py, positions.py, cross.py, learning.py, multihead.py: shapes, labels and the numbers shown."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from analysis.order import OrderDemo
from model.sizes import head_sizes
from model.config import TransformerConfig
from viz import compare, cross, learning, multihead, positions

TOKENS = ["<s>", "a", "b", "a"]


def test_masks_mask_effect_and_matched_heads():
    causal = np.tril(np.ones((4, 4), dtype=bool))
    fig = compare.masks_figure(causal, np.ones((4, 4), dtype=bool), TOKENS)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), np.tril(np.ones((4, 4))))
    assert np.asarray(fig.data[1].z).min() == 1.0
    lm = causal / causal.sum(-1, keepdims=True)
    uniform = np.full((4, 4), 0.25)
    scores = np.arange(16, dtype=np.float32).reshape(4, 4) - 8
    effect = compare.mask_effect_figure(scores, uniform, scores, causal, lm, TOKENS)
    z = [np.asarray(trace.z) for trace in effect.data]
    assert not np.isnan(z[0]).any() and np.isnan(z[2][np.triu_indices(4, 1)]).all(), "only the mask-on run is masked"
    assert effect.data[0].zmin == effect.data[2].zmin, "both runs' scores share one colour scale"
    matched = compare.matched_heads_figure(lm, uniform, TOKENS, "lm L1 H2", "mlm L1 H3", "matched")
    assert [a.text for a in matched.layout.annotations] == ["lm L1 H2", "mlm L1 H3"] and len(matched.data) == 2
    with pytest.raises(ValueError, match="different tokens"):
        compare.matched_heads_figure(lm, uniform[:3, :3], TOKENS, "a", "b", "c")


def test_head_types_table_lists_heads_under_their_measured_label():
    import pandas as pd

    frames = {"lm": pd.DataFrame(dict(head=["L1 H1", "L1 H2"], label=["previous-token", "mixed"], previous=[0.9, 0.1],
                                      next=[0.0, 0.0], first=[0.1, 0.2], self=[0.0, 0.3], spread=[0.1, 0.5])),
              "mlm": pd.DataFrame(dict(head=["L1 H1", "L1 H2"], label=["next-token", "next-token"], previous=[0, 0],
                                       next=[0.8, 0.7], first=[0, 0], self=[0, 0], spread=[0.2, 0.2]))}
    table = compare.head_types_table(frames).set_index("head type (measured)")
    assert table.loc["previous-token", "lm"] == "L1 H1 (0.90)" and table.loc["previous-token", "mlm"] == "—"
    assert table.loc["next-token", "mlm"] == "L1 H1 (0.80), L1 H2 (0.70)" and table.loc["mixed", "lm"] == "L1 H2"


def test_position_figures_mark_the_sentence():
    table = np.random.default_rng(0).normal(size=(20, 8)).astype(np.float32)
    fig = positions.tables_figure({"sin": table, "learned": table}, t=5)
    assert len(fig.data) == 2 and len(fig.layout.shapes) == 2
    assert (fig.layout.shapes[0].y0, fig.layout.shapes[0].y1) == (0.5, 5.5)  # positions 1 to 5, counted from 1
    waves = positions.waves_figure(table, [0, 3], t=5)
    assert len(waves.data) == 4 and len(waves.data[1].x) == 5
    lines, dots = waves.data[0::2], waves.data[1::2]
    # each dimension's dots have its line's colour (all orange read as the second line's, dim 3 here)
    assert [d.marker.color for d in dots] == [line.line.color for line in lines]
    assert len({line.line.color for line in lines}) == 2
    with pytest.raises(ValueError, match="between 0 and 7"):
        positions.waves_figure(table, [8], t=5)
    added = positions.addition_figure(table[:4], table[:4] * 0 + 1, TOKENS)
    np.testing.assert_allclose(np.asarray(added.data[2].z), table[:4] + 1)


def test_order_figures_put_the_shuffled_weights_back():
    w = np.random.default_rng(0).dirichlet(np.ones(4), size=4).astype(np.float32)
    order = np.array([0, 2, 3, 1])
    demo = OrderDemo(TOKENS, [TOKENS[i] for i in order], order, w, w[np.ix_(order, order)], w, w.T, "layer 1", 0)
    plain, positioned = positions.order_figures(demo)
    # the float32 weights drawn as they are: exactly
    np.testing.assert_array_equal(np.asarray(plain.data[1].z), w)
    np.testing.assert_array_equal(np.asarray(plain.data[2].z), w[np.ix_(order, order)])
    assert list(plain.layout.yaxis3.ticktext) == ["&lt;s&gt;", "b", "a", "a"], "the shuffled rows are labelled"
    assert plain.layout.yaxis2.showticklabels is False, "put back beside the original: its labels are the same"
    assert all(getattr(plain.layout, f"xaxis{n}").showticklabels is False for n in ("", "2", "3")), \
        "columns follow the rows: unlabelled"
    assert "b" in plain.data[2].text[1][1], "hover still names the shuffled tokens"
    assert "difference" in positioned.layout.title.text and demo.positioned_difference > 0


def test_cross_attention_figure_is_target_by_source():
    probs = np.random.default_rng(0).dirichlet(np.ones(7), size=4).astype(np.float32)
    targets, sources = ["<s>", "2", "0", "2"], list("21 Nov.")
    fig = cross.cross_figure(probs, targets, sources, step=2)
    assert np.asarray(fig.data[0].z).shape == (4, 7)
    assert list(fig.layout.yaxis.ticktext) == ["&lt;s&gt;", "2", "0", "2"]
    assert fig.layout.shapes[0].y0 == pytest.approx(1.5)
    bars = cross.step_figure(probs[2], sources, "2", 2)
    assert bars.data[0].marker.color[int(probs[2].argmax())] == cross.HIGHLIGHT
    # the title names the decoding step, whatever every k-th source character the axis labels
    assert bars.layout.title.text.startswith("Step 3: writing 2 ")
    long_source = list("Saturday, 21st of November 2026, in the afternoon")
    weights = np.full(len(long_source), 1 / len(long_source), np.float32)
    assert cross.step_figure(weights, long_source, "1", 5).layout.title.text.startswith("Step 6: writing 1 ")
    with pytest.raises(ValueError):
        cross.cross_figure(probs, targets, sources, step=9)
    table = cross.beams_table([SimpleNamespace(text="2026-11-21", score=-0.1, finished=True),
                               SimpleNamespace(text="2026-11-12", score=-2.5, finished=True)])
    assert list(table["rank"]) == [1, 2] and table["probability"][0] == pytest.approx(np.exp(-0.1), rel=1e-3)


def test_learning_figures():
    fig = learning.loss_figure([10, 100, 1000], [5, 3, 2], [5.1, 3.2, 2.4], current=100)
    assert len(fig.data) == 2 and fig.layout.shapes[0].x0 == 100 and fig.layout.xaxis.type == "log"
    # on a log axis an annotation's x is the power of ten (a shape's is the value): at x=100 Plotly put
    # the label at 10^100 and stretched the axis to it
    (label,) = fig.layout.annotations
    assert label.text == "step 100" and label.x == pytest.approx(2.0) and label.yref == "paper"
    linear = learning.loss_figure([10, 20, 30], [5, 3, 2], [5.1, 3.2, 2.4], current=20)
    assert linear.layout.xaxis.type is None and linear.layout.annotations[0].x == 20
    strip = learning.snapshots_strip(np.full((3, 4, 4), 0.25, np.float32), [10, 100, 1000])
    assert strip.layout.meta["tiles"] == ["step 10", "step 100", "step 1000"]
    with pytest.raises(ValueError, match="one"):
        learning.snapshots_strip(np.zeros((2, 4, 4)), [1, 2, 3])


def test_multihead_figure_and_sizes_table():
    probs = np.full((4, 5, 5), 0.2, np.float32)
    fig = multihead.heads_figure(probs, layer=1)
    assert fig.layout.meta["tiles"] == ["head 1", "head 2", "head 3", "head 4"]
    assert "Layer 2" in fig.layout.title.text and fig.layout.height > 0
    table = multihead.sizes_table(head_sizes(TransformerConfig(arch="decoder", vocab_size=9)))
    assert list(table["parameters per attention layer"]) == [65664, 262272]
    assert list(table["this model"]) == ["✓", ""]


def test_one_outlier_dimension_does_not_wash_out_a_position_table():
    """minilm's learned positions: one dimension reaches 1.9 where 99% of values stay under 0.07."""
    table = np.random.default_rng(1).normal(scale=0.05, size=(64, 384)).astype(np.float32)
    table[:, 7] = 2.0
    fig = positions.tables_figure({"learned": table, "even": np.clip(table, -0.1, 0.1)}, t=5)
    outlier, even = fig.data
    assert outlier.zmax == pytest.approx(np.percentile(np.abs(table), 99)) and outlier.zmax < 0.2
    assert "where 99% of values lie" in fig.layout.annotations[0].text
    assert even.zmax == pytest.approx(0.1) and "99%" not in fig.layout.annotations[1].text
