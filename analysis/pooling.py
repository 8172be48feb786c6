"""Which tokens a pooled classifier's decision draws on (numpy).

The classifier turns the last layer's vectors x_1..x_t (t, k) into one vector p (k,) and scores
each category c as w_c · p + b_c. How each token takes part depends on the pooling:

    mean   p = (x_1 + ... + x_t) / t: every token adds its vector, divided by t
    max    p_d = max_i x_id: in each of the k dimensions one token wins and sets the value
    cls    p = x_1: only the first token's vector, which gathered the others through attention

Two numbers per token, both exact (they add up to what they split):
    token_shares         each token's share of the pooled vector (sums to 1)
    score_contributions  each token's part of the chosen category's score w_c · p (sums to it)
Attention already mixed the tokens before pooling, so "token i's vector" carries some of its
neighbours: rollout and gradient × input (analysis/attribution.py, experiments/interventions.py) follow
the input tokens instead.
"""
from __future__ import annotations

import numpy as np

POOLINGS = ("mean", "max", "cls")


def _check(features, pooling: str) -> np.ndarray:
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1:
        raise ValueError(f"features must be the last layer's vectors (t, k), got shape {x.shape}")
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    return x


def pool(features, pooling: str) -> np.ndarray:
    """(t, k) -> (k,), as the model pools (model.transformer.Classifier.pool, without padding)."""
    x = _check(features, pooling)
    if pooling == "cls":
        return x[0].astype(np.float32)
    return (x.max(0) if pooling == "max" else x.mean(0)).astype(np.float32)


def winners(features) -> np.ndarray:
    """(k,) for max pooling: which token holds the largest value in each dimension."""
    return np.asarray(features).argmax(0)


def token_shares(features, pooling: str) -> np.ndarray:
    """(t,) each token's share of the pooled vector; the shares sum to 1.

    mean: how far x_i/t reaches along p, as a share of |p|²: (x_i · p) / (t |p|²); a token pointing
          against the sentence's direction gets a negative share.
    max:  the share of the k dimensions whose maximum the token holds.
    cls:  all of it for the first token: the pooled vector is its vector."""
    x = _check(features, pooling)
    t = x.shape[0]
    if pooling == "cls":
        return np.eye(t, dtype=np.float32)[0]
    if pooling == "max":
        return (np.bincount(winners(x), minlength=t) / x.shape[1]).astype(np.float32)
    p = x.mean(0)
    norm = float(p @ p)
    if norm == 0:
        return np.full(t, 1 / t, dtype=np.float32)
    return (x @ p / (t * norm)).astype(np.float32)


def score_contributions(features, weight, pooling: str) -> np.ndarray:
    """(t,) each token's part of one category's score w · p (bias left out); they sum to w · p.

    weight (k,) is the category's row of the linear layer. mean: w · x_i / t; max: the sum of
    w_d x_id over the dimensions d the token wins; cls: w · x_1 for the first token, 0 elsewhere."""
    x = _check(features, pooling)
    w = np.asarray(weight, dtype=np.float64)
    if w.shape != (x.shape[1],):
        raise ValueError(f"weight must be one category's row ({x.shape[1]},), got shape {w.shape}")
    t = x.shape[0]
    if pooling == "mean":
        return (x @ w / t).astype(np.float32)
    out = np.zeros(t)
    if pooling == "cls":
        out[0] = x[0] @ w
        return out.astype(np.float32)
    won = winners(x)
    np.add.at(out, won, w * x[won, np.arange(x.shape[1])])
    return out.astype(np.float32)


def pooling_weights(features, pooling: str) -> np.ndarray:
    """(t,) how much of the pooled vector comes from each position's final vector, as non-negative
    weights summing to 1: 1/t each (mean), the share of dimensions won (max), all on the first (cls).
    Multiplied into a rollout (t, t) they say how much each input token flowed into the pooled vector."""
    x = _check(features, pooling)
    t = x.shape[0]
    if pooling == "mean":
        return np.full(t, 1 / t, dtype=np.float32)
    return token_shares(x, pooling)
