"""What multi-head attention costs, wide versus narrow, for a model's real sizes.

Counted by building the layers (model/multi_head.py) rather than by formula, so
the numbers shown to students are the ones the code actually uses.
"""
from __future__ import annotations

from dataclasses import dataclass

from model.config import TransformerConfig
from model.multi_head import MultiHeadAttention


@dataclass
class HeadSizes:
    """k the embedding size, h heads; d the per-head size in each variant."""

    k: int
    heads: int
    wide: bool  # what the model actually uses
    d_narrow: int
    d_wide: int
    params_narrow: int  # one attention layer, queries + keys + values + unifyheads
    params_wide: int
    params_single: int  # one head of full size k: what narrow attention costs the same as
    attention_layers: int  # self + cross attention layers in the whole model


def count_parameters(module) -> int:
    return sum(p.numel() for p in module.parameters())


def head_sizes(config: TransformerConfig) -> HeadSizes:
    k, h = config.d_model, config.n_heads
    layers = config.n_layers
    if config.arch == "encoder-decoder":
        layers += 2 * config.n_decoder_layers  # masked self-attention and cross-attention
    return HeadSizes(
        k=k,
        heads=h,
        wide=config.wide,
        d_narrow=k // h,
        d_wide=k,
        params_narrow=count_parameters(MultiHeadAttention(k, h, wide=False)),
        params_wide=count_parameters(MultiHeadAttention(k, h, wide=True)),
        params_single=count_parameters(MultiHeadAttention(k, 1, wide=False)),
        attention_layers=layers,
    )
