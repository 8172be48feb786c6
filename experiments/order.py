"""The shuffle experiment's forward passes: one head of the first self-attention layer on a sentence and on
a shuffle of its tokens, with and without the position vectors (analysis.order has the numbers: OrderDemo).

    from model import api
    from experiments.order import order_demo
    demo = order_demo(api.load("lm"), "The cat sat on the mat", seed=0, head=0)
    demo.plain_difference, demo.positioned_difference      # ~0, clearly above 0
"""
from __future__ import annotations

import numpy as np

from analysis.order import OrderDemo, shuffle_order
from model.switches import Switches


def _first_layer_weights(loaded, ids: list[int], with_positions: bool, head: int) -> np.ndarray:
    """(t, t) weights of `head` in the first (encoder) self-attention layer, read from a trace of
    the ordinary forward pass with the causal mask off (and the positions off when asked)."""
    trace = loaded.trace_ids(ids, Switches(positions=with_positions, causal=False))
    kind = "encoder" if loaded.arch == "encoder-decoder" else "self"
    return trace.attention[kind].probs[0, head]


def order_demo(loaded, text: str, seed: int = 0, head: int = 0) -> OrderDemo:
    """Weights of one first-layer head for `text` and for its tokens shuffled by `seed`.

    `loaded` is a model.api.LoadedModel; the dates model's encoder is used for dates."""
    enc = loaded.encode(text)
    if len(enc.ids) < 2:
        raise ValueError("Type at least two tokens: one token cannot be shuffled.")
    n_heads = loaded.config.n_heads
    if not 0 <= head < n_heads:
        raise ValueError(f"head must be in 0..{n_heads - 1}, got {head}")
    # the tokens the model adds itself stay where it puts them: <s> or [CLS] first, [SEP] last
    added = loaded.added_ids if loaded.arch != "encoder-decoder" else set()
    keep_first = enc.ids[0] in added
    keep_last = len(enc.ids) > 2 and enc.ids[-1] in added
    order = shuffle_order(len(enc.ids), seed, keep_first, keep_last)
    shuffled_ids = [enc.ids[i] for i in order]
    name = "encoder layer 1" if loaded.arch == "encoder-decoder" else "layer 1"
    return OrderDemo(
        tokens=list(enc.tokens),
        shuffled_tokens=[enc.tokens[i] for i in order],
        order=order,
        plain=_first_layer_weights(loaded, enc.ids, False, head),
        plain_shuffled=_first_layer_weights(loaded, shuffled_ids, False, head),
        positioned=_first_layer_weights(loaded, enc.ids, True, head),
        positioned_shuffled=_first_layer_weights(loaded, shuffled_ids, True, head),
        layer_name=name,
        head=head,
    )
