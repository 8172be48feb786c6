"""The model registry: load every shipped model once, remember per-model load errors, cache traces.

No Gradio: a notebook, the app, the tests and bench/ share it. What a caller sends is checked here
(model.inputs: an unknown model, a text too long for the model) and refused with `InputError`, which
ui.page.context turns into the visitor's message.

    from model.registry import ModelRegistry
    registry = ModelRegistry.load()               # assets/ or $ATTENTION_ASSETS, minilm, $ATTENTION_MODELS
    registry.available                             # names that loaded
    registry.errors                                # name -> message for those that did not
    trace = registry.trace("lm", "The cat sat")   # cached, thread-safe
    registry.history("lm").head("previous_token_head")   # training history, read once at load
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from model import api, buffers, pretrained
from model.cache import ByteLRU
from model.checkpoint import CheckpointError
from model.device import default_max_tokens
from model.history import TrainingHistory, read_history
from model.inputs import InputError, char_limit, check_index, clean_text, public_message, shown
from model.trace import AttentionTrace, Trace, for_views, to_host

log = logging.getLogger(__name__)

# The longest input the server reads: each model up to its own context (minilm and BERT 512, the models
# trained here 256), and none past MAX_TOKENS: 512 on a CPU, 2,048 on a GPU (model.device.default_max_tokens;
# GPT-2's 1,024 puts 600 MB of weights in one 12 x 12-head trace); ATTENTION_MAX_TOKENS sets another cap.
# Longer texts are cut, and the page says so.
MAX_TOKENS_ENV = "ATTENTION_MAX_TOKENS"
MAX_TOKENS = int(os.environ.get(MAX_TOKENS_ENV) or default_max_tokens())
MAX_CHARS = char_limit(MAX_TOKENS)  # the most any model takes; each model's own limit: ModelRegistry.max_chars
# The traces kept between requests, by the bytes they hold (model.cache.ByteLRU). A 16 GB Space holds the
# models (~1 GB with two 12 x 12-head checkpoints), a few 512-token forward passes at once (~0.5 GB each
# for a 12 x 12-head model) and Gradio; 1 GiB of traces is 4 such 512-token traces or thousands of short ones.
CACHE_ENV = "ATTENTION_CACHE_MB"
CACHE_BYTES = int(float(os.environ.get(CACHE_ENV) or 1024) * 2 ** 20)
ASSETS_ENV = "ATTENTION_ASSETS"

# Which attention kinds each architecture records, in the order a lecture meets them.
KINDS_BY_ARCH = {"decoder": ("self",), "encoder": ("self",), "encoder-decoder": ("encoder", "decoder", "cross"),
                 "classifier": ("self",)}


def assets_dir(assets: str | Path | None = None) -> Path:
    """The folder holding the trained models: the argument, else $ATTENTION_ASSETS, else ./assets."""
    if assets is not None:
        return Path(assets)
    return Path(os.environ[ASSETS_ENV]) if os.environ.get(ASSETS_ENV) else api.ASSETS


def trace_bytes(config, tokens: int) -> int:
    """Roughly the bytes of a single-stack model's trace of `tokens` tokens as the views keep it (for_views):
    every head's weights, and each layer's inputs, queries, keys and values, in float32."""
    heads = config.n_heads
    return 4 * config.n_layers * tokens * (heads * tokens + 3 * heads * config.d_head + config.d_model)


def attention_of(trace: Trace, kind: str | None = None) -> AttentionTrace:
    """One kind of a trace's attention; kind defaults to the model's first (an unknown kind too)."""
    return trace.attention[kind if kind in trace.attention else next(iter(trace.attention))]


@dataclass
class ModelRegistry:
    """Every shipped model, loaded once at start and only read afterwards (safe to share between users).

    models     name -> api.LoadedModel for those that loaded
    errors     name -> a friendly message for those that did not (missing or damaged files)
    histories  name -> what training left beside the model (loss curve, measured heads)
    """

    assets: Path
    models: dict[str, api.LoadedModel] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    histories: dict[str, TrainingHistory] = field(default_factory=dict)
    cache_bytes: int = CACHE_BYTES
    cache: ByteLRU | None = field(default=None, repr=False)  # every trace the views keep, one byte budget
    # the every-head views' numbers computed where the model is (experiments.view_numbers.views): None = on a GPU only
    views_on_device: bool | None = None
    device_cache: ByteLRU | None = field(default=None, repr=False)  # traces kept on the device, by its bytes

    def __post_init__(self):
        self.cache = ByteLRU(self.cache_bytes)
        self.device_cache = ByteLRU(self.cache_bytes)

    @classmethod
    def load(cls, assets: str | Path | None = None, names=api.SHIPPED + api.PRETRAINED, device=None,
             extra: dict[str, str] | None = None) -> "ModelRegistry":
        """names: shipped models (trained here, or minilm). extra: more Hugging Face models, name -> folder
        or Hub id, by default from the server's $ATTENTION_MODELS; a visitor never chooses a path."""
        registry = cls(assets_dir(assets))
        extra = pretrained.configured() if extra is None else extra
        loaders = [(name, lambda n=name: api.load(n, registry.assets, device=device, context=MAX_TOKENS))
                   for name in names]
        loaders += [(name, lambda n=name, s=source: api.load_pretrained(
            s, n, device, label=f"{n} ({pretrained.MODELS_ENV} entry {s})", context=MAX_TOKENS))
            for name, source in extra.items()]
        for name, load in loaders:
            if name in registry.models or name in registry.errors:
                registry.errors.setdefault(name, f"Two models are named {name}; rename one in {pretrained.MODELS_ENV}.")
                continue
            try:
                registry.models[name] = load()
                registry.histories[name] = read_history(registry.models[name].directory)
            except (CheckpointError, OSError, ValueError) as e:
                log.warning("model %s could not be loaded: %s", name, e)  # the log keeps the paths
                registry.errors[name] = public_message(f"The {name} model could not be loaded: {e}")
        return registry

    @property
    def names(self) -> tuple[str, ...]:
        """Every model the UI offers, loaded or not (a broken one shows its error when chosen)."""
        return tuple(n for n in dict.fromkeys((*api.SHIPPED, *self.models, *self.errors))
                     if n in self.models or n in self.errors)

    @property
    def available(self) -> list[str]:
        return [n for n in self.names if n in self.models]

    @property
    def default(self) -> str | None:
        return self.available[0] if self.available else None

    def get(self, name) -> api.LoadedModel:
        """The loaded model, or InputError with the reason it cannot be used."""
        if not isinstance(name, str):
            raise InputError(f"The model name must be a string such as 'lm', not {type(name).__name__}.")
        if name in self.models:
            return self.models[name]
        if name in self.errors:
            raise InputError(self.errors[name])
        choices = ", ".join(self.names) or "none are installed"
        raise InputError(f"Unknown model {shown(name)}: choose one of {choices}.")

    def history(self, name) -> TrainingHistory:
        """The model's training history (empty for a model shipped without one), read once."""
        if name not in self.histories:
            self.histories[name] = read_history(self.get(name).directory)
        return self.histories[name]

    def arch(self, name) -> str:
        return self.get(name).arch

    def kinds(self, name) -> tuple[str, ...]:
        """The attention kinds this model has: ("self",) or ("encoder", "decoder", "cross")."""
        return KINDS_BY_ARCH[self.arch(name)]

    def max_chars(self, name) -> int:
        """The most characters the app takes for this model: its context's worth (char_limit)."""
        return char_limit(self.get(name).config.max_len)

    def trace(self, name, text) -> Trace:
        """The model's trace of `text` (cleaned and checked against the model's own length), from the
        byte-bounded cache keyed by (model, text), as the views need it (model.trace.for_views)."""
        model = self.get(name)
        text = clean_text(text, self.max_chars(name))
        if self.on_device(name):  # the host copy of the trace kept on the device (views that read every weight)
            return self._get(self.cache, (name, text), lambda: to_host(self.kept(name, text)))
        return self._get(self.cache, (name, text), lambda: self._compute_trace(model, text))

    def cached(self, key: tuple, make):
        """Any other trace a view keeps (a snapshot's, the lm's without its mask), in the same byte budget."""
        return self._get(self.cache, key, make)

    @staticmethod
    def _get(cache: ByteLRU, key, make):
        try:
            return cache.get(key, make)
        finally:  # what a new trace did not reuse of the memory freed for it, and what it pushed out, go back to
            buffers.release_unused()  # the system (model/buffers.py): between requests the server holds its cache

    def _compute_trace(self, model: api.LoadedModel, text: str, on_device: bool = False) -> Trace:
        if model.arch != "encoder-decoder":  # (the dates model's traces are small)
            # the traces the new one would push out of the cache go first: it is written into their memory
            # (model/buffers.py), and the server holds no more than before
            cache = self.device_cache if on_device else self.cache
            cache.make_room(trace_bytes(model.config, len(model.encode(text).ids)))
        try:
            # what the model predicts is shown by its own endpoint (/predict): the views need the attention
            result = model.trace(text, predictions=False, scores=False, on_device=on_device)
        except ValueError as e:  # e.g. nothing the dates model can read
            raise InputError(str(e)) from e
        if not result.tokens or all(int(i) in model.added_ids for i in result.ids):  # minilm drops some characters
            raise InputError("The model found no tokens in this text; type some words.")
        return for_views(result)

    def detailed(self, name, text, recorded: Trace | None = None) -> Trace:
        """The model's detailed trace of `text` (also the residual stream after each layer, each attention layer's
        output and W_O: api.LoadedModel.trace(detail=True)), kept in the same byte budget as the plain ones.
        Without every head's raw scores, as the plain ones (no view of it reads them; the same weights bit for bit):
        on smollm2 at 512 tokens they were 283 MB and ~1.5 of the trace's ~3.8 s CPU; nor the top token at every
        position (no view of it reads them either).
        recorded: the detailed trace of `text` from a forward pass the caller ran for more (the Interventions tab's
        gradient pass), kept in place of a pass of its own where none is kept yet."""
        model = self.get(name)
        text = clean_text(text, self.max_chars(name))

        def make():
            if recorded is not None:
                return recorded
            try:
                return model.trace(text, detail=True, scores=False, predictions=False)
            except ValueError as e:
                raise InputError(str(e)) from e
        return self.cached(self._detailed_key(name, text), make)

    def keeps_detailed(self, name, text) -> bool:
        """Whether the detailed trace of `text` is kept (detailed() would return it without a forward pass)."""
        return self._detailed_key(name, clean_text(text, self.max_chars(name))) in self.cache

    @staticmethod
    def _detailed_key(name, text) -> tuple:
        return ("detailed", name, text)

    def attention(self, name, text, kind: str | None = None) -> AttentionTrace:
        """One kind of attention from the cached trace; kind defaults to the model's first."""
        return attention_of(self.trace(name, text), kind)

    def layer_head(self, name, text, layer, head, kind: str | None = None) -> tuple[AttentionTrace, int, int]:
        """The attention plus 0-based (layer, head) from 1-based UI numbers, checked against the model."""
        att = self.attention(name, text, kind)
        return att, check_index(layer, att.n_layers, "layer"), check_index(head, att.n_heads, "head")

    # ---- traces kept on the device, where the every-head views compute (experiments/view_numbers.py) ----
    def on_device(self, name) -> bool:
        """Whether the model's views read a trace kept on its device (views_on_device, by default where the
        model is not on the CPU: there numpy on the host is as fast, and nothing has to cross)."""
        if self.views_on_device is not None:
            return self.views_on_device
        return self.get(name).device.type != "cpu"

    def kept(self, name, text) -> Trace:
        """The model's trace of `text` kept on its device (torch tensors: experiments.view_numbers), from a cache
        bounded by the bytes it holds there."""
        model = self.get(name)
        text = clean_text(text, self.max_chars(name))
        return self._get(self.device_cache, (name, text), lambda: self._compute_trace(model, text, on_device=True))

    def shape(self, name, kind: str | None = None) -> tuple[int, int]:
        """(layers, heads) of one attention kind, from the model's config (no forward pass)."""
        config = self.get(name).config
        layers = getattr(config, "n_decoder_layers", None) if kind in ("decoder", "cross") else None
        return (layers or config.n_layers), config.n_heads

