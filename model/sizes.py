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
    biases_narrow: int = 0  # of params_narrow, the biases (the output's, and the query/key/value ones if any)
    biases_wide: int = 0
    qkv_bias: bool = False  # queries, keys and values have a bias (BERT, GPT-2)
    out_bias: bool = True  # the output (unifyheads) has a bias (all but the Llama family)
    kv_heads: int = 0  # key/value heads (fewer than `heads` with grouped-query attention)
    params_model: int = 0  # one of the model's own attention layers, as it is built (shared keys and values)


def count_parameters(module) -> int:
    return sum(p.numel() for p in module.parameters())


def count_biases(module) -> int:
    return sum(p.numel() for p in module.parameters() if p.dim() == 1)


def head_sizes(config: TransformerConfig, model=None) -> HeadSizes:
    """Sizes of one attention layer, narrow and wide, with the model's own biases. Given the model itself,
    the variant it uses and the number of attention layers are read from its modules."""
    k, h, bias, out = config.d_model, config.n_heads, config.qkv_bias, config.out_bias
    # the textbook layers with the model's own biases (Llama has none, not even the output's)
    narrow = MultiHeadAttention(k, h, wide=False, bias=bias, out_bias=out)
    wide = MultiHeadAttention(k, h, wide=True, bias=bias, out_bias=out)
    layers = config.n_layers
    if config.arch == "encoder-decoder":
        layers += 2 * config.n_decoder_layers  # masked self-attention and cross-attention
    mine = MultiHeadAttention(k, h, config.wide, bias=bias, kv_heads=config.kv_heads, d=config.d_head,
                              out_bias=config.out_bias)
    if model is not None:
        own = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
        layers, mine = len(own), own[0]
        if mine.kv_heads == h:  # with shared keys and values, narrow and wide stay the textbook layers
            if config.wide:
                wide = mine
            else:
                narrow = mine
    return HeadSizes(
        k=k,
        heads=h,
        wide=config.wide,
        d_narrow=k // h,
        d_wide=k,
        params_narrow=count_parameters(narrow),
        params_wide=count_parameters(wide),
        params_single=count_parameters(MultiHeadAttention(k, 1, wide=False, bias=bias, out_bias=out)),
        attention_layers=layers,
        biases_narrow=count_biases(narrow),
        biases_wide=count_biases(wide),
        qkv_bias=bias,
        out_bias=out,
        kv_heads=config.kv_heads,
        params_model=count_parameters(mine),
    )
