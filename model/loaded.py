"""One loaded model with its tokenizer (model/api.py loads it): how it reads a text, its trace, and what it
predicts (the next tokens, a filled blank, a translation, a category), and its training snapshots.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer

from model import checkpoint, decoding, trace as trace_mod
from model.cache import ByteLRU
from model import tokenizer as tok
from model.config import TransformerConfig
from model.results import Classification, Encoded, Translation
from model.switches import PLAIN, Switches
from model.transformer import Recording

MASK_MARKERS = re.compile(r"<mask>|\[MASK\]")
ENCODED_KEPT = 16  # texts whose encoding a model remembers
ENCODED_BYTES = 4 << 20  # and at most this much of them (a 4,000-character text's ids and labels: ~0.2 MB)
END_TOKENS = ("<|endoftext|>", "</s>", "<|end_of_text|>", "<|im_end|>")  # GPT-2 and Qwen2, Llama-2, Llama-3


@dataclass
class LoadedModel:
    """One trained model with its tokenizer. Read-only after loading: safe to share between users."""

    name: str
    model: torch.nn.Module
    tokenizer: Tokenizer
    directory: Path
    device: torch.device
    weights: str = checkpoint.WEIGHTS
    _specials: dict = field(default_factory=dict)
    _labels: dict = field(default_factory=dict)
    _encoded: ByteLRU = field(default_factory=lambda: ByteLRU(ENCODED_BYTES, ENCODED_KEPT))  # text -> Encoded
    pretrained: bool = False  # published by others (model/pretrained.py), not trained by this project
    about: str = ""  # which weights were loaded, for the page (smollm2: its 4-bit build or the original)

    @property
    def config(self) -> TransformerConfig:
        return self.model.config

    @property
    def arch(self) -> str:
        return self.config.arch

    def special(self, token: str) -> int:
        if token not in self._specials:
            self._specials[token] = self.tokenizer.token_to_id(token)
        return self._specials[token]

    def _no_specials(self, logits: torch.Tensor, keep: tuple[str, ...] = ()) -> torch.Tensor:
        """Special tokens are bookkeeping, not words: never offer them as guesses."""
        banned = self.special_ids(keep)
        logits = logits.float().clone()
        logits[..., banned] = float("-inf")
        return logits

    @property
    def has_lm_head(self) -> bool:
        """False for a pretrained encoder shipped without its word-prediction head (MiniLM)."""
        return getattr(self.model, "to_vocab", True) is not None

    @cached_property
    def _template(self) -> tuple[list[int], list[int], int | None]:
        """A pretrained tokenizer's own specials around a text ([CLS] … [SEP], <s> … </s>, or none for
        GPT-2), read off by encoding one word with and without them; and its mask token's id."""
        bare = self.tokenizer.encode("a", add_special_tokens=False).ids
        full = self.tokenizer.encode("a", add_special_tokens=True).ids
        start = next(i for i in range(len(full)) if full[i:i + len(bare)] == bare)
        mask = next((self.tokenizer.token_to_id(m) for m in ("[MASK]", "<mask>")
                     if self.tokenizer.token_to_id(m) is not None), None)
        return full[:start], full[start + len(bare):], mask

    @property
    def added_ids(self) -> set[int]:
        """The special tokens the model puts around every text: [CLS] and [SEP] (BERT), <s> and </s>
        (RoBERTa), none (GPT-2), <s> (this project's text models)."""
        if self.config.tokenizer == "template":
            prefix, suffix, _ = self._template
            return set(prefix + suffix)
        return {self.special(tok.BOS)} - {None}

    @property
    def start_id(self) -> int | None:
        """The token the model puts before every text: <s> (this project's text models, Llama 2), [CLS] (BERT),
        or None (GPT-2, SmolLM2, Qwen2)."""
        if self.config.tokenizer == "template":
            prefix = self._template[0]
            return prefix[0] if prefix else None
        return self.special(tok.BOS)

    def special_ids(self, keep: tuple[str, ...] = ()) -> list[int]:
        """Ids of the special tokens (project tokenizers: <pad>, <s>, …; pretrained: every added special)."""
        if self.config.tokenizer == "template":
            return [i for i, t in self.tokenizer.get_added_tokens_decoder().items() if t.special]
        return [self.special(t) for t in tok.SPECIALS if t not in keep and self.special(t) is not None]

    def label(self, token_id: int) -> str:
        """The token's readable label (memoised: every trace labels every token and prediction)."""
        token_id = int(token_id)
        if token_id not in self._labels:
            self._labels[token_id] = tok.readable(self.tokenizer, self.tokenizer.id_to_token(token_id))
        return self._labels[token_id]

    def written(self, ids) -> str:
        """The text the model wrote as ids, decoded together; a byte that completes no character as <0x93>, never
        as the replacement character (model/tokenizer.written)."""
        return tok.written(self.tokenizer, ids)

    # ---- text -> ids ----------------------------------------------------
    def encode(self, text: str) -> Encoded:
        """Text as the model reads it. Text models start with <s>; the masked model turns
        "<mask>" (or "[MASK]") into its mask token; the dates model reads raw characters.
        The last few texts are remembered: the app asks how long a text is before it runs the model on it."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        known = self._encoded.get(text, lambda: self._encode(text))
        return Encoded(list(known.ids), list(known.tokens), known.truncated)  # a caller may extend its copy

    def _encode(self, text: str) -> Encoded:
        if self.config.tokenizer == "template":
            return self._encode_template(text)
        if self.arch == "encoder-decoder":
            ids = self.tokenizer.encode(text).ids
        else:
            ids = [self.special(tok.BOS)]
            pieces = MASK_MARKERS.split(text) if self.arch == "encoder" else [text]
            for i, piece in enumerate(pieces):
                if i > 0:
                    ids.append(self.special(tok.MASK))
                if i < len(pieces) - 1:
                    piece = piece.rstrip(" ")  # the masked word carries its own leading space
                if piece:
                    ids += self.tokenizer.encode(piece).ids
        limit = self.config.max_len
        truncated = len(ids) > limit
        ids = ids[:limit]
        return Encoded(ids, [self.label(i) for i in ids], truncated)

    def _encode_template(self, text: str) -> Encoded:
        """A pretrained model's reading: its tokenizer's own specials around the text (cut to fit the
        context, the closing [SEP] kept); "[MASK]" or "<mask>" typed become its mask token."""
        prefix, suffix, mask = self._template
        pieces = MASK_MARKERS.split(text) if mask is not None and self.arch == "encoder" else [text]
        ids = []
        for i, piece in enumerate(pieces):
            if i > 0:
                ids.append(mask)
            if i < len(pieces) - 1:
                piece = piece.rstrip(" ")  # the mask takes the space before it, as in RoBERTa
            if piece:
                ids += self.tokenizer.encode(piece, add_special_tokens=False).ids
        room = self.config.max_len - len(prefix) - len(suffix)
        truncated = len(ids) > room
        ids = prefix + ids[:room] + suffix
        return Encoded(ids, [self.label(i) for i in ids], truncated)

    # ---- the trace ----------------------------------------------------------
    @torch.inference_mode()  # no autograd bookkeeping at all: ~15% of a small model's forward
    def trace(self, text: str, output: str | None = None, switches: Switches = PLAIN,
              predictions: bool = True, detail: bool = False, scores: bool = True,
              on_device: bool = False) -> trace_mod.Trace:
        """Run the model once on `text` and keep every attention step.

        For `dates`, the decoder side is `output` if given (teacher forcing), else
        the model's own greedy translation (under the same switches).
        switches: positions or the causal mask off, heads knocked out (model/switches.py).
        predictions=False leaves trace.predictions empty for lm and mlm: their projection onto the
        vocabulary is ~40% of lm's forward pass, and a view of the attention does not need it (nor one of the
        residual stream: smollm2's 512 positions by its 49,152 tokens were ~0.45 s of a detailed trace's ~2.5 s).
        detail=True also keeps the residual stream after each layer, each attention layer's output and W_O
        (the logit lens and the value-weighted view), on the same forward pass.
        scores=False leaves every head's raw scores out (trace.for_views: the views compute one head's).
        on_device=True leaves every array a torch tensor on the model's device (experiments/view_numbers.py)."""
        enc = self.encode(text)
        if self.arch != "encoder-decoder":
            return self.trace_ids(enc.ids, switches, truncated=enc.truncated, predictions=predictions,
                                  tokens=enc.tokens, detail=detail, scores=scores, on_device=on_device)
        if not enc.ids:
            raise ValueError("nothing to translate: the text is empty")
        written = self.translate(text, switches=switches) if output is None else output
        target = [self.special(tok.BOS)] + self.tokenizer.encode(written).ids[: self.config.max_len - 1]
        return self.trace_ids(enc.ids, switches, target, enc.truncated, detail=detail, scores=scores,
                              on_device=on_device)

    @torch.inference_mode()
    def trace_ids(self, ids: list[int], switches: Switches = PLAIN, target: list[int] | None = None,
                  truncated: bool = False, predictions: bool = True, tokens: list[str] | None = None,
                  detail: bool = False, scores: bool = True, on_device: bool = False) -> trace_mod.Trace:
        """The trace of token ids as given (a shuffled sentence, a repeated sequence). For the
        encoder-decoder, `target` is the decoder's input (default: just the start token).
        tokens: the ids' labels when the caller has them (encode() made them)."""
        ids_t = torch.tensor([list(ids)], device=self.device)
        tokens = [self.label(int(i)) for i in ids] if tokens is None else list(tokens)
        # the weights written straight into one (L, H, t, s) tensor; raw scores only where the trace keeps them
        record = Recording(detail=detail, scores=scores, stack=True)
        if self.arch in ("decoder", "encoder") and not predictions:  # the attention (and detail) alone
            (_, rec), logits = self.model.features(ids_t, record=record, switches=switches,
                                                   attention_only=not detail), None
            extra = {}
        elif self.arch != "encoder-decoder":
            logits, rec = self.model(ids_t, record=record, switches=switches)
            extra = {}
        else:
            target = [self.special(tok.BOS)] if target is None else list(target)
            logits, rec = self.model(ids_t, torch.tensor([target], device=self.device), record=record, switches=switches)
            extra = dict(target_tokens=[self.label(i) for i in target], target_ids=target)
        if self.arch == "classifier":  # one decision for the whole text
            top = [self.config.labels[int(logits[0].argmax())]]
        else:
            top = [] if logits is None else [self.label(int(i)) for i in logits[0].argmax(-1)]
        return self.recorded_trace(rec, ids, tokens, truncated, top, scores, on_device, **extra)

    def recorded_trace(self, recording: Recording, ids: list[int], tokens: list[str], truncated: bool = False,
                       predictions: list[str] | None = None, scores: bool = True, on_device: bool = False,
                       **extra) -> trace_mod.Trace:
        """The trace of a forward pass of `ids` that recorded into `recording` (trace_ids's own, or one a caller
        ran for more than the trace: experiments.importance.gradient_pass's, whose weights need no pass of their
        own). Run it without autograd: the trace's arrays are copies of the recorded tensors, or views of them."""
        return trace_mod.from_recording(
            recording, model=self.name, arch=self.arch, d_head=self.config.d_head, tokens=tokens, ids=list(ids),
            predictions=predictions, truncated=truncated, scores=scores, on_device=on_device, **extra)

    # ---- predictions -------------------------------------------------------
    def _require(self, arch: str, what: str) -> None:
        if self.arch != arch:
            raise ValueError(f"{what} needs the {arch} model; {self.name} is an {self.arch}")
        if not self.has_lm_head:
            raise ValueError(f"{what} needs a language-model head; {self.name} was published without one "
                             "(it was trained to compare whole sentences, not to predict words)")

    @torch.no_grad()
    def next_tokens(self, text: str, k: int = 10, switches: Switches = PLAIN) -> list[tuple[str, float]]:
        """The causal model's top-k guesses for the token after `text`, with probabilities."""
        self._require("decoder", "next-token prediction")
        enc = self.encode(text)
        x, _ = self.model.features(torch.tensor([enc.ids], device=self.device), switches=switches)
        logits = self.model.to_vocab(self.model.lm_transform(x[0, -1]))  # (v,): only the last position is read
        probs = torch.softmax(self._no_specials(logits, keep=(tok.EOS,)), -1)
        top = probs.topk(k)
        return [(self.label(int(i)), float(p)) for p, i in zip(top.values, top.indices)]

    @torch.no_grad()
    def generate(self, prompt: str, n: int = 20, no_repeat_ngram: int = 3, switches: Switches = PLAIN,
                 first: list | None = None) -> str:
        """Greedy continuation of `prompt` by up to n tokens (stops at the end-of-line token),
        never repeating a 3-gram (set no_repeat_ngram=0 for plain greedy). first: a list that receives the first
        step's log-probabilities (v,) of the token after the prompt (special tokens but the end of line at -inf, no
        n-gram banned), so that a caller who needs them too (experiments/interventions.py's outcome) does not run
        the prompt's forward pass again."""
        self._require("decoder", "generation")
        ids = self.encode(prompt).ids
        room = self.config.max_len - len(ids)
        step = (self._cached_step() if switches == PLAIN else
                lambda prefix: torch.log_softmax(self._next_logits(prefix, switches), -1))
        if first is not None:
            stepped = step

            def step(prefix: torch.Tensor) -> torch.Tensor:
                logp = stepped(prefix)
                if not first:
                    first.append(logp[0].clone())
                return logp
        out = decoding.greedy(step, ids, self.end_id, max(0, min(n, room)), self.device, no_repeat_ngram)
        return self.written(out.ids)

    @property
    def end_id(self) -> int | None:
        """The end-of-text token: </s> (this project's, Llama 2), <|endoftext|> (GPT-2, Qwen2), <|end_of_text|>."""
        return self.special(tok.EOS) if self.config.tokenizer == "project" else next(
            (i for i in map(self.special, END_TOKENS) if i is not None), None)

    def _cached_step(self):
        """Greedy decoding's step with a key/value cache: each call runs only the tokens of `prefix` (1, t) that the
        cache has not read (the prompt first, then one token) and reads out only the last position, instead of the
        whole text again (a 30-layer model's continuation of 12 tokens: ~2 forward passes' arithmetic, not 13)."""
        cache = self.model.new_cache()

        def step(prefix: torch.Tensor) -> torch.Tensor:
            logits, _ = self.model.step(prefix[:, cache.seen:], cache, last=True)  # (1, 1, v)
            return torch.log_softmax(self._no_specials(logits[:, -1], keep=(tok.EOS,)), -1)
        return step

    def _next_logits(self, prefix: torch.Tensor, switches: Switches = PLAIN) -> torch.Tensor:
        """(b, v) scores of the token after each prefix (b, t); special tokens but the end of line at -inf."""
        return self._no_specials(self.model(prefix, switches=switches)[0][:, -1], keep=(tok.EOS,))

    @torch.no_grad()
    def next_logits(self, ids: list[int]) -> np.ndarray:
        """The causal model's scores for the token after `ids`, as greedy decoding reads them (sampling's step)."""
        self._require("decoder", "next-token prediction")
        return self._next_logits(torch.tensor([list(ids)], device=self.device))[0].cpu().numpy()

    @torch.no_grad()
    def fill(self, text: str, k: int = 5, switches: Switches = PLAIN) -> list[list[tuple[str, float]]]:
        """For each <mask> in `text`, the masked model's top-k fillers with probabilities."""
        self._require("encoder", "fill-in-the-blank")
        enc = self.encode(text)
        mask_id = self._template[2] if self.config.tokenizer == "template" else self.special(tok.MASK)
        logits, _ = self.model(torch.tensor([enc.ids], device=self.device), switches=switches)
        answers = []
        for position in [i for i, t in enumerate(enc.ids) if t == mask_id]:
            probs = torch.softmax(self._no_specials(logits[0, position]), -1)
            top = probs.topk(k)
            answers.append([(self.label(int(i)), float(p)) for p, i in zip(top.values, top.indices)])
        return answers

    def _decoder_step(self, memory, switches: Switches = PLAIN):
        def step(prefix: torch.Tensor) -> torch.Tensor:
            mem = memory.expand(prefix.size(0), -1, -1)
            return torch.log_softmax(self.model.decode(prefix, mem, switches=switches)[:, -1].float(), -1)
        return step

    @torch.no_grad()
    def translate(self, text: str, beam: int = 1, switches: Switches = PLAIN) -> str:
        """The dates model's ISO 8601 output; beam=1 is greedy decoding."""
        return self.translations(text, beam, switches)[0].text

    @torch.no_grad()
    def translations(self, text: str, beam: int = 1, switches: Switches = PLAIN) -> list[Translation]:
        """Greedy (beam=1) or the `beam` best outputs of beam search, best first, with scores."""
        self._require("encoder-decoder", "translation")
        enc = self.encode(text)
        if not enc.ids:
            raise ValueError("nothing to translate: the text is empty")
        memory = self.model.encode(torch.tensor([enc.ids], device=self.device), switches=switches)
        step = self._decoder_step(memory, switches)
        start, end, max_new = [self.special(tok.BOS)], self.special(tok.EOS), 16
        if beam == 1:
            hyps = [decoding.greedy(step, start, end, max_new, self.device)]
        else:
            hyps = decoding.beam_search(step, start, end, max_new, beam, self.device)
        return [Translation(self.written(h.ids), h.score, h.finished) for h in hyps]

    @torch.no_grad()
    def classification(self, text: str, switches: Switches = PLAIN) -> Classification:
        """The classifier's whole decision on `text`: every category's probability, and the vectors
        before and after pooling (which tokens it drew on: analysis/pooling.py)."""
        self._require("classifier", "classification")
        enc = self.encode(text)
        if len(enc.ids) < 2:
            raise ValueError("nothing to classify: the text is empty")
        features, _ = self.model.features(torch.tensor([enc.ids], device=self.device), switches=switches)
        pooled = self.model.pool(features)
        logits = self.model.to_classes(pooled)[0]
        as_np = lambda x: x.detach().float().cpu().numpy()
        return Classification(enc.tokens, list(self.config.labels), as_np(torch.softmax(logits.float(), -1)),
                              as_np(features[0]), as_np(pooled[0]), as_np(self.model.to_classes.weight),
                              as_np(self.model.to_classes.bias), self.config.pooling, enc.truncated)

    def classify(self, text: str, k: int | None = 5, switches: Switches = PLAIN) -> list[tuple[str, float]]:
        """The classifier's k likeliest categories for `text`, with probabilities (k=None: every category)."""
        return self.classification(text, switches).top(k)

    def label_index(self, label: str) -> int:
        """The classifier's output number for a category name."""
        if label not in self.config.labels:
            raise ValueError(f"unknown category {label!r}; this model knows {', '.join(self.config.labels)}")
        return self.config.labels.index(label)

    # ---- training snapshots -----------------------------------------------
    @cached_property
    def snapshot_files(self) -> dict[int, Path]:
        folder = self.directory / "snapshots"
        files = sorted(folder.glob("step_*.safetensors")) if folder.is_dir() else []
        return {int(f.stem.split("_")[1]): f for f in files}

    def at_snapshot(self, step: int) -> "LoadedModel":
        """The same model with the weights it had at a training step (from snapshots/)."""
        if step not in self.snapshot_files:
            raise ValueError(f"no snapshot at step {step}; available: {sorted(self.snapshot_files)}")
        weights = f"snapshots/{self.snapshot_files[step].name}"
        return LoadedModel(self.name, checkpoint.load(self.directory, weights, self.device), self.tokenizer,
                           self.directory, self.device, weights)
