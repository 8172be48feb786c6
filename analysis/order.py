"""Does self-attention care about word order? Only through the position vectors.

Shuffle a sentence's tokens and compute one head of the first self-attention layer
twice: from the token embeddings alone, and from token embeddings plus positions.
Without positions the shuffled sentence's weights are exactly the original's with
rows and columns permuted (attention treats its input as a set). With positions
they change, because the same word now carries a different position vector.

The causal mask is left off on purpose: the mask itself depends on position, and
this demonstration is about what the vectors alone carry.

The forward passes are experiments.order's; this module holds the numbers (numpy).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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

