"""Which tokens a pooled decision draws on: exact splits of the pooled vector and of the score."""
import numpy as np
import pytest
import torch

from analysis import pooling
from model.config import TransformerConfig
from model.transformer import build

POOLINGS = ("mean", "max", "cls")


def features(t=6, k=10, seed=0):
    return np.random.default_rng(seed).normal(size=(t, k)).astype(np.float32)


@pytest.mark.parametrize("kind", POOLINGS)
def test_pool_matches_the_model(kind):
    config = TransformerConfig(arch="classifier", vocab_size=10, d_model=10, n_heads=2, n_layers=1, pooling=kind,
                               labels=("a", "b"))
    x = features()
    expected = build(config).pool(torch.from_numpy(x)[None])[0].numpy()
    assert np.allclose(pooling.pool(x, kind), expected, atol=1e-6)


@pytest.mark.parametrize("kind", POOLINGS)
def test_token_shares_sum_to_one(kind):
    shares = pooling.token_shares(features(), kind)
    assert shares.shape == (6,) and np.isclose(shares.sum(), 1, atol=1e-5)


def test_max_shares_count_the_dimensions_won_and_cls_is_all_first():
    x = np.zeros((3, 4), dtype=np.float32)
    x[1, :3] = 1.0  # token 1 wins three of the four dimensions, token 2 the last
    x[2, 3] = 1.0
    assert np.allclose(pooling.token_shares(x, "max"), [0, 0.75, 0.25])
    assert np.allclose(pooling.token_shares(x, "cls"), [1, 0, 0])
    assert np.allclose(pooling.pooling_weights(x, "mean"), [1 / 3] * 3)


@pytest.mark.parametrize("kind", POOLINGS)
def test_score_contributions_add_up_to_the_score(kind):
    x, w = features(), np.random.default_rng(1).normal(size=10)
    parts = pooling.score_contributions(x, w, kind)
    assert np.isclose(parts.sum(), pooling.pool(x, kind) @ w, atol=1e-4)
    if kind == "cls":
        assert np.all(parts[1:] == 0)


def test_bad_shapes_and_poolings_say_what_is_wrong():
    with pytest.raises(ValueError, match=r"\(t, k\)"):
        pooling.token_shares(np.zeros(5), "mean")
    with pytest.raises(ValueError, match="pooling must be"):
        pooling.pool(features(), "sum")
    with pytest.raises(ValueError, match="one category's row"):
        pooling.score_contributions(features(), np.zeros(3), "mean")
