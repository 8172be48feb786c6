"""The transformers: a causal language model, a masked-language-model encoder, an
encoder-decoder, and a classifier (an encoder pooled into one vector). All share the
same blocks and embeddings code.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import nn

from model.attention import causal_mask
from model.block import TransformerBlock, make_norm
from model.buffers import empty
from model.config import TransformerConfig
from model.kv_cache import KVCache
from model.multi_head import HeadsRecord
from model.positions import POSITIONS, RotaryPositions
from model.switches import PLAIN, Switches


@dataclass
class Recording:
    """What a forward pass with record=True kept, batch included.

    embeddings[side]  (b, t, k) token embeddings as added (after any scaling)
    positions[side]   (t, k)    position vectors added to them
    normed[side]      (b, t, k) the sum after the embedding norm (BERT's), what the first block reads
    layers[kind]      one HeadsRecord per layer; kind is "self" for single-stack
                      models, "encoder" / "decoder" / "cross" for the encoder-decoder
    detail            a switch: also keep the residual stream after each layer
    residual[stack]   (b, t, k) per layer, before any final norm; stack is "self", "encoder" or "decoder"
    scores            a switch: keep each layer's raw scores (False: the records' scores are None)
    stack             a switch: write each kind's weights into one (L·b, h, t, s) tensor as they are computed,
                      stacks[kind], each record's probs its layer's slice: a trace needs no copy to stack them
    """

    embeddings: dict[str, torch.Tensor] = field(default_factory=dict)
    positions: dict[str, torch.Tensor] = field(default_factory=dict)
    normed: dict[str, torch.Tensor] = field(default_factory=dict)
    layers: dict[str, list[HeadsRecord]] = field(default_factory=dict)
    detail: bool = False
    residual: dict[str, list[torch.Tensor]] = field(default_factory=dict)
    scores: bool = True
    stack: bool = False
    stacks: dict[str, torch.Tensor] = field(default_factory=dict)

    def slots(self, names: dict[str, str], layer: int, n_layers: int,
              weights_only: bool = False) -> dict[str, "LayerSlot"]:
        """What a block's attentions ("self", "cross") record into at `layer` of `n_layers`."""
        return {kind: LayerSlot(self, name, layer, n_layers, weights_only) for kind, name in names.items()}


@dataclass
class LayerSlot:
    """One layer's attention of one kind, as it records (model/multi_head.py reads keep_scores, probs_into and
    weights_only). weights_only: nothing reads what the layer adds to the residual stream (the last layer of a
    pass that keeps only the attention, Stack.forward's attention_only): its weights are computed and kept, its
    weighted sum of the values and W_O are not."""

    recording: Recording
    kind: str
    layer: int
    n_layers: int
    weights_only: bool = False

    @property
    def keep_scores(self) -> bool:
        return self.recording.scores

    def probs_into(self, shape: tuple[int, ...], device) -> torch.Tensor | None:
        """The slice of the kind's stacked weights this layer's (b, h, t, s) go into (None: not stacked)."""
        if not self.recording.stack:
            return None
        b = shape[0]
        stacked = self.recording.stacks.get(self.kind)
        if stacked is None or stacked.shape[1:] != shape[1:] or stacked.device != torch.device(device):
            stacked = empty((self.n_layers * b, *shape[1:]), device)  # memory an earlier trace used (model/buffers.py)
            self.recording.stacks[self.kind] = stacked
        return stacked[self.layer * b:(self.layer + 1) * b]


def _recording(record) -> Recording | None:
    """record: False (nothing kept), True (the attention) or a Recording to fill (Recording(detail=True))."""
    return record if isinstance(record, Recording) else (Recording() if record else None)


class Embedder(nn.Module):
    """Token embedding plus position vector; sinusoidal models scale the embedding
    by sqrt(k) as the 2017 paper does, so the fixed sinusoids do not drown it.
    Pretrained BERTs also add a sentence-type vector (always type 0 here: one sentence)
    and normalise the sum (config.embedding_norm)."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)
        self.offset = config.position_offset
        self.positions = POSITIONS[config.positions](config.max_len + self.offset, config.d_model)
        self.scale = math.sqrt(config.d_model) if config.positions == "sinusoidal" else 1.0
        if config.type_vocab_size:
            self.token_types = nn.Embedding(config.type_vocab_size, config.d_model)
        self.norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps) if config.embedding_norm else nn.Identity()
        self.dropout = nn.Dropout(config.dropout)
        self.max_len = config.max_len
        self.rotary = (RotaryPositions(config.d_head, config.rope_theta, config.rope_scaling, config.rope_factor,
                                       config.rope_low_freq_factor, config.rope_high_freq_factor,
                                       config.rope_original_max_len) if config.positions == "rotary" else None)

    def rotation(self, t: int, positions: bool = True, start: int = 0) -> tuple[torch.Tensor, torch.Tensor] | None:
        """A rotary model's (cos, sin) for positions start … start + t − 1, each (t, d); None for the others, or
        with positions off."""
        if self.rotary is None or not positions:
            return None
        cos, sin = self.rotary(start + t)
        return cos[start:], sin[start:]

    def forward(self, ids: torch.Tensor, recording: Recording | None, side: str, positions: bool = True,
                start: int = 0) -> torch.Tensor:
        """ids (b, t) -> (b, t, k); positions=False adds none (the shuffle experiment). start: the first token's
        position (incremental decoding reads one token after `start` others)."""
        t = ids.size(1)
        if start + t > self.max_len:
            raise ValueError(f"sequence of {start + t} tokens is longer than the model's context of {self.max_len}")
        tokens = self.token_embedding(ids)  # (b, t, k)
        if self.scale != 1.0:
            tokens = tokens * self.scale
        if hasattr(self, "token_types"):  # the same type-0 vector on every token: part of what a token adds
            tokens = tokens + self.token_types.weight[0]
        positions = (self.positions(start + t + self.offset)[self.offset + start:] if positions
                     else tokens.new_zeros(t, tokens.size(-1)))  # (t, k), on the model's device as its weights are
        summed = self.norm(tokens + positions)
        if recording is not None:
            recording.embeddings[side] = tokens
            recording.positions[side] = positions
            if not isinstance(self.norm, nn.Identity):
                recording.normed[side] = summed
        return self.dropout(summed)


class Stack(nn.Module):
    """n blocks in a row, collecting their attention records."""

    def __init__(self, config: TransformerConfig, n: int, cross: bool = False):
        super().__init__()
        self.blocks = nn.ModuleList(TransformerBlock(config, cross) for _ in range(n))
        self.final_norm = make_norm(config) if config.norm == "pre" else nn.Identity()

    def forward(self, x, mask, recording, names, context=None, context_mask=None, switches: Switches = PLAIN,
                attention_only: bool = False, rotation=None, cache: KVCache | None = None, start: int = 0):
        """names maps the block's attention ("self", "cross") to the kind it is recorded and ablated as.
        attention_only: the caller reads only the recording; the last block stops after its attention
        (its feed-forward is a sixth of a small model's arithmetic) and the x returned is not the output.
        cache: every layer's key/value cache, when x holds only new tokens (model/kv_cache.py).
        start: x is the residual stream entering block `start` (an earlier run's), and the blocks below are
        not run again. switches.hooks (single-stack models) sees the stream entering each block ("residual_in")
        and leaving it ("residual"), and what the block's sublayers add (model/block.py)."""
        record = recording is not None
        last = len(self.blocks) - 1
        hooks = switches.hooks if names.get("self") == "self" else None
        for layer, block in enumerate(self.blocks):
            if layer < start:
                continue
            heads_off = {kind: switches.heads_off(name, layer) for kind, name in names.items()}
            if hooks is not None:
                x = hooks.edit("residual_in", layer, x)
            # the last layer of a pass that keeps only the attention: its weights are all that is read (no hook
            # sees what it adds, no cross-attention reads it)
            weights_only = attention_only and layer == last and hooks is None and set(names) == {"self"}
            slots = recording.slots(names, layer, len(self.blocks), weights_only) if record else False
            x, records = block(x, mask, context, context_mask, slots, heads_off, switches.method,
                               attention_only=attention_only and layer == last, rotation=rotation,
                               past=None if cache is None else cache.layers[layer], hooks=hooks, layer=layer)
            if hooks is not None and not (attention_only and layer == last):
                x = hooks.edit("residual", layer, x)
            if record:
                for kind, name in names.items():
                    recording.layers.setdefault(name, []).append(records[kind])
                if recording.detail:
                    recording.residual.setdefault(names["self"], []).append(x)
        return x if attention_only else self.final_norm(x)


def _init(module: nn.Module) -> None:
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)


class LMTransform(nn.Module):
    """BERT's masked-LM head before its projection to the vocabulary: dense, activation, norm."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.dense = nn.Linear(config.d_model, config.d_model)
        self.activation = nn.GELU(approximate="tanh" if config.activation == "gelu_tanh" else "none")
        self.norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.activation(self.dense(x)))


class _Model(nn.Module):
    """What every model here starts from: its config and its embedder (token and position vectors).
    A model adds its stacks and output layers in add_parts, in the order their weights are drawn; then
    every weight is drawn afresh (_init), and with config.tie_embeddings the output layer named by `tied`
    reads out with the token embedding itself."""

    tied: str | None = None

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = config
        self.embed = Embedder(config)
        self.add_parts(config)
        _init(self)
        head = getattr(self, self.tied) if self.tied else None
        if config.tie_embeddings and head is not None:
            head.weight = self.embed.token_embedding.weight

    def add_parts(self, config: TransformerConfig) -> None:
        raise NotImplementedError


class _SingleStack(_Model):
    """Embed, run the blocks, project to the vocabulary. `causal` picks the mask.
    A pretrained model without a language-model head (config.lm_head "none", such as MiniLM)
    has no to_vocab: its forward gives None for the logits."""

    causal: bool
    tied = "to_vocab"

    def add_parts(self, config: TransformerConfig) -> None:
        self.stack = Stack(config, config.n_layers)
        self.lm_transform = LMTransform(config) if config.lm_head == "transform" else nn.Identity()
        self.to_vocab = (nn.Linear(config.d_model, config.vocab_size, bias=config.lm_head == "transform")
                         if config.lm_head != "none" else None)

    def forward(self, ids: torch.Tensor, record: bool = False,
                switches: Switches = PLAIN) -> tuple[torch.Tensor | None, Recording | None]:
        """ids (b, t) -> logits (b, t, v) (None without an lm head) and, with record=True, every attention step."""
        x, recording = self.features(ids, record, switches)
        return (self.to_vocab(self.lm_transform(x)) if self.to_vocab is not None else None), recording

    def readout(self, residual: torch.Tensor) -> torch.Tensor:
        """The residual stream after any layer (b, t, k) read as the last one is: through the model's own
        final norm and unembedding (the logit lens; experiments/lens.py). After the last layer: the logits."""
        return self.to_vocab(self.readout_input(residual))

    def readout_input(self, residual: torch.Tensor) -> torch.Tensor:
        """What readout projects onto the vocabulary (b, t, k): the stream through the final norm (and BERT's
        transform)."""
        return self.lm_transform(self.stack.final_norm(residual))

    def resume(self, residual: torch.Tensor, layer: int, switches: Switches = PLAIN) -> torch.Tensor:
        """The rest of the forward pass from the residual stream (b, t, k) entering block `layer` (of an earlier
        run, perhaps changed): the last layer's vectors (b, t, k) after the final norm, as features gives them.
        layer = n_layers runs no block. Causal patching reuses the unpatched run below the patched layer."""
        t = residual.size(1)
        mask = (causal_mask(t, device=residual.device, window=self.config.sliding_window)
                if self.causal and switches.causal else None)
        return self.stack(residual, mask, None, {"self": "self"}, switches=switches,
                          rotation=self.embed.rotation(t, switches.positions), start=layer)

    def features(self, ids: torch.Tensor, record: bool = False, switches: Switches = PLAIN,
                 attention_only: bool = False) -> tuple[torch.Tensor, Recording | None]:
        """ids (b, t) -> the last layer's vectors (b, t, k), before the projection to the vocabulary
        (training a masked model projects only the masked positions). attention_only (with record=True):
        only the recording is wanted, and the vectors returned are not the last layer's (Stack.forward)."""
        recording = _recording(record)
        x = self.embed(ids, recording, "input", switches.positions)
        t = ids.size(1)
        mask = (causal_mask(t, device=ids.device, window=self.config.sliding_window)
                if self.causal and switches.causal else None)
        return self.stack(x, mask, recording, {"self": "self"}, switches=switches, attention_only=attention_only,
                          rotation=self.embed.rotation(t, switches.positions)), recording


class CausalLM(_SingleStack):
    """Each position predicts the next token and may look only at itself and the past."""

    causal = True

    def new_cache(self) -> KVCache:
        """An empty key/value cache for this model's layers (keeping only the sliding window, where it has one)."""
        return KVCache.empty(self.config.n_layers, self.config.sliding_window)

    def step(self, ids: torch.Tensor, cache: KVCache, record: bool = False,
             last: bool = False) -> tuple[torch.Tensor, Recording | None]:
        """Incremental decoding: ids (b, t) are the tokens after the cache.seen ones the cache has read (the whole
        prompt at first, then one token at a time) -> their logits (b, t, v), and with record=True their attention
        rows over every kept key (each layer's probs (b, h, t, kept + t)). The cache grows by their keys and values.
        The same computation as forward() over the whole text: the rows equal its last t rows.
        last=True reads out only the last new token's logits (b, 1, v): greedy decoding reads nothing else."""
        recording = _recording(record)
        t, start, kept = ids.size(1), cache.seen, cache.kept
        x = self.embed(ids, recording, "input", start=start)
        mask = causal_mask(t, kept + t, device=ids.device, window=self.config.sliding_window)  # (t, kept + t)
        x = self.stack(x, mask, recording, {"self": "self"}, rotation=self.embed.rotation(t, start=start), cache=cache)
        cache.seen += t
        return self.to_vocab(self.lm_transform(x[:, -1:] if last else x)), recording


class MaskedLM(_SingleStack):
    """Each position sees the whole sentence; trained to fill in <mask> tokens."""

    causal = False


class EncoderDecoder(_Model):
    """The encoder reads the source with unmasked self-attention; the decoder writes
    the target one token at a time with masked self-attention, and looks back at the
    encoder's output through cross-attention."""

    causal = True
    tied = "to_vocab"

    def add_parts(self, config: TransformerConfig) -> None:
        self.encoder = Stack(config, config.n_layers)
        self.decoder = Stack(config, config.n_decoder_layers, cross=True)
        self.to_vocab = nn.Linear(config.d_model, config.vocab_size, bias=False)

    def encode(self, src: torch.Tensor, src_keep: torch.Tensor | None = None, recording: Recording | None = None,
               switches: Switches = PLAIN):
        """src (b, s) -> memory (b, s, k). src_keep (b, s) bool marks real (non-pad) tokens."""
        key_mask = None if src_keep is None else src_keep[:, None, None, :]  # (b, 1, 1, s)
        x = self.embed(src, recording, "source", switches.positions)
        return self.encoder(x, key_mask, recording, {"self": "encoder"}, switches=switches)

    def decode(self, tgt, memory, src_keep=None, recording=None, switches: Switches = PLAIN):
        """tgt (b, t) -> logits (b, t, v), attending to memory (b, s, k)."""
        key_mask = None if src_keep is None else src_keep[:, None, None, :]  # (b, 1, 1, s)
        x = self.embed(tgt, recording, "target", switches.positions)
        mask = causal_mask(tgt.size(1), device=tgt.device) if switches.causal else None
        x = self.decoder(x, mask, recording, {"self": "decoder", "cross": "cross"}, memory, key_mask, switches)
        return self.to_vocab(x)

    def readout(self, residual: torch.Tensor) -> torch.Tensor:
        """The decoder's residual stream after any layer (b, t, k) through its final norm and unembedding."""
        return self.to_vocab(self.readout_input(residual))

    def readout_input(self, residual: torch.Tensor) -> torch.Tensor:
        """What readout projects onto the vocabulary (b, t, k): the stream through the decoder's final norm."""
        return self.decoder.final_norm(residual)

    def forward(self, src, tgt, src_keep=None, record: bool = False, switches: Switches = PLAIN):
        recording = _recording(record)
        memory = self.encode(src, src_keep, recording, switches)
        return self.decode(tgt, memory, src_keep, recording, switches), recording


class Classifier(_Model):
    """The lecture notes' second transformer: an encoder reads the whole sentence (no mask), pooling
    turns its t output vectors into one, and a linear layer scores every category (config.labels).

    config.pooling: "mean" averages the vectors, "max" keeps each dimension's largest value, "cls" keeps
    the vector of the first token (<s>, the [CLS] token), which can gather the sentence only through
    attention. Without position vectors, mean and max pooling do not depend on the tokens' order."""

    causal = False

    def add_parts(self, config: TransformerConfig) -> None:
        self.stack = Stack(config, config.n_layers)
        self.to_classes = nn.Linear(config.d_model, len(config.labels))

    def features(self, ids: torch.Tensor, record: bool = False, switches: Switches = PLAIN,
                 keep: torch.Tensor | None = None) -> tuple[torch.Tensor, Recording | None]:
        """ids (b, t) -> the last layer's vectors (b, t, k). keep (b, t) bool marks real (non-pad) tokens."""
        recording = _recording(record)
        x = self.embed(ids, recording, "input", switches.positions)
        key_mask = None if keep is None else keep[:, None, None, :]  # (b, 1, 1, t): nobody looks at padding
        return self.stack(x, key_mask, recording, {"self": "self"}, switches=switches), recording

    def pool(self, x: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        """(b, t, k) -> (b, k) as config.pooling says; padding never counts."""
        if self.config.pooling == "cls":
            return x[:, 0]
        keep = x.new_ones(x.shape[:2], dtype=torch.bool) if keep is None else keep
        real = keep[..., None]  # (b, t, 1)
        if self.config.pooling == "max":
            return x.masked_fill(~real, float("-inf")).max(dim=1).values
        return (x * real).sum(1) / real.sum(1).clamp(min=1)

    def forward(self, ids: torch.Tensor, record: bool = False, switches: Switches = PLAIN,
                keep: torch.Tensor | None = None) -> tuple[torch.Tensor, Recording | None]:
        """ids (b, t) -> category scores (b, c) and, with record=True, every attention step."""
        x, recording = self.features(ids, record, switches, keep)
        return self.to_classes(self.pool(x, keep)), recording


MODELS = {"decoder": CausalLM, "encoder": MaskedLM, "encoder-decoder": EncoderDecoder, "classifier": Classifier}


def build(config: TransformerConfig) -> nn.Module:
    return MODELS[config.arch](config)
