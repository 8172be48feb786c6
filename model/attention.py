"""Attention as pure functions: every intermediate is returned, nothing is stored.

Dimension letters used across model/:
    b batch, h heads, t query positions, s key/value positions,
    k embedding size (d_model), d per-head size, v vocabulary size.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class Attention:
    """Everything one call to scaled dot-product attention computed.

    output  (..., t, d)  the weighted sum of the values (None when only the weights were asked for)
    scores  (..., t, s)  raw dot products q·k, before scaling and masking (None unless kept)
    mask    (t, s) bool  True where a query may look at a key (None: all allowed)
    probs   (..., t, s)  softmax over keys; each row sums to 1
    """

    output: torch.Tensor | None
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
    weights_only: bool = False,
) -> Attention:
    """softmax(q kᵀ / (sqrt(d) · temperature)) v, with every step kept.

    q (..., t, d), k (..., s, d), v (..., s, d_v); mask (t, s) or broadcastable,
    True = allowed. scale=False skips the 1/sqrt(d); temperature -> 0 gives hard
    (argmax) attention, temperature -> inf gives uniform attention over the
    allowed keys.
    keep_scores=False: the raw scores are not returned (None), and are scaled and masked in place (one
    (..., t, s) buffer fewer, the same numbers). probs_out: a float32 (..., t, s) tensor the weights are
    written into (a slice of every layer's weights, model.transformer.Recording(stack=True)), for float32 v.
    weights_only=True: the weighted sum of the values is not computed (output None).
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    divisor = (math.sqrt(q.size(-1)) if scale else 1.0) * temperature  # one division: sqrt(d)·1 is sqrt(d)
    if not keep_scores and probs_out is not None and dropout == 0 and q.dim() > 1 and q.device.type == "cpu" \
            and q.size(-2) * k.size(-2) >= HEAD_BY_HEAD_CELLS and q.dtype == k.dtype == v.dtype == torch.float32:
        return _head_by_head(q, k, v, mask, divisor, probs_out, weights_only)  # (a GPU runs all heads in one kernel)
    if keep_scores:
        scores = q @ k.transpose(-2, -1)  # (..., t, s)
        logits = scores / divisor if divisor != 1.0 else scores
        if mask is not None:
            logits = torch.where(mask, logits, float("-inf"))  # a blocked key gets exp(-inf) = 0 weight
    else:
        scores = None
        queries, divisor = _scaled_queries(q, divisor)
        logits = queries @ k.transpose(-2, -1)
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
    return Attention(output=None if weights_only else dropped @ v, scores=scores, mask=mask, probs=probs)


# One head at a time pays a few torch calls per head: at 32 tokens lm's four layers took 860 us that way against
# 260 us batched (about 1 ms of a 32-token /analyze, 2026-11-26). It pays back where a layer's maps outgrow the
# processor's cache, so only maps of at least this many cells (128 x 128) go one head at a time.
HEAD_BY_HEAD_CELLS = 128 * 128


def _scaled_queries(q: torch.Tensor, divisor: float) -> tuple[torch.Tensor, float]:
    """(queries, what is left to divide the scores by): a power of two (sqrt(64) = 8) divides the queries
    first, giving the very same numbers (a binary float scales exactly by one) without a pass over the scores."""
    if divisor != 1.0 and math.frexp(divisor)[0] == 0.5:
        return q / divisor, 1.0
    return q, divisor


def _head_by_head(q, k, v, mask, divisor: float, probs_out: torch.Tensor, weights_only: bool = False) -> Attention:
    """The trace's path (keep_scores=False, the weights written into probs_out; float32, no dropout): the
    same numbers as the batched path, one head at a time, so that a head's (t, s) scores and weights stay in
    the processor's cache from the product through the softmax to the weighted sum. A 12-head layer's are
    12.6 MB each at 512 tokens, more than the cache holds: batched, the three steps of a 12 x 12-head model
    at 512 tokens took 166-199 ms of CPU, one head at a time 124 ms, and the fused kernel of a forward pass
    that keeps nothing 100 ms (2026-11-26, one thread)."""
    queries, divisor = _scaled_queries(q, divisor)
    lead, t, s = q.shape[:-2], q.size(-2), k.size(-2)
    keys, values = k.expand(*lead, s, k.size(-1)), v.expand(*lead, s, v.size(-1))  # views
    blocked = None if mask is None else (~mask).expand(*lead, t, s)
    out = None if weights_only else v.new_empty(*lead, t, v.size(-1))
    scores = q.new_empty(t, s)  # one head's, reused
    for head in itertools.product(*map(range, lead)):  # (batch row, head)
        torch.mm(queries[head], keys[head].transpose(0, 1), out=scores)
        if divisor != 1.0:
            scores.div_(divisor)
        if blocked is not None:
            scores.masked_fill_(blocked[head], float("-inf"))  # a blocked key gets exp(-inf) = 0 weight
        torch.softmax(scores, dim=-1, dtype=torch.float32, out=probs_out[head])
        if out is not None:
            torch.mm(probs_out[head], values[head], out=out[head])
    return Attention(output=out, scores=None, mask=mask, probs=probs_out)
