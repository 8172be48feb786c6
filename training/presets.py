"""Named presets: a model's sizes and how to train it (`python -m training.train <name>`).

The shipped ones (model.api.SHIPPED) are what the app offers; the tiny ones train in seconds for tests."""
from __future__ import annotations

from dataclasses import dataclass, field

from training.categories import LEXNAMES


@dataclass(frozen=True)
class TrainSettings:
    steps: int
    batch_size: int
    seq_len: int = 256  # tokens per training window (text models)
    lr: float = 1e-3
    warmup: int = 100
    weight_decay: float = 0.01
    eval_every: int = 250
    # kept at log-spaced steps, so early learning is visible; three (and lm's four around its induction
    # head's jump) keep the shipped files under 40 MB, so the work tree can travel to a lent GPU
    snapshots: int = 3
    vocab_size: int = 4096  # BPE tokenizer size (text models)
    mask_rate: float = 0.15  # masked-language-model only: share of tokens to predict
    # Sequence-length curriculum (text models): ((share of the steps, window), ...) phases run first, then
    # windows of seq_len; batch_size grows so every step sees the same number of tokens. Short windows let
    # heads find their neighbours: among 256 keys a neighbour starts with 1/256 of the attention and its
    # signal drowns, among 16 it starts with 1/16 (docs/training.md).
    curriculum: tuple[tuple[float, int], ...] = ()
    # Copying rewarded (decoder text models): a `repeat_rate` share of the training windows holds a span of
    # 2..repeat_max_span tokens twice; a `repeat_random` share of those spans are random tokens, which only
    # the earlier copy can predict. Induction heads form on such data (docs/training.md).
    repeat_rate: float = 0.0
    # ((share of the steps, repeat rate), ...) phases run first, then repeat_rate: many repeats while the head
    # forms, few afterwards, so the natural text the perplexity is measured on gets the steps back
    repeat_phases: tuple[tuple[float, float], ...] = ()
    repeat_random: float = 0.5
    repeat_max_span: int = 32
    # Every probe_every steps (decoder text models): measure each head's induction score on repeated random
    # words and keep the weights aside, so `jump_snapshots` more snapshots can be kept around the jump.
    probe_every: int = 0
    jump_snapshots: int = 0
    with_examples: bool = False  # classifier only: the glosses' example sentences are extra training text
    label_smoothing: float = 0.0  # classifier only

    def repeats(self, step: int) -> float:
        """The share of training windows holding a repeated span at a 0-based step."""
        share_done = 0.0
        for share, rate in self.repeat_phases:
            share_done += share
            if step < round(share_done * self.steps):
                return rate
        return self.repeat_rate

    def window(self, step: int) -> tuple[int, int]:
        """(window length, batch size) for a 0-based step."""
        share_done = 0.0
        for share, length in self.curriculum:
            share_done += share
            if step < round(share_done * self.steps):
                return length, self.batch_size * self.seq_len // length
        return self.seq_len, self.batch_size


@dataclass(frozen=True)
class Preset:
    task: str  # "text", "dates" or "classify"
    model: dict = field(default_factory=dict)  # TransformerConfig fields except vocab_size
    train: TrainSettings = TrainSettings(steps=100, batch_size=8)


_TEXT = dict(max_len=256, d_model=128, n_heads=4, n_layers=4, d_ff=512, dropout=0.0, positions="learned", norm="pre")
# windows of 16, 32, 64 and 128 tokens, then 256 for the last 30% of the steps
_GROWING_WINDOWS = ((0.25, 16), (0.15, 32), (0.15, 64), (0.15, 128))
_DATES = dict(max_len=64, d_model=128, n_heads=4, n_layers=2, n_decoder_layers=2, d_ff=512, dropout=0.0,
              positions="sinusoidal")
# The definition classifier (training.categories): one size, three ways to pool; "classifier" is the best.
_CLASSIFIER = dict(arch="classifier", max_len=64, d_model=128, n_heads=4, n_layers=2, d_ff=512, dropout=0.1,
                   positions="learned", norm="pre", labels=LEXNAMES)
# Example sentences as extra text cost 2.7 points of top-1 at 6,000 steps (71.7% with, 74.4% without):
# they are sentences, not definitions, and pull sentence-like definitions towards adj.all (docs/training.md).
_CLASSIFIER_TRAIN = TrainSettings(steps=12000, batch_size=64, lr=1e-3, warmup=200, eval_every=500,
                                  with_examples=False, label_smoothing=0.1,
                                  snapshots=0)  # no snapshots: the weights stay a few MB

PRESETS: dict[str, Preset] = {
    # the shipped models (assets/<name>/)
    # half the lm's windows repeat a span (half of those random tokens) for the first third of the steps, so an
    # induction head forms; a fifth of them afterwards, so the language is learned as well as before
    "lm": Preset("text", dict(arch="decoder", **_TEXT),
                 TrainSettings(steps=3000, batch_size=16, lr=2e-3, curriculum=_GROWING_WINDOWS,
                               repeat_phases=((1 / 3, 0.5),), repeat_rate=0.2, repeat_random=0.5, probe_every=50,
                               jump_snapshots=4)),
    "mlm": Preset("text", dict(arch="encoder", **_TEXT),
                  TrainSettings(steps=5000, batch_size=16, lr=2e-3, curriculum=_GROWING_WINDOWS)),
    "dates": Preset("dates", dict(arch="encoder-decoder", **_DATES),
                    TrainSettings(steps=2000, batch_size=64, lr=1e-3, warmup=200, eval_every=250)),
    # max pooling: 75.5% top-1 on held-out definitions, mean 75.4%, [CLS] 74.9% (docs/training.md)
    "classifier": Preset("classify", dict(_CLASSIFIER, pooling="max"), _CLASSIFIER_TRAIN),
    # the three pooling variants, compared in docs/training.md
    **{f"classifier-{pooling}": Preset("classify", dict(_CLASSIFIER, pooling=pooling), _CLASSIFIER_TRAIN)
       for pooling in ("mean", "max", "cls")},
    # tiny versions for tests and smoke runs: seconds on a CPU
    "tiny-lm": Preset("text", dict(arch="decoder", max_len=32, d_model=16, n_heads=2, n_layers=1, d_ff=32),
                      TrainSettings(steps=6, batch_size=2, seq_len=32, warmup=2, eval_every=3, snapshots=3, vocab_size=300)),
    "tiny-mlm": Preset("text", dict(arch="encoder", max_len=32, d_model=16, n_heads=2, n_layers=1, d_ff=32),
                       TrainSettings(steps=6, batch_size=2, seq_len=32, warmup=2, eval_every=3, snapshots=3, vocab_size=300)),
    "tiny-dates": Preset("dates", dict(arch="encoder-decoder", max_len=64, d_model=16, n_heads=2, n_layers=1,
                                       n_decoder_layers=1, d_ff=32, positions="sinusoidal"),
                         TrainSettings(steps=6, batch_size=4, warmup=2, eval_every=3, snapshots=3)),
    **{f"tiny-classifier-{pooling}": Preset(
        "classify", dict(arch="classifier", max_len=32, d_model=16, n_heads=2, n_layers=1, d_ff=32, pooling=pooling,
                         labels=LEXNAMES),
        TrainSettings(steps=6, batch_size=4, warmup=2, eval_every=3, snapshots=3, with_examples=True))
       for pooling in ("mean", "max", "cls")},
}
PRESETS["tiny-classifier"] = PRESETS["tiny-classifier-mean"]  # stands in for the shipped one in tests

