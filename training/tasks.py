"""The training tasks: where each preset's batches come from and how its loss is computed.

TextTask: next-token (decoder) or masked-token (encoder) prediction on the WordNet corpus.
DatesTask: written English date -> ISO 8601.  ClassifyTask: a definition -> its WordNet category.
Each gives training batches, validation batches and a loss; training/train.py runs the loop.
"""
from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from analysis import induction
from experiments import copying
from model import tokenizer as tok
from training import batches, categories, corpus, dates
from training.presets import Preset


def text_loss(model, batch, device, masked: bool):
    """(mean cross-entropy, tokens read) of a text batch (inputs, targets); targets are IGNORE where
    nothing is predicted. masked: only the masked positions are projected to the vocabulary (much cheaper)."""
    inputs, targets = (x.to(device) for x in batch)
    if masked:
        features, _ = model.features(inputs)
        picked = targets != batches.IGNORE
        logits = model.to_vocab(features[picked])
        return F.cross_entropy(logits.float(), targets[picked]), inputs.numel()
    logits, _ = model(inputs)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.reshape(-1), ignore_index=batches.IGNORE)
    return loss, inputs.numel()


class TextTask:
    """Next-token (decoder) or masked-token (encoder) prediction on the WordNet corpus."""

    def __init__(self, preset: Preset, out: Path, tokenizer_path: Path, wordnet_dir: Path, fortunes_dir: Path, seed: int):
        self.settings = preset.train
        self.masked = preset.model["arch"] == "encoder"
        lines = corpus.read_lines(wordnet_dir, fortunes_dir)
        train_lines, val_lines = corpus.split(lines)
        if not tokenizer_path.is_file():
            print(f"training the BPE tokenizer ({self.settings.vocab_size} tokens) -> {tokenizer_path}", file=sys.stderr)
            tokenizer_path.parent.mkdir(parents=True, exist_ok=True)
            tok.train_bpe(train_lines, self.settings.vocab_size).save(str(tokenizer_path))
        self.tokenizer = tok.load(tokenizer_path)
        if tokenizer_path.resolve().parent not in (out.resolve(), out.resolve().parent):
            shutil.copy(tokenizer_path, out / "tokenizer.json")  # the loader looks beside the model and one up
        self.vocab_size = self.tokenizer.get_vocab_size()
        self.ids = {s: self.tokenizer.token_to_id(s) for s in tok.SPECIALS}
        self.train_stream = self._stream(train_lines)
        self.val_stream = self._stream(val_lines)
        self.gen = np.random.default_rng(seed)
        self._val_batches: dict[int, list] = {}
        self.filler = self.train_stream[self.train_stream >= len(tok.SPECIALS)]  # random spans: real tokens
        # the induction probe: 8 sequences of 20 random words (fewer in a short context or vocabulary) repeated
        self.probe_ids = None
        if self.settings.probe_every > 0 and not self.masked:
            words = copying.word_ids(self.tokenizer)
            length = min(20, (preset.model["max_len"] - 1) // 2, len(words))
            self.probe_ids = torch.from_numpy(
                copying.repeated_sequences(words, 8, length, seed=0, bos=self.ids[tok.BOS]))

    def _stream(self, lines: list[str]) -> np.ndarray:
        bos, eos = self.ids[tok.BOS], self.ids[tok.EOS]
        encoded = self.tokenizer.encode_batch(lines)
        return np.concatenate([np.array([bos] + e.ids + [eos], dtype=np.int32) for e in encoded])

    def _batch(self, stream, gen, window: int | None = None, batch_size: int | None = None):
        s = self.settings
        window, batch_size = window or s.seq_len, batch_size or s.batch_size
        if self.masked:
            return batches.masked_batch(stream, batch_size, window, gen, mask_id=self.ids[tok.MASK],
                                        vocab_size=self.vocab_size, n_special=len(tok.SPECIALS), rate=s.mask_rate)
        return batches.next_token_batch(stream, batch_size, window, gen)

    def batch(self, step: int = 0):
        """The training batch for a step: windows as long as the curriculum says (seq_len at the end),
        with repeated spans when the settings ask for them (validation windows never have any)."""
        s = self.settings
        if (s.repeat_rate > 0 or s.repeat_phases) and not self.masked:
            window, batch_size = s.window(step)
            return batches.next_token_batch_with_repeats(
                self.train_stream, batch_size, window, self.gen, rate=s.repeats(step), random_share=s.repeat_random,
                max_span=s.repeat_max_span, filler=self.filler)
        return self._batch(self.train_stream, self.gen, *self.settings.window(step))

    @torch.no_grad()
    def probe(self, model, device) -> dict | None:
        """Induction and previous-token scores (L, H) of every head on the probe's repeated words."""
        if self.probe_ids is None:
            return None
        was_training = model.training
        model.eval()
        _, rec = model(self.probe_ids.to(device), record=True)
        model.train(was_training)
        probs = torch.stack([r.probs.float() for r in rec.layers["self"]], 1).cpu().numpy()  # (b, L, H, t, t)
        scores, previous = induction.batch_scores(probs, self.probe_ids.numpy())
        layer, head, best = induction.best_head(scores)
        return {"induction": round(best, 4), "layer": layer, "head": head,
                "previous_token": round(float(np.nanmax(previous)), 4)}

    def window(self, step: int) -> int:
        return self.settings.window(step)[0]

    def validation_batches(self, step: int) -> list:
        """8 fixed validation batches of the windows trained at `step`, so the losses compare like with like."""
        window, batch_size = self.settings.window(step)
        if window not in self._val_batches:
            gen = np.random.default_rng(12345)
            self._val_batches[window] = [self._batch(self.val_stream, gen, window, batch_size) for _ in range(8)]
        return self._val_batches[window]

    def loss(self, model, batch, device):
        return text_loss(model, batch, device, self.masked)

    def rng_state(self):
        return {"numpy": self.gen.bit_generator.state}

    def set_rng_state(self, state):
        self.gen.bit_generator.state = state["numpy"]


class DatesTask:
    """Written English date -> ISO 8601, fresh random pairs every step."""

    def __init__(self, preset: Preset, out: Path, seed: int):
        self.settings = preset.train
        self.tokenizer = tok.char_tokenizer(dates.ALPHABET + dates.ALPHABET.upper())
        self.tokenizer.save(str(out / "tokenizer.json"))
        self.tokenizer = tok.load(out / "tokenizer.json")
        self.vocab_size = self.tokenizer.get_vocab_size()
        self.special = dict(bos=self.tokenizer.token_to_id(tok.BOS), eos=self.tokenizer.token_to_id(tok.EOS),
                            pad=self.tokenizer.token_to_id(tok.PAD))
        self.rng = random.Random(seed)
        val_pairs = dates.pairs(512, split="validation", seed=seed)
        self.val_batches = [batches.encode_dates(val_pairs[i : i + 128], self.tokenizer, **self.special)
                            for i in range(0, 512, 128)]

    def window(self, step: int) -> None:
        return None  # whole dates, no windows

    def validation_batches(self, step: int) -> list:
        return self.val_batches

    def batch(self, step: int = 0):
        return batches.dates_batch(self.settings.batch_size, self.rng, self.tokenizer, **self.special)

    def loss(self, model, batch, device):
        src, keep, dec_in, target = (x.to(device) for x in batch)
        logits, _ = model(src, dec_in, keep)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), target.reshape(-1), ignore_index=batches.IGNORE)
        return loss, int(src.numel() + dec_in.numel())

    def rng_state(self):
        return {"random": list(map(lambda x: list(x) if isinstance(x, tuple) else x, self.rng.getstate()))}

    def set_rng_state(self, state):
        version, internal, gauss = state["random"]
        self.rng.setstate((version, tuple(internal), gauss))


class ClassifyTask:
    """WordNet definition -> its lexicographer category (training.categories); <s> first, as the [CLS] token."""

    def __init__(self, preset: Preset, out: Path, tokenizer_path: Path, wordnet_dir: Path, seed: int):
        self.settings = preset.train
        self.tokenizer = tok.load(tokenizer_path)  # the text models' BPE (`python -m training.train lm` makes it)
        if tokenizer_path.resolve().parent not in (out.resolve(), out.resolve().parent):
            shutil.copy(tokenizer_path, out / "tokenizer.json")  # the loader looks beside the model and one up
        self.vocab_size = self.tokenizer.get_vocab_size()
        self.bos, self.pad = self.tokenizer.token_to_id(tok.BOS), self.tokenizer.token_to_id(tok.PAD)
        self.max_len = preset.model["max_len"]
        train_glosses, val_glosses = categories.split(categories.read_glosses(wordnet_dir))
        self.train_ids, self.train_labels = self._encode(categories.examples(train_glosses, self.settings.with_examples))
        val_ids, val_labels = self._encode(categories.examples(val_glosses))
        # a fixed sample of held-out definitions for the loss curve (training.evaluate reads them all)
        pick = np.random.default_rng(12345).permutation(len(val_ids))[:2048]
        self.val_batches = [self._collate([val_ids[i] for i in chunk], val_labels[chunk])
                            for chunk in np.array_split(pick, 8)]
        self.gen = np.random.default_rng(seed)
        self._queue: list[np.ndarray] = []  # the batches left in this pass over the data

    def _encode(self, pairs: list[tuple[str, int]]) -> tuple[list[list[int]], np.ndarray]:
        encoded = self.tokenizer.encode_batch([text for text, _ in pairs])
        ids = [([self.bos] + e.ids)[: self.max_len] for e in encoded]
        return ids, np.array([label for _, label in pairs], dtype=np.int64)

    def _collate(self, sequences, labels):
        ids, keep = batches.padded(sequences, self.pad)
        return ids, keep, torch.from_numpy(np.asarray(labels, dtype=np.int64))

    def window(self, step: int) -> None:
        return None  # whole definitions, no windows

    def validation_batches(self, step: int) -> list:
        return self.val_batches

    def batch(self, step: int = 0):
        """Examples of similar length batched together (padding would double the work): each pass over the
        data is shuffled, cut into pools of 32 batches, each pool sorted by length, and its batches shuffled."""
        if not self._queue:
            size = self.settings.batch_size
            order = self.gen.permutation(len(self.train_ids))
            for pool in np.array_split(order, max(1, len(order) // (size * 32))):
                pool = pool[np.argsort([len(self.train_ids[i]) for i in pool], kind="stable")]
                self._queue += [pool[i : i + size] for i in range(0, len(pool) - size + 1, size)]
            self._queue = [self._queue[i] for i in self.gen.permutation(len(self._queue))]
        chosen = self._queue.pop()
        return self._collate([self.train_ids[i] for i in chosen], self.train_labels[chosen])

    def loss(self, model, batch, device):
        ids, keep, labels = (x.to(device) for x in batch)
        logits, _ = model(ids, keep=keep)
        smoothing = self.settings.label_smoothing if model.training else 0.0
        return F.cross_entropy(logits.float(), labels, label_smoothing=smoothing), int(keep.sum())

    def rng_state(self):
        return {"numpy": self.gen.bit_generator.state}

    def set_rng_state(self, state):
        self.gen.bit_generator.state = state["numpy"]
