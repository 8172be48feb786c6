"""analysis/order.py: without positions, shuffling the tokens only permutes the weights."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from analysis.order import shuffle_order
from experiments.order import order_demo
from model import api
from model.switches import Switches
from tests import tolerances
from tests.shuffle_bound import reordered_bound

TEXT = "the old lamp lights the quiet garden near the river"


def test_shuffle_keeps_the_start_token_and_always_moves_something():
    for seed in range(20):
        order = shuffle_order(8, seed, keep_first=True)
        assert order[0] == 0 and sorted(order) == list(range(8))
        assert not np.array_equal(order, np.arange(8))
    assert list(shuffle_order(2, 0, keep_first=True)) == [0, 1]  # nothing to shuffle after <s>


@pytest.mark.parametrize("name", ["tiny-lm", "tiny-mlm", "tiny-dates"])
def test_without_positions_the_shuffled_weights_are_the_original_permuted(tiny_trained_models, name):
    loaded = api.load_from(tiny_trained_models[name])
    text = "21st of November 2026" if "dates" in name else TEXT
    demo = order_demo(loaded, text, seed=4, head=1)
    t = len(demo.tokens)
    assert demo.plain.shape == demo.plain_shuffled.shape == (t, t)
    assert demo.shuffled_tokens == [demo.tokens[i] for i in demo.order]
    allowed = reordered_bound(loaded, text, head=1)
    back = np.ix_(demo.order, demo.order)
    tolerances.assert_within(demo.plain_shuffled, demo.plain[back], allowed[back])
    assert demo.plain_difference <= allowed.max()  # the number the page shows: the largest of those differences
    # a float32 softmax row e_j / S (S the float32 sum of its t terms, the division rounded), summed here once more
    np.testing.assert_allclose(demo.plain.sum(-1), 1.0, atol=tolerances.summed(t, 1.0) + tolerances.EPS32, rtol=0)


def test_with_positions_the_shuffled_weights_are_not_a_permutation(tiny_trained_models):
    loaded = api.load_from(tiny_trained_models["tiny-lm"])
    generator = torch.Generator().manual_seed(0)
    attention = loaded.model.stack.blocks[0].self_attention
    with torch.no_grad():  # six training steps leave these near their tiny init: make them as large as training would
        for weight in (loaded.model.embed.positions.embedding.weight, attention.toqueries.weight,
                       attention.tokeys.weight):
            weight.copy_(torch.randn(weight.shape, generator=generator))
    demo = order_demo(loaded, TEXT, seed=4, head=0)
    assert demo.plain_difference <= reordered_bound(loaded, TEXT, head=0).max()  # only rounding, as derived
    assert demo.positioned_difference > 1e-2


def test_one_token_cannot_be_shuffled(tiny_trained_models):
    loaded = api.load_from(tiny_trained_models["tiny-dates"])
    with pytest.raises(ValueError, match="at least two"):
        order_demo(loaded, "7")
    with pytest.raises(ValueError, match="head"):
        order_demo(loaded, "7 May", head=99)


def test_shuffle_demo_equals_the_traced_weights(tiny_trained_models):
    """The demo's maps are the weights of the ordinary forward pass: with the mask and positions
    switched off they equal the trace's first layer, and with positions on, the trace without the mask."""
    loaded = api.load_from(tiny_trained_models["tiny-lm"])
    demo = order_demo(loaded, "a small cat holds the quiet lamp", seed=3, head=1)
    ids = loaded.encode("a small cat holds the quiet lamp").ids
    plain = loaded.trace_ids(ids, Switches(positions=False, causal=False)).attention["self"].probs[0, 1]
    positioned = loaded.trace_ids(ids, Switches(causal=False)).attention["self"].probs[0, 1]
    # the demo traces the same ids with the same switches through the same path: bit for bit
    np.testing.assert_array_equal(demo.plain, plain)
    np.testing.assert_array_equal(demo.positioned, positioned)
    shuffled = [ids[i] for i in demo.order]
    traced = loaded.trace_ids(shuffled, Switches(positions=False, causal=False)).attention["self"].probs[0, 1]
    np.testing.assert_array_equal(demo.plain_shuffled, traced)
