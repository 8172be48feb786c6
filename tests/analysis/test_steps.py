"""model/steps.py: the live recompute of one head, checked against the trace and the limits."""
from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.steps import MAX_TEMPERATURE, MIN_TEMPERATURE, attention_steps, simple_attention, stable_softmax
from model import api
from tests import tolerances

RNG = np.random.default_rng(0)


def _qkv(t=6, d=8):
    return (RNG.normal(size=(t, d)).astype(np.float32) * 3, RNG.normal(size=(t, d)).astype(np.float32) * 3,
            RNG.normal(size=(t, d)).astype(np.float32))


def test_matches_the_traced_probabilities_at_temperature_one(tiny_trained_models):
    for name, kind in (("tiny-lm", "self"), ("tiny-mlm", "self"), ("tiny-dates", "cross"), ("tiny-dates", "decoder")):
        loaded = api.load_from(tiny_trained_models[name])
        text = "Saturday, 21st of November 2026" if "dates" in name else "the small cat holds a green lamp"
        att = loaded.trace(text).attention[kind]
        for layer in range(att.n_layers):
            for head in range(att.n_heads):
                steps = attention_steps(att.q[layer, head], att.k[layer, head], att.v[layer, head], att.mask)
                q, k, v = att.q[layer, head], att.k[layer, head], att.v[layer, head]
                # numpy's float32 steps against torch's: two orders of summing, two exps (tests/tolerances.py)
                scores, probs, _ = tolerances.attention(q, k, v, 1 / np.sqrt(q.shape[-1]), att.mask)
                tolerances.assert_within(steps.scores, att.scores[layer, head], tolerances.product(q, k.T))
                tolerances.assert_within(steps.probs, att.probs[layer, head], probs)


def test_lowest_temperature_gives_one_hot_rows_on_the_argmax():
    q, k, v = _qkv()
    steps = attention_steps(q, k, v, scale=True, temperature=MIN_TEMPERATURE)
    assert np.allclose(steps.probs.max(-1), 1.0, atol=1e-3)
    np.testing.assert_array_equal(steps.probs.argmax(-1), (q @ k.T).argmax(-1))
    np.testing.assert_allclose(steps.output, v[(q @ k.T).argmax(-1)], atol=1e-2)  # hard attention copies a value


def test_highest_temperature_gives_uniform_rows_over_allowed_keys():
    q, k, v = (a / 3 for a in _qkv())  # scores of order 1, as in a trained head
    mask = np.tril(np.ones((6, 6), dtype=bool))
    steps = attention_steps(q, k, v, mask, temperature=MAX_TEMPERATURE)
    expected = mask / mask.sum(-1, keepdims=True)
    np.testing.assert_allclose(steps.probs, expected, atol=0.05)
    assert (steps.probs[~mask] == 0).all()
    np.testing.assert_allclose(steps.entropy, steps.max_entropy, atol=0.02)


def test_scaling_divides_by_sqrt_d_and_masked_cells_are_minus_infinity():
    q, k, v = _qkv(d=16)
    mask = np.tril(np.ones((6, 6), dtype=bool))
    on = attention_steps(q, k, v, mask, scale=True)
    off = attention_steps(q, k, v, mask, scale=False)
    np.testing.assert_array_equal(on.scaled * math.sqrt(16), off.scaled)  # times 1/4, then 4: exact in floating point
    assert on.factor == pytest.approx(0.25) and off.factor == 1.0
    assert np.isneginf(on.masked[~mask]).all() and np.isfinite(on.masked[mask]).all()
    np.testing.assert_allclose(on.probs.sum(-1), 1.0, atol=1e-6)
    assert (off.entropy <= on.entropy + 1e-5).all()  # unscaled scores are larger: sharper rows


def test_softmax_is_stable_for_huge_scores():
    logits = np.array([[1e6, 1e6 - 1, -1e6], [-np.inf, 3.0, 2.0]])
    p = stable_softmax(logits)
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(-1), 1.0)
    assert p[1, 0] == 0.0


def test_bad_input_raises_with_a_message():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="at least one key"):
        attention_steps(q, k, v, np.zeros((6, 6), dtype=bool))
    with pytest.raises(ValueError, match="temperature"):
        attention_steps(q, k, v, temperature=0)
    with pytest.raises(ValueError, match="mask must be"):
        attention_steps(q, k, v, np.ones((5, 6), dtype=bool))


def test_parameter_free_attention_is_softmax_of_x_xt():
    x = RNG.normal(size=(5, 4)).astype(np.float32)
    steps = simple_attention(x)
    e = np.exp(x @ x.T - (x @ x.T).max(-1, keepdims=True))
    _, probs, _ = tolerances.attention(x, x, x, scale=1.0)  # two float32 softmaxes of x xᵀ, each in its own order
    tolerances.assert_within(steps.probs, e / e.sum(-1, keepdims=True), probs)
    # two float32 products of the same weights and x
    tolerances.assert_within(steps.output, steps.probs @ x, tolerances.product(steps.probs, x))
