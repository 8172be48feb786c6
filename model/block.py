"""The transformer block: attention, then a position-wise feed-forward net,
each wrapped in a residual connection and layer normalisation.

post-norm (the lecture notes, the 2017 paper):  x = norm(x + sublayer(x))
pre-norm  (GPT-2 and most modern models):       x = x + sublayer(norm(x))
"""
from __future__ import annotations

import torch
from torch import nn

from model.config import TransformerConfig
from model.multi_head import HeadsRecord, MultiHeadAttention


class FeedForward(nn.Module):
    """The same two-layer net applied to every position on its own."""

    def __init__(self, k: int, hidden: int, dropout: float, activation: str = "gelu"):
        super().__init__()
        gelu = nn.GELU(approximate="tanh" if activation == "gelu_tanh" else "none")
        self.net = nn.Sequential(nn.Linear(k, hidden), gelu, nn.Linear(hidden, k), nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class TransformerBlock(nn.Module):
    """Self-attention (+ cross-attention when cross=True) + feed-forward."""

    def __init__(self, config: TransformerConfig, cross: bool = False):
        super().__init__()
        k, h = config.d_model, config.n_heads
        self.pre_norm = config.norm == "pre"
        eps = config.layer_norm_eps
        self.self_attention = MultiHeadAttention(k, h, config.wide, config.dropout, config.qkv_bias)
        self.norm1 = nn.LayerNorm(k, eps=eps)
        self.cross_attention = MultiHeadAttention(k, h, config.wide, config.dropout, config.qkv_bias) if cross else None
        self.norm_cross = nn.LayerNorm(k, eps=eps) if cross else None
        self.feed_forward = FeedForward(k, config.d_ff, config.dropout, config.activation)
        self.norm2 = nn.LayerNorm(k, eps=eps)
        self.dropout = nn.Dropout(config.dropout)

    def _residual(self, x, norm, sublayer):
        if self.pre_norm:
            out, rec = sublayer(norm(x))
            return x + self.dropout(out), rec
        out, rec = sublayer(x)
        return norm(x + self.dropout(out)), rec

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        context: torch.Tensor | None = None,
        context_mask: torch.Tensor | None = None,
        record: bool = False,
        heads_off: dict[str, tuple[int, ...]] | None = None,
        method: str = "zero",
        attention_only: bool = False,
    ) -> tuple[torch.Tensor, dict[str, HeadsRecord]]:
        """x (b, t, k) -> (b, t, k), plus the attention records when record=True.
        heads_off: "self" / "cross" -> heads to knock out in that attention (model/switches.py).
        attention_only: stop after the attention (the x returned has not been through the feed-forward):
        for a caller that wants only the weights of the last block, whose feed-forward nothing reads."""
        records: dict[str, HeadsRecord] = {}
        off = heads_off or {}
        x, rec = self._residual(x, self.norm1, lambda y: self.self_attention(
            y, mask=mask, record=record, heads_off=off.get("self", ()), method=method))
        if rec is not None:
            records["self"] = rec
        if self.cross_attention is not None:
            x, rec = self._residual(
                x, self.norm_cross, lambda y: self.cross_attention(
                    y, context, mask=context_mask, record=record, heads_off=off.get("cross", ()), method=method)
            )
            if rec is not None:
                records["cross"] = rec
        if attention_only:
            return x, records
        x, _ = self._residual(x, self.norm2, lambda y: (self.feed_forward(y), None))
        return x, records
