"""viz/steps.py and viz/panels.py: panel shapes, escaped labels by position, masked cells blank, captions."""
from __future__ import annotations

import numpy as np
import pytest

from analysis.steps import attention_steps
from tests import tolerances
from viz import steps as viz_steps
from viz.panels import Panel, heatmap_row, note_figure

TOKENS = ["<s>", "the", "cat", "the", "</s>"]
RNG = np.random.default_rng(1)


def _steps(temperature=1.0):
    q, k, v = (RNG.normal(size=(5, 4)).astype(np.float32) for _ in range(3))
    return attention_steps(q, k, v, np.tril(np.ones((5, 5), dtype=bool)), temperature=temperature), v


def test_panels_are_placed_by_position_with_escaped_labels():
    fig = heatmap_row([Panel(np.eye(5, dtype=np.float32), "a", TOKENS, TOKENS)], font_size=12)
    assert list(fig.layout.xaxis.tickvals) == [0, 1, 2, 3, 4]
    assert list(fig.layout.yaxis.ticktext) == ["&lt;s&gt;", "the", "cat", "the", "&lt;/s&gt;"]
    assert fig.layout.height > 0 and fig.layout.yaxis.autorange == "reversed"
    with pytest.raises(ValueError, match="row labels"):
        heatmap_row([Panel(np.eye(5), "a", TOKENS[:3], None)])
    assert note_figure("nothing").layout.height > 0


def test_labels_show_once_where_panels_side_by_side_share_their_rows_or_columns():
    other = ["<s>", "a", "b"]
    fig = heatmap_row([Panel(np.eye(5), "q", TOKENS, None), Panel(np.eye(5), "k", TOKENS, None),
                       Panel(np.eye(3, 5), "x", other, None), Panel(np.eye(3, 5), "y", other, None)])
    assert list(fig.layout.yaxis.ticktext)[0] == "&lt;s&gt;"
    assert fig.layout.yaxis2.showticklabels is False and fig.layout.yaxis2.ticktext is None
    assert list(fig.layout.yaxis3.ticktext) == ["&lt;s&gt;", "a", "b"], "new rows get their labels back"
    assert fig.layout.yaxis4.showticklabels is False
    assert [a.text for a in fig.layout.annotations] == ["q", "k", "x", "y"]
    same_keys = heatmap_row([Panel(np.eye(5), "a", TOKENS, TOKENS), Panel(np.eye(5), "b", TOKENS, TOKENS),
                             Panel(np.eye(5, 2), "c", TOKENS, ["x", "y"])])
    assert list(same_keys.layout.xaxis.ticktext)[1] == "the"
    assert same_keys.layout.xaxis2.showticklabels is False, "the same keys are labelled once"
    assert list(same_keys.layout.xaxis3.ticktext) == ["x", "y"]
    assert "the" in same_keys.data[1].text[0][1], "the hover still names both tokens"


def test_scores_figure_shows_the_four_steps_with_masked_cells_blank():
    steps, _ = _steps()
    fig = viz_steps.scores_figure(steps, TOKENS, TOKENS)
    assert len(fig.data) == 4
    assert all(np.asarray(trace.z).shape == (5, 5) for trace in fig.data)
    masked = np.asarray(fig.data[2].z)
    assert np.isnan(masked[np.triu_indices(5, 1)]).all() and np.isfinite(masked[np.tril_indices(5)]).all()
    np.testing.assert_allclose(np.asarray(fig.data[3].z), steps.probs)
    assert (fig.data[3].zmin, fig.data[3].zmax) == (0.0, 1.0)
    assert "T=1" in fig.layout.annotations[1].text


def test_qkv_and_output_figures_are_tokens_by_dimensions():
    steps, v = _steps()
    qkv = viz_steps.qkv_figure(v, v, v, TOKENS, TOKENS)
    assert [np.asarray(t.z).shape for t in qkv.data] == [(5, 4)] * 3
    out = viz_steps.output_figure(steps, v, TOKENS, TOKENS)
    # the figure's outputs against numpy's float32 product of the same weights and values
    tolerances.assert_within(np.asarray(out.data[2].z), steps.probs @ v, tolerances.product(steps.probs, v))
    with pytest.raises(ValueError, match="tokens, dims"):
        viz_steps.qkv_figure(v[None], v, v, TOKENS, TOKENS)


def test_caption_names_hard_and_uniform_attention():
    assert "one-hot" in viz_steps.caption(_steps(0.01)[0], 4)
    assert "uniform" in viz_steps.caption(_steps(100.0)[0], 4)
    assert "√d = √4" in viz_steps.caption(_steps()[0], 4)


def test_parameter_free_figure_title_says_what_it_is():
    probs = np.full((5, 5), 0.2, dtype=np.float32)
    assert "softmax(X Xᵀ)" in viz_steps.parameter_free_figure(probs, TOKENS).layout.title.text
    hot = viz_steps.parameter_free_figure(probs, TOKENS, scaled=True, temperature=0.01).layout.title.text
    assert "√d" in hot and "T=0.01" in hot, "the title names the scaling and a temperature other than 1"


def test_long_inputs_thin_the_labels_more_in_narrow_panels():
    n = 100
    tokens = [f"w{i}" for i in range(n)]
    one = heatmap_row([Panel(np.zeros((n, n)), "a", tokens, tokens)])
    four = heatmap_row([Panel(np.zeros((n, n)), "a", tokens, tokens)] +
                       [Panel(np.zeros((n, 3)), str(i), tokens, None) for i in range(3)])
    assert list(one.layout.xaxis.ticktext[:2]) == ["w0", "w2"] and len(one.layout.yaxis.tickvals) == 50
    assert list(four.layout.xaxis.ticktext[:2]) == ["w0", "w7"], "a quarter of the width: every 7th, in 10 px"
    assert four.layout.xaxis.title.text == "every 7th labelled" and four.layout.xaxis.tickfont.size >= 10
    assert len(four.layout.yaxis.tickvals) == 50, "rows keep the full height, so as many row labels"
