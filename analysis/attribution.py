"""Attention rollout, and the three per-token explanations shown side by side.

A head's weights say where one layer looked. What an output depends on is spread over every
layer: each layer mixes the tokens again, and the residual stream carries each token's own
vector past the attention. Attention rollout (Abnar & Zuidema, 2020) follows that mixing:
average the heads of each layer, count the residual as half of the layer,
Â = 0.5·A + 0.5·I, and multiply the layers. Row i of the product is how much input token j
flowed into position i's final vector, if attention were the only thing that moved information.
Gradient × input asks the model itself instead: how much would the output's score change if a
token's embedding were scaled down. The two often disagree with raw attention, and with each
other: attention weights are not what the output depends on.

Dimension letters: L layers, H heads, t query positions, s key positions.
"""
from __future__ import annotations

import numpy as np

RESIDUAL = 0.5


def _check_probs(probs) -> np.ndarray:
    """probs as an array of 4 dimensions; a float32 stack stays float32 (each layer is read in float64 where it is
    used: the whole stack of smollm2 at 512 tokens would be 570 MB more, and took 1.3 s to copy)."""
    probs = probs if isinstance(probs, np.ndarray) else np.asarray(probs, dtype=np.float64)
    if probs.ndim != 4 or probs.shape[-1] != probs.shape[-2]:
        raise ValueError(f"rollout needs self-attention weights (L, H, t, t), got shape {probs.shape}")
    return probs


def rollout(probs, residual: float = RESIDUAL) -> np.ndarray:
    """(t, t) rollout of self-attention probs (L, H, t, t); every row sums to 1.

    Each layer: the mean over heads, mixed with the identity (the residual connection), rows
    renormalised; then the layers multiplied, the first layer applied first."""
    probs = _check_probs(probs)
    t = probs.shape[-1]
    result = np.eye(t)
    for layer in probs:  # (H, t, t)
        mixed = (1 - residual) * layer.astype(np.float64).mean(0) + residual * np.eye(t)
        mixed /= mixed.sum(-1, keepdims=True)
        result = mixed @ result
    return result.astype(np.float32)


def cross_rollout(cross_probs, encoder_probs, residual: float = RESIDUAL) -> np.ndarray:
    """(t, s) for an encoder-decoder: the last decoder layer's cross-attention (mean over heads)
    carried back through the encoder's rollout, so each output row is spread over the source
    tokens that flowed into the encoder vectors it read. Rows sum to 1."""
    cross_probs = np.asarray(cross_probs, dtype=np.float64)
    if cross_probs.ndim != 4:
        raise ValueError(f"cross_probs must be (L, H, t, s), got shape {cross_probs.shape}")
    last = cross_probs[-1].mean(0)  # (t, s)
    return (last @ rollout(encoder_probs, residual)).astype(np.float32)


def shares(values) -> np.ndarray:
    """|values| as shares of their sum (0..1), so explanations on different scales compare; zeros stay zeros."""
    values = np.abs(np.asarray(values, dtype=np.float64))
    total = values.sum()
    return (values / total if total > 0 else values).astype(np.float32)
