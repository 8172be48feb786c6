"""The classifier's figures: the pooled vector under the tokens' vectors, each token's part of the score."""
import numpy as np
import pytest

from viz import classifier

TOKENS = ["<s>", "a", "▁long", "▁fish"]


@pytest.mark.parametrize("pooling,panels", [("mean", 1), ("max", 2), ("cls", 1)])
def test_pooling_figure_shows_every_token_and_the_pooled_row(pooling, panels):
    x = np.random.default_rng(0).normal(size=(4, 8))
    fig = classifier.pooling_figure(TOKENS, x, x.mean(0), pooling, font_size=20)
    assert len(fig.data) == panels
    assert np.asarray(fig.data[0].z).shape == (5, 8)  # 4 tokens + the pooled vector
    if pooling == "max":
        won = np.asarray(fig.data[1].z)
        assert np.allclose(won.sum(0), 1)  # one winner per dimension
    assert fig.layout.title.text.startswith({"mean": "Mean", "max": "Max", "cls": "[CLS]"}[pooling])


def test_contributions_figure_colours_by_sign_and_names_the_sum():
    fig = classifier.contributions_figure(TOKENS, [0.5, -0.25, 1.0, 0.0], "noun.animal")
    assert list(fig.data[0].marker.color) == ["#c0392b", "#2e86c1", "#c0392b", "#c0392b"]
    assert "noun.animal" in fig.layout.title.text and "+1.25" in fig.layout.title.text
    assert list(fig.data[0].y)[2] == "2: ▁long"


def test_bad_input_says_what_to_pass():
    with pytest.raises(ValueError, match="features"):
        classifier.pooling_figure(TOKENS, np.zeros((3, 8)), np.zeros(8), "mean")
    with pytest.raises(ValueError, match="pooling"):
        classifier.pooling_figure(TOKENS, np.zeros((4, 8)), np.zeros(8), "sum")
    with pytest.raises(ValueError, match="one contribution per token"):
        classifier.contributions_figure(TOKENS, [1.0], "noun.animal")
