"""Does self-attention care about word order? Only through the position vectors.

Shuffle a sentence's tokens and compute one head of the first self-attention layer
twice: from the token embeddings alone, and from token embeddings plus positions.
Without positions the shuffled sentence's weights are exactly the original's with
rows and columns permuted (attention treats its input as a set). With positions
they change, because the same word now carries a different position vector.

The causal mask is left off on purpose: the mask itself depends on position, and
this demonstration is about what the vectors alone carry.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.switches import Switches


@dataclass
class OrderDemo:
    """One head of the first self-attention layer on a sentence and on a shuffle of it.

    order            (t,) int: shuffled[i] is original token order[i]
    tokens, shuffled_tokens      labels in each order
    plain, plain_shuffled        (t, t) weights from token embeddings only
    positioned, positioned_shuffled  (t, t) weights from token embeddings + positions
    """

    tokens: list[str]
    shuffled_tokens: list[str]
    order: np.ndarray
    plain: np.ndarray
    plain_shuffled: np.ndarray
    positioned: np.ndarray
    positioned_shuffled: np.ndarray
    layer_name: str
    head: int

    @property
    def inverse(self) -> np.ndarray:
        """(t,) where each original token went: shuffled[inverse[i]] is original token i."""
        return np.argsort(self.order)

    def put_back(self, weights: np.ndarray) -> np.ndarray:
        """Shuffled-order (t, t) weights with rows and columns returned to the original order."""
        inv = self.inverse
        return weights[np.ix_(inv, inv)]

    @property
    def plain_difference(self) -> float:
        """Largest |original - put_back(shuffled)| without positions: ~0 (only rounding)."""
        return float(np.abs(self.plain - self.put_back(self.plain_shuffled)).max())

    @property
    def positioned_difference(self) -> float:
        """The same with positions: clearly above 0, because order now matters."""
        return float(np.abs(self.positioned - self.put_back(self.positioned_shuffled)).max())


def shuffle_order(n: int, seed: int, keep_first: bool, keep_last: bool = False) -> np.ndarray:
    """A permutation of range(n) from `seed`; keep_first leaves a start token (<s>, [CLS]) in place,
    keep_last an end token ([SEP]). Never the identity when a change is possible, so the shuffle is always visible."""
    rng = np.random.default_rng(int(seed))
    start, stop = (1 if keep_first else 0), (n - 1 if keep_last else n)
    order = np.arange(n)
    if stop - start < 2:
        return order
    for _ in range(20):
        order[start:stop] = rng.permutation(np.arange(start, stop))
        if not np.array_equal(order, np.arange(n)):
            break
    return order


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
