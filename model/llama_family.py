"""The Llama family in Hugging Face format: Llama, Mistral and Qwen2 (SmolLM2 and TinyLlama are Llamas).

Pre-norm decoders with rotary positions (rope_theta and rope_scaling from config.json), grouped-query
attention (fewer key/value heads than query heads), RMSNorm and the SwiGLU feed-forward; Qwen2 adds biases
to q, k and v, Mistral may look only at the last sliding_window tokens. model/pretrained.py reads the
folder; this module says how their config.json, weight names and tokenizer map onto this project's.
"""
from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Tokenizer, processors

from model.checkpoint import CheckpointError
from model.config import TransformerConfig

ROTARY = ("llama", "mistral", "qwen2")
ROPE_TYPES = ("default", "linear", "dynamic", "llama3")


def _rope(hf: dict, label: str) -> dict:
    """TransformerConfig's rope_* fields from config.json: transformers 4 writes rope_theta and rope_scaling
    ({"type" or "rope_type": ..., "factor": ...}), transformers 5 one rope_parameters dictionary."""
    scaling = dict(hf.get("rope_scaling") or {})
    scaling.update(hf.get("rope_parameters") or {})
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind not in ROPE_TYPES:
        raise CheckpointError(f"{label} scales its rotary positions with rope_type {kind!r}; this demo runs "
                              f"{', '.join(ROPE_TYPES)}. Choose another checkpoint.")
    if float(scaling.get("partial_rotary_factor", hf.get("partial_rotary_factor", 1.0))) != 1.0:
        raise CheckpointError(f"{label} turns only part of each head (partial_rotary_factor); this demo turns "
                              "every dimension. Choose another checkpoint.")
    theta = scaling.get("rope_theta", hf.get("rope_theta", 10000.0))
    original = (scaling.get("original_max_position_embeddings") or hf.get("original_max_position_embeddings")
                or hf["max_position_embeddings"])
    fields = dict(rope_theta=float(theta), rope_scaling=kind, rope_original_max_len=int(
        hf["max_position_embeddings"] if kind == "dynamic" else original))
    if kind != "default":
        fields["rope_factor"] = float(scaling["factor"])
    if kind == "llama3":
        fields.update(rope_low_freq_factor=float(scaling["low_freq_factor"]),
                      rope_high_freq_factor=float(scaling["high_freq_factor"]))
    return fields


def rotary_config(hf: dict, kind: str, label: str) -> TransformerConfig:
    """Llama, Mistral and Qwen2: pre-norm decoders with rotary positions, grouped-query attention, RMSNorm
    and the SwiGLU feed-forward; Qwen2 adds biases to q, k and v (not to the output), Mistral may look only
    at the last sliding_window tokens."""
    if hf.get("hidden_act", "silu") != "silu":
        raise CheckpointError(f"{label} gates its feed-forward with {hf['hidden_act']!r}; this demo runs SiLU "
                              "(SwiGLU), as Llama, Mistral and Qwen2 do. Choose another checkpoint.")
    window = 0
    if kind == "mistral":
        window = hf.get("sliding_window") or 0
    elif kind == "qwen2" and hf.get("use_sliding_window"):
        raise CheckpointError(f"{label} uses Qwen2's sliding-window layers (use_sliding_window); this demo runs "
                              "Qwen2 with full attention in every layer. Choose another checkpoint.")
    heads = hf["num_attention_heads"]
    attention_bias = bool(hf.get("attention_bias", False))
    return TransformerConfig(
        arch="decoder", vocab_size=hf["vocab_size"], max_len=hf["max_position_embeddings"],
        d_model=hf["hidden_size"], n_heads=heads, n_layers=hf["num_hidden_layers"], d_ff=hf["intermediate_size"],
        dropout=0.0, positions="rotary", norm="pre", tie_embeddings=bool(hf.get("tie_word_embeddings", False)),
        activation="silu", layer_norm_eps=hf.get("rms_norm_eps", 1e-6),
        qkv_bias=True if kind == "qwen2" else attention_bias, out_bias=False if kind == "qwen2" else attention_bias,
        lm_head="linear", tokenizer="template", n_kv_heads=hf.get("num_key_value_heads") or heads,
        head_dim=hf.get("head_dim") or 0, normalization="rmsnorm", feed_forward="swiglu",
        mlp_bias=bool(hf.get("mlp_bias", False)), sliding_window=window, **_rope(hf, label))



_LLAMA_LAYER = {"self_attn.q_proj": "self_attention.toqueries", "self_attn.k_proj": "self_attention.tokeys",
                "self_attn.v_proj": "self_attention.tovalues", "self_attn.o_proj": "self_attention.unifyheads",
                "input_layernorm": "norm1", "post_attention_layernorm": "norm2", "mlp.gate_proj": "feed_forward.gate",
                "mlp.up_proj": "feed_forward.up", "mlp.down_proj": "feed_forward.down"}
_LLAMA_TOP = {"embed_tokens": "embed.token_embedding", "norm": "stack.final_norm", "lm_head": "to_vocab"}
LLAMA_LAYOUT = (("model.",), r"layers\.(\d+)\.(.+)", _LLAMA_LAYER, _LLAMA_TOP)


def add_bos(tokenizer: Tokenizer, directory: Path, hf: dict) -> None:
    """Start every text with the model's BOS token where its tokenizer_config.json says add_bos_token but its
    tokenizer.json does not add it itself (Llama-2 and TinyLlama files add <s>; SmolLM2's and Qwen2's add none)."""
    try:
        settings = json.loads((directory / "tokenizer_config.json").read_text())
    except (OSError, ValueError):
        return
    bos = hf.get("bos_token_id")
    if not settings.get("add_bos_token") or not isinstance(bos, int) or tokenizer.id_to_token(bos) is None:
        return
    if tokenizer.encode("a", add_special_tokens=True).ids[:1] == [bos]:
        return
    token = tokenizer.id_to_token(bos)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{token} $A", pair=f"{token} $A {token} $B:1", special_tokens=[(token, bos)])
