import numpy as np
import pytest

from viz import induction as viz


def test_scores_figure_puts_both_maps_side_by_side_and_outlines_the_circuit():
    induction = np.zeros((4, 4)); induction[2, 1] = 0.8
    previous = np.zeros((4, 4)); previous[1, 3] = 0.9
    fig = viz.scores_figure(induction, previous, marked=[(2, 1), (1, 3)])
    assert len(fig.data) == 2 and np.asarray(fig.data[0].z)[2, 1] == pytest.approx(0.8)
    assert np.asarray(fig.data[1].z)[1, 3] == pytest.approx(0.9)
    assert len(fig.layout.shapes) == 4  # two heads outlined in each map
    with pytest.raises(ValueError, match="layers, heads"):
        viz.scores_figure(np.zeros((4, 4)), np.zeros((3, 4)))


def test_losses_figure_draws_one_line_per_condition_and_shades_the_second_copy():
    tokens = ["<s>", "a", "b", "c", "a", "b", "c"]
    fig = viz.losses_figure(tokens, {"intact": np.arange(6.0), "knocked out": np.ones(6)}, length=3)
    assert [d.name for d in fig.data] == ["intact", "knocked out"]
    assert fig.layout.shapes[0].x0 == 2.5  # predictions 3.. are the second copy
    with pytest.raises(ValueError, match="losses for 6"):
        viz.losses_figure(tokens, {"intact": np.ones(5)}, length=3)


def test_stripe_figure_masks_the_future_and_names_the_head():
    probs = np.tril(np.ones((7, 7))); probs /= probs.sum(1, keepdims=True)
    fig = viz.stripe_figure(probs, list("sabcabc"), 2, 0, 0.75, 3)
    assert "L3 H1" in fig.layout.title.text and "0.75" in fig.layout.title.text
    assert np.isnan(np.asarray(fig.data[0].z, dtype=float)[0, 1])
    with pytest.raises(ValueError):
        viz.stripe_figure(probs, list("sab"), 0, 0, 0.1, 3)


def test_forming_figure_marks_the_snapshots_on_the_curve():
    fig = viz.forming_figure([50, 100, 150], [0.05, 0.3, 0.7], snapshots=[10, 100, 150])
    assert list(fig.data[1].x) == [100, 150] and list(fig.data[1].y) == pytest.approx([0.3, 0.7])
    with pytest.raises(ValueError):
        viz.forming_figure([], [])
