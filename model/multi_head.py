"""Multi-head attention in the lecture notes' two variants, and cross-attention.

wide:   every head projects the whole embedding (k -> k), so h heads cost h times
        the parameters of one; the heads' outputs (h·k) are unified back to k.
narrow: the embedding is split across heads (d = k / h), so h heads cost the
        same as one head of size k.
Cross-attention is the same module with queries from one sequence and keys and
values from another.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from model.attention import scaled_dot_product_attention


@dataclass
class HeadsRecord:
    """What one attention layer computed, per head (batch kept).

    inputs (b, t, k)   the query-side vectors entering the layer
    q (b, h, t, d)     queries;  k, v (b, h, s, d)  keys and values
    scores (b, h, t, s) raw q·k;  probs (b, h, t, s);  mask broadcastable to (b, h, t, s)
    """

    inputs: torch.Tensor
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    scores: torch.Tensor
    probs: torch.Tensor
    mask: torch.Tensor | None


class MultiHeadAttention(nn.Module):
    def __init__(self, k: int, heads: int, wide: bool = False, dropout: float = 0.0):
        super().__init__()
        if not wide and k % heads != 0:
            raise ValueError(f"narrow attention splits the embedding: k={k} must be divisible by heads={heads}")
        self.k, self.heads, self.wide, self.dropout = k, heads, wide, dropout
        self.d = k if wide else k // heads  # per-head size
        inner = self.d * heads
        self.toqueries = nn.Linear(k, inner, bias=False)
        self.tokeys = nn.Linear(k, inner, bias=False)
        self.tovalues = nn.Linear(k, inner, bias=False)
        self.unifyheads = nn.Linear(inner, k)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.d).transpose(1, 2)  # (b, h, t, d)

    def forward(
        self,
        x: torch.Tensor,
        context: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        record: bool = False,
    ) -> tuple[torch.Tensor, HeadsRecord | None]:
        """x (b, t, k) gives the queries; context (b, s, k) the keys and values
        (x itself for self-attention). mask: bool, True = may attend, broadcastable
        to (b, h, t, s). With record=True the explicit path runs and every step is
        returned; otherwise the fused kernel is used, which keeps no weights."""
        context = x if context is None else context
        b, t, _ = x.shape
        q = self.split_heads(self.toqueries(x))  # (b, h, t, d)
        k = self.split_heads(self.tokeys(context))  # (b, h, s, d)
        v = self.split_heads(self.tovalues(context))  # (b, h, s, d)
        drop = self.dropout if self.training else 0.0
        rec = None
        if record:
            att = scaled_dot_product_attention(q, k, v, mask, dropout=drop, training=self.training)
            out = att.output
            rec = HeadsRecord(x, q, k, v, att.scores, att.probs, mask)
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=drop)
        out = out.transpose(1, 2).reshape(b, t, self.heads * self.d)  # (b, t, h·d)
        return self.unifyheads(out), rec
