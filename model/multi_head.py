"""Multi-head attention in the lecture notes' two variants, and cross-attention.

wide:   every head projects the whole embedding (k -> k), so h heads cost h times
        the parameters of one; the heads' outputs (h·k) are unified back to k.
narrow: the embedding is split across heads (d = k / h), so h heads cost the
        same as one head of size k.
Cross-attention is the same module with queries from one sequence and keys and
values from another.
grouped-query (Llama-family checkpoints): fewer key/value heads than query heads; each
        key/value head serves n_heads / n_kv_heads consecutive query heads. The record
        repeats them, so every query head has its own (shared) keys and values to show.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from model.attention import scaled_dot_product_attention
from model.kv_cache import LayerCache
from model.positions import rotate


@dataclass
class HeadsRecord:
    """What one attention layer computed, per head (batch kept).

    inputs (b, t, k)   the query-side vectors entering the layer
    q (b, h, t, d)     queries;  k, v (b, h, s, d)  keys and values
    scores (b, h, t, s) raw q·k (None where not kept);  probs (b, h, t, s);  mask broadcastable to (b, h, t, s)
    output (b, t, k)   what the layer adds to the residual stream: Σ_h W_O^h (probs v)_h + b_O
    out_weight (k, h·d), out_bias (k,)   W_O (head h owns columns h·d … (h+1)·d) and b_O
    """

    inputs: torch.Tensor
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    scores: torch.Tensor | None
    probs: torch.Tensor
    mask: torch.Tensor | None
    output: torch.Tensor | None = None
    out_weight: torch.Tensor | None = None
    out_bias: torch.Tensor | None = None


class MultiHeadAttention(nn.Module):
    def __init__(self, k: int, heads: int, wide: bool = False, dropout: float = 0.0, bias: bool = False,
                 kv_heads: int = 0, d: int = 0, out_bias: bool = True):
        super().__init__()
        if not d and not wide and k % heads != 0:
            raise ValueError(f"narrow attention splits the embedding: k={k} must be divisible by heads={heads}")
        self.k, self.heads, self.wide, self.dropout = k, heads, wide, dropout
        self.kv_heads = kv_heads or heads
        if heads % self.kv_heads:
            raise ValueError(f"{heads} query heads cannot share {self.kv_heads} key/value heads evenly")
        self.d = d or (k if wide else k // heads)  # per-head size
        inner = self.d * heads
        self.toqueries = nn.Linear(k, inner, bias=bias)  # bias: pretrained BERT, GPT-2 and Qwen2 have one
        self.tokeys = nn.Linear(k, self.d * self.kv_heads, bias=bias)
        self.tovalues = nn.Linear(k, self.d * self.kv_heads, bias=bias)
        self.unifyheads = nn.Linear(inner, k, bias=out_bias)

    def split_heads(self, x: torch.Tensor, heads: int | None = None) -> torch.Tensor:
        b, t, _ = x.shape
        return x.view(b, t, heads or self.heads, self.d).transpose(1, 2)  # (b, h, t, d)

    def share(self, x: torch.Tensor) -> torch.Tensor:
        """(b, h_kv, s, d) -> (b, h, s, d): key/value head j serves query heads j·g … j·g + g − 1 (g = h / h_kv)."""
        groups = self.heads // self.kv_heads
        if groups == 1:
            return x
        b, _, s, d = x.shape
        return x[:, :, None].expand(b, self.kv_heads, groups, s, d).reshape(b, self.heads, s, d)

    def forward(
        self,
        x: torch.Tensor,
        context: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        record: bool = False,
        heads_off: tuple[int, ...] = (),
        method: str = "zero",
        rotation: tuple[torch.Tensor, torch.Tensor] | None = None,
        past: LayerCache | None = None,
        edit_heads=None,
    ) -> tuple[torch.Tensor, HeadsRecord | None]:
        """x (b, t, k) gives the queries; context (b, s, k) the keys and values
        (x itself for self-attention). mask: bool, True = may attend, broadcastable
        to (b, h, t, s). With record=True the explicit path runs and every step is
        returned; otherwise the fused kernel is used, which keeps no weights.
        heads_off: heads knocked out (model/switches.py), silenced by `method`:
        "zero" drops their output, "uniform" spreads their weights evenly over the allowed keys.
        rotation: (cos, sin), each (t, d), turning queries and keys by their positions (rotary models,
        model/positions.py); the record keeps the turned q and k, whose dot products are the scores.
        past: this layer's key/value cache (incremental decoding, model/kv_cache.py): x holds only the new
        tokens, their keys and values are appended to it, and the queries read everything it keeps; rotation
        and mask are then for the new positions against the kept ones.
        edit_heads: sees (and may replace) each head's weighted sum of values, (b, h, t, d), before W_O."""
        context = x if context is None else context
        b, t, _ = x.shape
        q = self.split_heads(self.toqueries(x))  # (b, h, t, d)
        k = self.split_heads(self.tokeys(context), self.kv_heads)  # (b, h_kv, s, d)
        v = self.split_heads(self.tovalues(context), self.kv_heads)  # (b, h_kv, s, d)
        if rotation is not None:
            q, k = rotate(q, *rotation), rotate(k, *rotation)
        if past is not None:
            k, v = past.extend(k, v)  # (b, h_kv, kept + t, d): the cached keys and values, then the new ones
        k, v = self.share(k), self.share(v)  # (b, h, s, d)
        drop = self.dropout if self.training else 0.0
        rec = None
        if record or heads_off:
            # record: True, or a model.transformer.LayerSlot saying whether to keep the raw scores and where
            # to write the weights
            keep_scores = getattr(record, "keep_scores", True)
            weights_only = getattr(record, "weights_only", False) and not heads_off and edit_heads is None
            into = record.probs_into((b, self.heads, t, k.size(-2)), q.device) if hasattr(record, "probs_into") \
                else None
            att = scaled_dot_product_attention(q, k, v, mask, dropout=drop, training=self.training,
                                               keep_scores=keep_scores, probs_out=into, weights_only=weights_only)
            out, probs = att.output, att.probs
            if heads_off:
                out, probs = self._knock_out(out, probs, v, mask, list(heads_off), method)
            rec = HeadsRecord(x, q, k, v, att.scores, probs, mask) if record else None
            if weights_only:  # nothing reads what the layer adds (model.transformer.LayerSlot)
                return None, rec
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=drop)
        if edit_heads is not None:
            out = edit_heads(out)
        out = self.unifyheads(out.transpose(1, 2).reshape(b, t, self.heads * self.d))  # (b, t, h·d) -> (b, t, k)
        if rec is not None:
            rec.output, rec.out_weight, rec.out_bias = out, self.unifyheads.weight, self.unifyheads.bias
        return out, rec

    def _knock_out(self, out, probs, v, mask, heads: list[int], method: str):
        """out (b, h, t, d) and probs (b, h, t, s) with `heads` silenced; the probs returned are
        the weights the layer really used (a zeroed head keeps its weights, its output is dropped).
        heads: head numbers (silenced in every batch row), or (row, head) pairs (each in its row only)."""
        per_row = isinstance(heads[0], tuple)
        numbers = [h for _, h in heads] if per_row else heads
        if max(numbers) >= self.heads:
            raise ValueError(f"head {max(numbers) + 1} does not exist: this layer has {self.heads} heads")
        where = tuple(map(list, zip(*heads))) if per_row else (slice(None), heads)  # indexes (b, h)
        out, probs = out.clone(), probs.clone()
        if method == "zero":
            out[where] = 0.0
        elif method == "uniform":
            allowed = torch.ones_like(probs, dtype=torch.bool)
            if mask is not None:
                allowed = allowed & mask  # (b, h, t, s)
            uniform = allowed.to(probs.dtype) / allowed.sum(-1, keepdim=True).clamp(min=1)
            probs[where] = uniform[where]
            out[where] = probs[where] @ v[where]  # (b, n, t, d), or (n, t, d) for (row, head) pairs
        else:
            raise ValueError(f"unknown ablation method {method!r}")
        return out, probs
