"""Attention as pure functions: every intermediate is returned, nothing is stored.

Dimension letters used across model/:
    b batch, h heads, t query positions, s key/value positions,
    k embedding size (d_model), d per-head size, v vocabulary size.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class Attention:
    """Everything one call to scaled dot-product attention computed.

    output  (..., t, d)  the weighted sum of the values
    scores  (..., t, s)  raw dot products q·k, before scaling and masking
    mask    (t, s) bool  True where a query may look at a key (None: all allowed)
    probs   (..., t, s)  softmax over keys; each row sums to 1
    """

    output: torch.Tensor
    scores: torch.Tensor
    mask: torch.Tensor | None
    probs: torch.Tensor


def causal_mask(t: int, s: int | None = None, device=None, window: int = 0) -> torch.Tensor:
    """(t, s) bool, True on and below the diagonal: position i sees keys 0..i only; with a sliding
    window (Mistral) only the last `window` of them, itself included."""
    s = t if s is None else s
    mask = torch.ones(t, s, dtype=torch.bool, device=device).tril(diagonal=s - t)
    return mask.triu(diagonal=s - t - window + 1) if 0 < window < s else mask


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    scale: bool = True,
    temperature: float = 1.0,
    dropout: float = 0.0,
    training: bool = False,
) -> Attention:
    """softmax(q kᵀ / (sqrt(d) · temperature)) v, with every step kept.

    q (..., t, d), k (..., s, d), v (..., s, d_v); mask (t, s) or broadcastable,
    True = allowed. scale=False skips the 1/sqrt(d); temperature -> 0 gives hard
    (argmax) attention, temperature -> inf gives uniform attention over the
    allowed keys.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    scores = q @ k.transpose(-2, -1)  # (..., t, s)
    divisor = (math.sqrt(q.size(-1)) if scale else 1.0) * temperature  # one division: sqrt(d)·1 is sqrt(d)
    logits = scores / divisor if divisor != 1.0 else scores
    if mask is not None:
        logits = torch.where(mask, logits, float("-inf"))  # a blocked key gets exp(-inf) = 0 weight
    probs = torch.softmax(logits, dim=-1, dtype=torch.float32)  # in float32 even for a half-precision model
    probs = probs if probs.dtype == v.dtype else probs.to(v.dtype)
    dropped = F.dropout(probs, dropout, training) if dropout > 0 else probs
    return Attention(output=dropped @ v, scores=scores, mask=mask, probs=probs)
