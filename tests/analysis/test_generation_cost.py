"""The cost of a token with and without the key/value cache, counted by hand on small sizes."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import generation as g

TINY = g.Sizes(n_layers=2, d_model=8, n_heads=4, kv_heads=2, d_head=2, d_ff=16, gated=False, vocab_size=10)


def test_bytes_per_token_is_the_formula_smollm2_included():
    smollm2 = g.Sizes(n_layers=30, d_model=576, n_heads=9, kv_heads=3, d_head=64, d_ff=1536, gated=True,
                      vocab_size=49152)
    assert g.bytes_per_token(smollm2) == 2 * 30 * 3 * 64 * 4 == 46_080  # the 46 KB per token
    assert g.bytes_per_token(g.without_grouping(smollm2)) == 138_240  # and 138 KB with 9 key/value heads
    assert g.bytes_per_token(TINY) == 2 * 2 * 2 * 2 * 4


def test_flops_counted_by_hand():
    # per layer: q 2·8·(4·2) = 128, k and v 2·2·8·(2·2) = 128, out 2·8·8 = 128, feed-forward 2·2·8·16 = 512
    per_layer = 128 + 128 + 128 + 512
    assert g.position_flops(TINY) == 2 * per_layer + 2 * 8 * 10
    assert g.pair_flops(TINY) == 2 * 4 * 4 * 2
    assert g.cached_flops(TINY, 5) == g.position_flops(TINY) + 5 * g.pair_flops(TINY)
    assert g.recompute_flops(TINY, 5) == 5 * g.position_flops(TINY) + 25 * g.pair_flops(TINY)
    gated = g.Sizes(**{**TINY.__dict__, "gated": True})
    assert g.position_flops(gated) - g.position_flops(TINY) == 2 * (2 * 8 * 16)  # one more matrix per layer


def test_costs_average_the_later_steps():
    c = g.costs(TINY, 3, [0.5, 0.001, 0.003], {4: 0.01, 5: 0.03})
    assert c.cached_ms == pytest.approx(2.0) and c.recompute_ms == pytest.approx(20.0) and c.speedup == pytest.approx(10)
    assert c.cached_flops == np.mean([g.cached_flops(TINY, 4), g.cached_flops(TINY, 5)])
    assert c.recompute_flops == np.mean([g.recompute_flops(TINY, 4), g.recompute_flops(TINY, 5)])
    windowed = g.costs(g.Sizes(**{**TINY.__dict__, "window": 4}), 3, [0.5, 0.001, 0.003], {4: 0.01})
    assert windowed.cached_flops == g.cached_flops(TINY, 4)  # a query reads at most the window
    assert g.recompute_lengths(3, 33) == [4, 14, 25, 35] and g.recompute_lengths(3, 1) == [3]
