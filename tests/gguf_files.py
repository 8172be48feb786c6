"""Tiny GGUF files written here with `gguf`'s own writer, as llama.cpp's convert_hf_to_gguf.py writes them: the
weights of a tiny Hugging Face checkpoint (tests/llama_checkpoints.py), queries' and keys' rows permuted for
llama and mistral, 2-D weights stored as one tensor type (norms stay F32, as llama.cpp keeps them), and the
checkpoint's byte-level BPE tokenizer as tokenizer.ggml.*. No test downloads a model."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

GGUF_NAMES = {"model.embed_tokens": "token_embd", "model.norm": "output_norm", "lm_head": "output"}
LAYER_NAMES = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
               "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
               "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
               "mlp.down_proj": "ffn_down"}
PRE = {"llama": "llama-bpe", "mistral": "gpt-2", "qwen2": "qwen2"}


def gguf_name(hf_name: str) -> str:
    """model.layers.3.self_attn.q_proj.weight -> blk.3.attn_q.weight"""
    stem, _, suffix = hf_name.rpartition(".")
    if stem.startswith("model.layers."):
        layer, _, part = stem.removeprefix("model.layers.").partition(".")
        return f"blk.{layer}.{LAYER_NAMES[part]}.{suffix}"
    return f"{GGUF_NAMES[stem]}.{suffix}"


def permute(rows: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's LlamaModel.permute: within each head, the two halves' rows interleaved."""
    return rows.reshape(heads, 2, rows.shape[0] // heads // 2, *rows.shape[1:]).swapaxes(1, 2).reshape(rows.shape)


def source_tensors(folder: Path, arch: str) -> dict[str, np.ndarray]:
    """The checkpoint's tensors under GGUF names, float32, in the order llama.cpp stores them (permuted)."""
    hf = json.loads((folder / "config.json").read_text())
    heads, kv = hf["num_attention_heads"], hf.get("num_key_value_heads") or hf["num_attention_heads"]
    tensors = {}
    for name, values in load_file(str(folder / "model.safetensors")).items():
        if hf.get("tie_word_embeddings") and name == "lm_head.weight":
            continue  # tied: llama.cpp stores no read-out
        values = values.astype(np.float32)
        if arch != "qwen2" and ".q_proj." in name:
            values = permute(values, heads)
        elif arch != "qwen2" and ".k_proj." in name:
            values = permute(values, kv)
        tensors[gguf_name(name)] = values
    return tensors


def write(path: Path, folder: Path, arch: str, qtype: str = "F32", *, metadata: dict | None = None,
          tensors: dict[str, np.ndarray] | None = None, raw: dict[str, tuple[np.ndarray, str]] | None = None,
          drop: tuple[str, ...] = ()) -> Path:
    """A GGUF of the Hugging Face folder's model as `arch`, every 2-D weight stored as `qtype` (gguf.quants).

    metadata: key -> value added or replaced (a value of None leaves the key out); tensors: the float32
    tensors to write instead of the folder's; raw: name -> (bytes, type name) written as they are (a type
    the reader does not know); drop: tensor names left out."""
    import gguf
    from gguf import GGMLQuantizationType as Q
    from tokenizers import Tokenizer

    hf = json.loads((folder / "config.json").read_text())
    tokenizer = json.loads(Tokenizer.from_file(str(folder / "tokenizer.json")).to_str())
    vocab = sorted(tokenizer["model"]["vocab"].items(), key=lambda item: item[1])
    specials = {t["content"] for t in tokenizer["added_tokens"] if t["special"]}
    merges = [m if isinstance(m, str) else " ".join(m) for m in tokenizer["model"]["merges"]]
    heads = hf["num_attention_heads"]
    keys = {
        "general.name": "tiny", f"{arch}.context_length": hf["max_position_embeddings"],
        f"{arch}.embedding_length": hf["hidden_size"], f"{arch}.block_count": hf["num_hidden_layers"],
        f"{arch}.feed_forward_length": hf["intermediate_size"], f"{arch}.attention.head_count": heads,
        f"{arch}.attention.head_count_kv": hf.get("num_key_value_heads") or heads,
        f"{arch}.attention.layer_norm_rms_epsilon": float(hf["rms_norm_eps"]),
        f"{arch}.rope.freq_base": float(hf.get("rope_theta") or (hf.get("rope_parameters") or {}).get("rope_theta")),
        f"{arch}.rope.dimension_count": hf.get("head_dim") or hf["hidden_size"] // heads,
        f"{arch}.vocab_size": len(vocab), "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": PRE[arch],
        "tokenizer.ggml.tokens": [t for t, _ in vocab], "tokenizer.ggml.merges": merges,
        "tokenizer.ggml.token_type": [3 if t in specials else 1 for t, _ in vocab],
        "tokenizer.ggml.bos_token_id": hf.get("bos_token_id", 0), "tokenizer.ggml.add_bos_token": False,
    }
    if arch == "mistral" and hf.get("sliding_window"):
        keys[f"{arch}.attention.sliding_window"] = hf["sliding_window"]
    keys.update(metadata or {})
    writer = gguf.GGUFWriter(str(path), arch)
    for key, value in keys.items():
        if value is None or key == "general.architecture":
            continue
        if isinstance(value, bool):
            writer.add_bool(key, value)
        elif isinstance(value, int):
            writer.add_uint32(key, value)
        elif isinstance(value, float):
            writer.add_float32(key, value)
        elif isinstance(value, str):
            writer.add_string(key, value)
        else:
            writer.add_array(key, value)
    for name, values in (source_tensors(folder, arch) if tensors is None else tensors).items():
        if name in drop:
            continue
        if values.ndim == 2 and qtype != "F32":
            writer.add_tensor(name, gguf.quants.quantize(values, Q[qtype]), raw_dtype=Q[qtype])
        else:
            writer.add_tensor(name, values)
    for name, (data, kind) in (raw or {}).items():
        writer.add_tensor(name, data, raw_dtype=Q[kind])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
