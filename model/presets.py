"""Named presets: the model's sizes and how to train it. The app's model list is PRESETS' shipped names."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TrainSettings:
    steps: int
    batch_size: int
    seq_len: int = 256  # tokens per training window (text models)
    lr: float = 1e-3
    warmup: int = 100
    weight_decay: float = 0.01
    eval_every: int = 250
    snapshots: int = 6  # kept at log-spaced steps, so early learning is visible
    vocab_size: int = 4096  # BPE tokenizer size (text models)
    mask_rate: float = 0.15  # masked-language-model only: share of tokens to predict


@dataclass(frozen=True)
class Preset:
    task: str  # "text" or "dates"
    model: dict = field(default_factory=dict)  # TransformerConfig fields except vocab_size
    train: TrainSettings = TrainSettings(steps=100, batch_size=8)


_TEXT = dict(max_len=256, d_model=128, n_heads=4, n_layers=4, d_ff=512, dropout=0.0, positions="learned", norm="pre")
_DATES = dict(max_len=64, d_model=128, n_heads=4, n_layers=2, n_decoder_layers=2, d_ff=512, dropout=0.0,
              positions="sinusoidal")

PRESETS: dict[str, Preset] = {
    # the shipped models (assets/<name>/)
    "lm": Preset("text", dict(arch="decoder", **_TEXT), TrainSettings(steps=2600, batch_size=16, lr=2e-3)),
    "mlm": Preset("text", dict(arch="encoder", **_TEXT), TrainSettings(steps=2400, batch_size=16, lr=2e-3)),
    "dates": Preset("dates", dict(arch="encoder-decoder", **_DATES),
                    TrainSettings(steps=2000, batch_size=64, lr=1e-3, warmup=200, eval_every=250)),
    # tiny versions for tests and smoke runs: seconds on a CPU
    "tiny-lm": Preset("text", dict(arch="decoder", max_len=32, d_model=16, n_heads=2, n_layers=1, d_ff=32),
                      TrainSettings(steps=6, batch_size=2, seq_len=32, warmup=2, eval_every=3, snapshots=3, vocab_size=300)),
    "tiny-mlm": Preset("text", dict(arch="encoder", max_len=32, d_model=16, n_heads=2, n_layers=1, d_ff=32),
                       TrainSettings(steps=6, batch_size=2, seq_len=32, warmup=2, eval_every=3, snapshots=3, vocab_size=300)),
    "tiny-dates": Preset("dates", dict(arch="encoder-decoder", max_len=64, d_model=16, n_heads=2, n_layers=1,
                                       n_decoder_layers=1, d_ff=32, positions="sinusoidal"),
                         TrainSettings(steps=6, batch_size=4, warmup=2, eval_every=3, snapshots=3)),
}

SHIPPED = ("lm", "mlm", "dates")
