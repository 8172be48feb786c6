"""Sentences of an exact length in a model's tokens (counting the <s> the model reads first, or
minilm's [CLS] and [SEP]).

Each seed gives a different sentence of the same length, so repeated requests never hit
the app's trace cache and every measurement includes the model's forward pass."""
from __future__ import annotations

import random

WORDS = ("the cat sat on a warm mat while the old dog watched from the garden and a small bird sang in "
         "the tree by the river where children played with a red ball after school every quiet evening "
         "before the bright moon rose over the hills and the town fell asleep").split()
FILLERS = (" a", " I", ".", " the", "x")


def sentence(model, n_tokens: int, seed: int = 0) -> str:
    """A sentence that `model` reads as exactly n_tokens tokens."""
    # the specials the model adds (<s>, or [CLS] and [SEP]) plus the text's tokens, counted past the model's
    # context (encode() would cut there)
    added = len(model.encode("").ids)
    count = lambda text: added + len(model.tokenizer.encode(text, add_special_tokens=False).ids)
    rng = random.Random(seed)
    text = ""
    while True:
        candidate = (text + " " + rng.choice(WORDS)).strip()
        if count(candidate) > n_tokens:
            break
        text = candidate
    while count(text) < n_tokens:
        for filler in FILLERS:
            if count(text + filler) == count(text) + 1:
                text += filler
                break
        else:
            raise RuntimeError(f"cannot grow the sentence by exactly one token at {count(text)}")
    assert count(text) == n_tokens, f"built {count(text)} tokens, wanted {n_tokens}"
    assert n_tokens > model.config.max_len or len(model.encode(text).ids) == n_tokens
    return text
