"""Rollout and the per-token explanations' shares."""
import numpy as np
import pytest

from analysis.attribution import cross_rollout, rollout, shares
from tests import tolerances

RNG = np.random.default_rng(0)


def random_probs(layers=3, heads=2, t=5, causal=False):
    logits = RNG.normal(size=(layers, heads, t, t))
    if causal:
        logits = np.where(np.tril(np.ones((t, t), dtype=bool)), logits, -np.inf)
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def row_sum(rolled, layers=3) -> float:
    """How far a row of rollout's float32 result, summed here in float32, may be from 1: each of its t numbers a float64
    product of `layers` row-normalised matrices (per layer: a mean, a mix, a t-term row sum, a division, a t-term
    product: at most 2t + 4 roundings of 2^-53, all terms non-negative) cast to float32 (2^-24), then t - 1 float32
    sums (2^-24 each) of a total of 1."""
    t = rolled.shape[-1]
    return t * tolerances.EPS32 / 2 + layers * (2 * t + 4) * tolerances.EPS64 / 2


@pytest.mark.parametrize("causal", [False, True])
def test_rollout_rows_sum_to_one(causal):
    rolled = rollout(random_probs(causal=causal))
    np.testing.assert_allclose(rolled.sum(-1), 1.0, atol=row_sum(rolled), rtol=0)
    assert (rolled >= 0).all()
    if causal:  # nothing flows from the future: products and sums of exact zeros above the diagonal
        assert not np.triu(rolled, 1).any()


def test_rollout_of_one_layer_is_half_attention_half_identity():
    probs = random_probs(layers=1)
    expected = 0.5 * probs[0].mean(0) + 0.5 * np.eye(5)
    # the same float64 mean and mix, divided by its row sum (1 up to 5 + 2 roundings of 2^-53, then the division's),
    # times the identity (exact), cast to float32 (half a spacing)
    tolerances.assert_within(rollout(probs), expected,
                             tolerances.spacing32(expected) / 2 + (5 + 4) * tolerances.EPS64 / 2 * expected)


def test_rollout_multiplies_layers_first_layer_first():
    """Two previous-token layers: with no residual, rollout is the shift applied twice."""
    t = 4
    shift = np.zeros((t, t))
    shift[0, 0] = 1
    shift[np.arange(1, t), np.arange(t - 1)] = 1
    probs = np.stack([shift[None], shift[None]])  # (2, 1, t, t)
    # every number 0 or 1, each row one 1: each mean, sum, division and product is exact in floating point
    np.testing.assert_array_equal(rollout(probs, residual=0.0), shift @ shift)


def test_cross_rollout_rows_sum_to_one_and_check_shapes():
    cross = RNG.dirichlet(np.ones(5), size=(2, 3, 4))  # (L, H, t=4, s=5)
    rolled = cross_rollout(cross, random_probs(layers=2, heads=3, t=5))
    assert rolled.shape == (4, 5)
    # row_sum's for the result, plus the encoder's rollout (2 layers) cast to float32 before the product (2^-24 of
    # its rows' 1) and the cross weights' head mean and 5-term product in float64 (3 + 1 + 5 roundings of 2^-53)
    np.testing.assert_allclose(rolled.sum(-1), 1.0, atol=row_sum(rolled, layers=2) + tolerances.EPS32 / 2
                               + (3 + 1 + 5) * tolerances.EPS64 / 2, rtol=0)
    with pytest.raises(ValueError, match="self-attention"):
        rollout(cross)


def test_shares_are_absolute_and_sum_to_one():
    np.testing.assert_array_equal(shares([1.0, -3.0, 0.0]), [0.25, 0.75, 0.0])  # quarters: exact
    np.testing.assert_array_equal(shares([0.0, 0.0]), [0.0, 0.0])


def test_rollout_of_a_float32_stack_reads_each_layer_in_float64_with_the_same_numbers():
    """A trace's weights are float32: rollout reads them a layer at a time in float64 (no float64 copy of the whole
    stack, 570 MB on smollm2 at 512 tokens) and gives what the float64 stack gives, bit for bit."""
    probs = random_probs(layers=4, heads=3, t=30, causal=True).astype(np.float32)
    np.testing.assert_array_equal(rollout(probs), rollout(probs.astype(np.float64)))
    with pytest.raises(ValueError, match="self-attention weights"):
        rollout(probs[0])
