"""The transformer block: attention, then a position-wise feed-forward net,
each wrapped in a residual connection and layer normalisation.

post-norm (the lecture notes, the 2017 paper):  x = norm(x + sublayer(x))
pre-norm  (GPT-2 and most modern models):       x = x + sublayer(norm(x))
"""
from __future__ import annotations

import torch
from torch import nn

from model.config import TransformerConfig
from model.kv_cache import LayerCache
from model.multi_head import HeadsRecord, MultiHeadAttention


class FeedForward(nn.Module):
    """The same two-layer net applied to every position on its own."""

    def __init__(self, k: int, hidden: int, dropout: float, activation: str = "gelu"):
        super().__init__()
        gelu = nn.GELU(approximate="tanh" if activation == "gelu_tanh" else "none")
        self.net = nn.Sequential(nn.Linear(k, hidden), gelu, nn.Linear(hidden, k), nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) · weight: layer normalisation without subtracting the mean and without a
    bias (Llama, Mistral, Qwen2). Called as nn.LayerNorm is: norm(x), over the last dimension."""

    def __init__(self, k: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(k))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x = x.float()  # the mean of squares in float32, as the checkpoints were trained
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def make_norm(config: TransformerConfig) -> nn.Module:
    if config.normalization == "rmsnorm":
        return RMSNorm(config.d_model, eps=config.layer_norm_eps)
    return nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)


class SwiGLU(nn.Module):
    """The gated feed-forward of Llama-family models: down(silu(gate(x)) · up(x)). The gate decides, per
    hidden unit, how much of up(x) passes."""

    def __init__(self, k: int, hidden: int, bias: bool = False):
        super().__init__()
        self.gate = nn.Linear(k, hidden, bias=bias)
        self.up = nn.Linear(k, hidden, bias=bias)
        self.down = nn.Linear(hidden, k, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))


class TransformerBlock(nn.Module):
    """Self-attention (+ cross-attention when cross=True) + feed-forward."""

    def __init__(self, config: TransformerConfig, cross: bool = False):
        super().__init__()
        k, h = config.d_model, config.n_heads
        self.pre_norm = config.norm == "pre"
        heads = dict(kv_heads=config.kv_heads, d=config.d_head, out_bias=config.out_bias)
        self.self_attention = MultiHeadAttention(k, h, config.wide, config.dropout, config.qkv_bias, **heads)
        self.norm1 = make_norm(config)
        self.cross_attention = (MultiHeadAttention(k, h, config.wide, config.dropout, config.qkv_bias, **heads)
                                if cross else None)
        self.norm_cross = make_norm(config) if cross else None
        self.feed_forward = (SwiGLU(k, config.d_ff, config.mlp_bias) if config.feed_forward == "swiglu"
                             else FeedForward(k, config.d_ff, config.dropout, config.activation))
        self.norm2 = make_norm(config)
        self.dropout = nn.Dropout(config.dropout)

    def _residual(self, x, norm, sublayer, edit=None):
        """edit(out): what the sublayer adds, as a hook sees or replaces it (model/switches.py, hooks)."""
        out, rec = sublayer(norm(x) if self.pre_norm else x)
        if out is None:  # only the attention's weights were computed: nothing reads this x (LayerSlot.weights_only)
            return x, rec
        if edit is not None:
            out = edit(out)
        if self.pre_norm:
            return x + self.dropout(out), rec
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
        rotation: tuple[torch.Tensor, torch.Tensor] | None = None,
        past: LayerCache | None = None,
        hooks=None,
        layer: int = 0,
    ) -> tuple[torch.Tensor, dict[str, HeadsRecord]]:
        """x (b, t, k) -> (b, t, k), plus the attention records when record=True.
        heads_off: "self" / "cross" -> heads to knock out in that attention (model/switches.py).
        attention_only: stop after the attention (the x returned has not been through the feed-forward):
        for a caller that wants only the weights of the last block, whose feed-forward nothing reads.
        rotation: a rotary model's (cos, sin) for the self-attention's queries and keys.
        past: the self-attention's key/value cache when x holds only new tokens (model/kv_cache.py).
        hooks, layer: the switches' hooks and this block's number; the self-attention's heads ("heads",
        (b, h, t, d) before W_O), its output ("attention") and the feed-forward's ("mlp", each (b, t, k))
        pass through hooks.edit."""
        records: dict[str, HeadsRecord] = {}
        off = heads_off or {}
        # record: a bool, or one LayerSlot per attention ("self", "cross": model.transformer.Recording.slots)
        slot = (lambda kind: record.get(kind, False)) if isinstance(record, dict) else (lambda kind: record)
        edit = (lambda site: lambda y: hooks.edit(site, layer, y)) if hooks is not None else (lambda site: None)
        x, rec = self._residual(x, self.norm1, lambda y: self.self_attention(
            y, mask=mask, record=slot("self"), heads_off=off.get("self", ()), method=method,
            rotation=rotation, past=past, edit_heads=edit("heads")), edit("attention"))
        if rec is not None:
            records["self"] = rec
        if self.cross_attention is not None:
            x, rec = self._residual(
                x, self.norm_cross, lambda y: self.cross_attention(
                    y, context, mask=context_mask, record=slot("cross"), heads_off=off.get("cross", ()), method=method)
            )
            if rec is not None:
                records["cross"] = rec
        if attention_only:
            return x, records
        x, _ = self._residual(x, self.norm2, lambda y: (self.feed_forward(y), None), edit("mlp"))
        return x, records
