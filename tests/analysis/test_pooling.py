"""Which tokens a pooled decision draws on: exact splits of the pooled vector and of the score."""
import numpy as np
import pytest
import torch

from analysis import pooling
from model.config import TransformerConfig
from model.transformer import build
from tests import tolerances

POOLINGS = ("mean", "max", "cls")


def features(t=6, k=10, seed=0):
    return np.random.default_rng(seed).normal(size=(t, k)).astype(np.float32)


@pytest.mark.parametrize("kind", POOLINGS)
def test_pool_matches_the_model(kind):
    config = TransformerConfig(arch="classifier", vocab_size=10, d_model=10, n_heads=2, n_layers=1, pooling=kind,
                               labels=("a", "b"))
    x = features()
    expected = build(config).pool(torch.from_numpy(x)[None])[0].numpy()
    if kind == "mean":
        # torch: one float32 sum of t terms ((t - 1) x 2^-24 of sum |x|), divided by t (rounded); numpy: float64,
        # cast to float32 (rounded): two roundings of the mean and one sum's bound (half of two orders'), over t
        t, mean = len(x), np.abs(x.astype(np.float64).mean(0))
        allowed = tolerances.summed(t, np.abs(x.astype(np.float64)).sum(0)) / 2 / t + tolerances.EPS32 * mean
        tolerances.assert_within(pooling.pool(x, kind), expected, allowed)
    else:  # max and cls pick one of the float32 numbers: exact
        np.testing.assert_array_equal(pooling.pool(x, kind), expected)


@pytest.mark.parametrize("kind", POOLINGS)
def test_token_shares_sum_to_one(kind):
    x = features().astype(np.float64)
    shares = pooling.token_shares(x, kind)
    t, k = x.shape
    p = x.mean(0)
    # each share a float64 quotient (x_i·p over k terms, t·|p|² over k more, the division: 2k + 2 roundings of
    # 2^-53 on the terms' absolute sizes) cast to float32 (2^-24), then summed here in float32 ((t - 1) x 2^-24): at
    # most t x 2^-24 of sum |share|, plus the float64 part. Max and cls: k-ths and 1, the same bound holds.
    float64 = (2 * k + 2) * tolerances.EPS64 / 2 * (np.abs(x) @ np.abs(p)).sum() / (t * (p @ p))
    allowed = t * tolerances.EPS32 / 2 * np.abs(shares).sum() + float64
    assert shares.shape == (6,) and abs(float(shares.sum()) - 1) <= allowed


def test_max_shares_count_the_dimensions_won_and_cls_is_all_first():
    x = np.zeros((3, 4), dtype=np.float32)
    x[1, :3] = 1.0  # token 1 wins three of the four dimensions, token 2 the last
    x[2, 3] = 1.0
    # quarters, one and a third: one correctly rounded division each (IEEE: the same on every processor)
    np.testing.assert_array_equal(pooling.token_shares(x, "max"), [0, 0.75, 0.25])
    np.testing.assert_array_equal(pooling.token_shares(x, "cls"), [1, 0, 0])
    np.testing.assert_array_equal(pooling.pooling_weights(x, "mean"), np.full(3, 1 / 3, dtype=np.float32))


@pytest.mark.parametrize("kind", POOLINGS)
def test_score_contributions_add_up_to_the_score(kind):
    x, w = features(), np.random.default_rng(1).normal(size=10)
    parts = pooling.score_contributions(x, w, kind)
    t, k = x.shape
    pooled = pooling.pool(x, kind)
    # the parts: float64 sums of at most k products w_d x_id ((k + 1) roundings of 2^-53 on sum |w||x| at most), each
    # cast to float32 (2^-24), summed here in float32 ((t - 1) x 2^-24): t x 2^-24 of sum |part|. The score: the
    # pooled vector cast to float32 (2^-24 each: 2^-24 of |w|·|pooled|), its float64 dot with w (k roundings)
    float64 = (k + 1 + k) * tolerances.EPS64 / 2 * (np.abs(x) @ np.abs(w)).sum()
    allowed = t * tolerances.EPS32 / 2 * np.abs(parts).sum() + tolerances.EPS32 / 2 * np.abs(w) @ np.abs(pooled) + float64
    assert abs(float(parts.sum()) - float(pooled @ w)) <= allowed
    if kind == "cls":
        assert np.all(parts[1:] == 0)


def test_bad_shapes_and_poolings_say_what_is_wrong():
    with pytest.raises(ValueError, match=r"\(t, k\)"):
        pooling.token_shares(np.zeros(5), "mean")
    with pytest.raises(ValueError, match="pooling must be"):
        pooling.pool(features(), "sum")
    with pytest.raises(ValueError, match="one category's row"):
        pooling.score_contributions(features(), np.zeros(3), "mean")
