"""One dataclass describes a model; it is saved as config.json beside the weights."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

ARCHITECTURES = ("decoder", "encoder", "encoder-decoder", "classifier")
POOLINGS = ("mean", "max", "cls")


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

    def __post_init__(self):
        if self.arch not in ARCHITECTURES:
            raise ValueError(f"arch must be one of {ARCHITECTURES}, got {self.arch!r}")
        if self.norm not in ("post", "pre"):
            raise ValueError(f"norm must be 'post' or 'pre', got {self.norm!r}")
        if self.positions not in ("learned", "sinusoidal", "none"):
            raise ValueError(f"positions must be 'learned', 'sinusoidal' or 'none', got {self.positions!r}")
        if self.activation not in ("gelu", "gelu_tanh"):
            raise ValueError(f"activation must be 'gelu' or 'gelu_tanh', got {self.activation!r}")
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
        return self.d_model if self.wide else self.d_model // self.n_heads

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
