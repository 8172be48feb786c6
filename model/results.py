"""What the notebook API (model/api.py) hands back besides a Trace: a text's encoding, a translation
and a classification, as plain lists and numpy arrays."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Encoded:
    ids: list[int]
    tokens: list[str]  # readable labels, one per id
    truncated: bool  # the input was longer than the model's context and was cut


@dataclass
class Translation:
    text: str
    score: float  # log-probability of the whole output
    finished: bool


@dataclass
class Classification:
    """What the classifier made of one text, as numpy arrays for analysis/ and viz/.

    tokens    what it read, <s> first (the [CLS] token a "cls" model pools on)
    labels    every category, in the model's order;  probs (c,) their probabilities
    features  (t, k) the last layer's vectors, before pooling;  pooled (k,) the one vector they became
    weights   (c, k) and bias (c,): the linear layer, score_c = weights[c] · pooled + bias[c]
    pooling   "mean", "max" or "cls"
    """

    tokens: list[str]
    labels: list[str]
    probs: np.ndarray
    features: np.ndarray
    pooled: np.ndarray
    weights: np.ndarray
    bias: np.ndarray
    pooling: str
    truncated: bool = False

    def top(self, k: int | None = 5) -> list[tuple[str, float]]:
        """The k likeliest categories with their probabilities, likeliest first (k=None: all)."""
        order = np.argsort(-self.probs, kind="stable")[:k]
        return [(self.labels[i], float(self.probs[i])) for i in order]
