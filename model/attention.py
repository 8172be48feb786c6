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
    scores  (..., t, s)  raw dot products q·k, before scaling and masking (None unless kept)
    mask    (t, s) bool  True where a query may look at a key (None: all allowed)
    probs   (..., t, s)  softmax over keys; each row sums to 1
    """

    output: torch.Tensor
    scores: torch.Tensor | None
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
    keep_scores: bool = True,
    probs_out: torch.Tensor | None = None,
) -> Attention:
    """softmax(q kᵀ / (sqrt(d) · temperature)) v, with every step kept.

    q (..., t, d), k (..., s, d), v (..., s, d_v); mask (t, s) or broadcastable,
    True = allowed. scale=False skips the 1/sqrt(d); temperature -> 0 gives hard
    (argmax) attention, temperature -> inf gives uniform attention over the
    allowed keys.
    keep_scores=False: the raw scores are not returned (None), and are scaled and masked in place (one
    (..., t, s) buffer fewer, the same numbers). probs_out: a float32 (..., t, s) tensor the weights are
    written into (a slice of every layer's weights, model.transformer.Recording(stack=True)), for float32 v.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    divisor = (math.sqrt(q.size(-1)) if scale else 1.0) * temperature  # one division: sqrt(d)·1 is sqrt(d)
    if keep_scores:
        scores = q @ k.transpose(-2, -1)  # (..., t, s)
        logits = scores / divisor if divisor != 1.0 else scores
        if mask is not None:
            logits = torch.where(mask, logits, float("-inf"))  # a blocked key gets exp(-inf) = 0 weight
    else:
        scores = None
        if divisor != 1.0 and math.frexp(divisor)[0] == 0.5:
            # a power of two (sqrt(64) = 8): the queries divided first give the very same numbers (a binary
            # float scales exactly by one), without a pass over the (t, s) scores
            logits = (q / divisor) @ k.transpose(-2, -1)
        else:
            logits = q @ k.transpose(-2, -1)
            if divisor != 1.0:
                logits.div_(divisor)
        if mask is not None:
            logits.masked_fill_(~mask, float("-inf"))
    if probs_out is not None and v.dtype == torch.float32:
        probs = torch.softmax(logits, dim=-1, dtype=torch.float32, out=probs_out)
    else:
        probs = torch.softmax(logits, dim=-1, dtype=torch.float32)  # in float32 even for a half-precision model
    probs = probs if probs.dtype == v.dtype else probs.to(v.dtype)
    dropped = F.dropout(probs, dropout, training) if dropout > 0 else probs
    return Attention(output=dropped @ v, scores=scores, mask=mask, probs=probs)
