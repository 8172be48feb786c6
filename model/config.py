"""One dataclass describes a model; it is saved as config.json beside the weights."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

ARCHITECTURES = ("decoder", "encoder", "encoder-decoder", "classifier")
POOLINGS = ("mean", "max", "cls")
POSITIONS = ("learned", "sinusoidal", "none", "rotary")
ROPE_SCALINGS = ("default", "linear", "dynamic", "llama3")


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes and choices of one transformer.

    arch: "decoder" (causal language model, masked self-attention),
          "encoder" (bidirectional, masked-language-model head, unmasked),
          "encoder-decoder" (date translation: encoder, masked decoder, cross-attention),
          "classifier" (unmasked encoder, pooled into one vector, scored per category in `labels`).
    """

    arch: str
    vocab_size: int
    max_len: int = 256
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 4  # encoder layers for encoder-decoder
    n_decoder_layers: int = 0  # only for encoder-decoder
    d_ff: int = 512
    dropout: float = 0.1
    positions: str = "learned"  # "learned" | "sinusoidal" | "none"
    wide: bool = False
    norm: str = "post"  # "post" as in the original paper, or "pre"
    tie_embeddings: bool = True
    # classifier only: how the t output vectors become one ("mean", "max", or "cls": the first token's),
    # and the category names, one per output
    pooling: str = "mean"
    labels: tuple[str, ...] = ()
    # Where pretrained checkpoints differ (model/pretrained.py); the defaults are this project's models.
    activation: str = "gelu"  # "gelu" (exact, BERT) or "gelu_tanh" (GPT-2's tanh approximation)
    layer_norm_eps: float = 1e-5
    qkv_bias: bool = False  # BERT and GPT-2 add a bias to queries, keys and values
    type_vocab_size: int = 0  # BERT's sentence A/B embeddings; one sentence always reads type 0
    position_offset: int = 0  # RoBERTa numbers positions from 2 (0 and 1 belong to padding)
    embedding_norm: bool = False  # BERT normalises token + position (+ type) before the first block
    lm_head: str = "linear"  # "linear", "transform" (BERT's dense, activation, norm, then biased linear), "none"
    tokenizer: str = "project"  # "project": <s> first, <mask> marks; "template": the tokenizer's own [CLS] … [SEP]
    # Llama-family checkpoints (Llama, Mistral, Qwen2): rotary positions, grouped-query attention, RMSNorm, SwiGLU.
    n_kv_heads: int = 0  # key/value heads, each shared by n_heads / n_kv_heads query heads (0: one per query head)
    head_dim: int = 0  # per-head size where a checkpoint sets it apart from d_model / n_heads (0: derived)
    normalization: str = "layernorm"  # "layernorm" or "rmsnorm" (x / rms(x) · weight: no mean, no bias)
    feed_forward: str = "mlp"  # "mlp" (linear, activation, linear) or "swiglu" (down(silu(gate(x)) · up(x)))
    mlp_bias: bool = True  # Llama's feed-forward has no biases
    out_bias: bool = True  # the heads' output projection; Qwen2 has biases on q, k, v only
    rope_theta: float = 10000.0  # rotary positions: pair i turns by position · rope_theta^(-2i/d)
    rope_scaling: str = "default"  # "default", "linear", "dynamic" or "llama3" (config.json's rope_scaling)
    rope_factor: float = 1.0
    rope_low_freq_factor: float = 1.0  # llama3 only
    rope_high_freq_factor: float = 4.0  # llama3 only
    rope_original_max_len: int = 0  # the context the model was pretrained at (dynamic, llama3)
    sliding_window: int = 0  # Mistral: a query sees at most this many keys, itself included (0: all before it)

    def __post_init__(self):
        if self.arch not in ARCHITECTURES:
            raise ValueError(f"arch must be one of {ARCHITECTURES}, got {self.arch!r}")
        if self.norm not in ("post", "pre"):
            raise ValueError(f"norm must be 'post' or 'pre', got {self.norm!r}")
        if self.positions not in POSITIONS:
            raise ValueError(f"positions must be one of {POSITIONS}, got {self.positions!r}")
        if self.activation not in ("gelu", "gelu_tanh", "silu"):
            raise ValueError(f"activation must be 'gelu', 'gelu_tanh' or 'silu', got {self.activation!r}")
        if self.normalization not in ("layernorm", "rmsnorm"):
            raise ValueError(f"normalization must be 'layernorm' or 'rmsnorm', got {self.normalization!r}")
        if self.feed_forward not in ("mlp", "swiglu"):
            raise ValueError(f"feed_forward must be 'mlp' or 'swiglu', got {self.feed_forward!r}")
        if self.rope_scaling not in ROPE_SCALINGS:
            raise ValueError(f"rope_scaling must be one of {ROPE_SCALINGS}, got {self.rope_scaling!r}")
        if self.n_kv_heads and self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads={self.n_heads} must be a multiple of n_kv_heads={self.n_kv_heads}: "
                             "each key/value head serves the same number of query heads")
        if self.positions == "rotary" and (self.d_head % 2 or self.arch not in ("decoder", "encoder")):
            raise ValueError("rotary positions turn pairs of dimensions: they need an even head size and a "
                             "decoder or encoder")
        if self.lm_head not in ("linear", "transform", "none"):
            raise ValueError(f"lm_head must be 'linear', 'transform' or 'none', got {self.lm_head!r}")
        if self.tokenizer not in ("project", "template"):
            raise ValueError(f"tokenizer must be 'project' or 'template', got {self.tokenizer!r}")
        if self.pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {self.pooling!r}")
        object.__setattr__(self, "labels", tuple(self.labels))  # JSON gives a list
        if self.arch == "classifier" and len(self.labels) < 2:
            raise ValueError("a classifier needs labels: the names of at least two categories")
        if self.arch == "encoder-decoder" and self.n_decoder_layers < 1:
            raise ValueError("an encoder-decoder needs n_decoder_layers >= 1")

    @property
    def d_head(self) -> int:
        if self.head_dim:
            return self.head_dim
        return self.d_model if self.wide else self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        """Key/value heads: n_heads, or fewer with grouped-query attention."""
        return self.n_kv_heads or self.n_heads

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TransformerConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config keys {unknown}; known keys are {sorted(known)}")
        return cls(**data)

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> "TransformerConfig":
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"Model config {path} is missing; retrain with `python -m training.train` or restore assets/.")
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise ValueError(f"Model config {path} is not valid JSON ({e}); restore it from the repository.") from e
        return cls.from_dict(data)
