"""Induction heads: the numbers behind "copying from context" (numpy only).

Take a sentence of random words and repeat it. Reading the second copy, a model that copies from
context looks back at the token that *followed* the current token last time, and predicts it. A head
that puts its weight there is an induction head (Olsson et al. 2022, "In-context learning and
induction heads"). It usually works with a previous-token head in an earlier layer: that head writes
"the token before me was X" into each position, so the induction head can find "the position after
the earlier X" by matching keys.

    ids = copying.repeated_ids(lm, n=8, length=20)   # experiments.copying: (8, 41) random words repeated
    induction_scores(probs, ids[0])   # (L, H) for one sequence's attention probs (L, H, t, t)

Shapes: L layers, H heads, t tokens; probs rows sum to 1.
"""
from __future__ import annotations

import re

import numpy as np

def induction_pairs(ids) -> tuple[np.ndarray, np.ndarray]:
    """(queries, keys): for every token that occurred before, the position after its most recent
    earlier occurrence. Pairs whose key is the query itself or the token just before it are left out
    (a token repeated right away), so the score never counts previous-token attention."""
    ids = np.asarray(ids)
    last: dict[int, int] = {}
    queries, keys = [], []
    for i, token in enumerate(ids.tolist()):
        j = last.get(token)
        if j is not None and j + 2 < i:
            queries.append(i)
            keys.append(j + 1)
        last[token] = i
    return np.array(queries, dtype=np.int64), np.array(keys, dtype=np.int64)


def _check(probs) -> np.ndarray:
    probs = np.asarray(probs)
    if probs.dtype.kind != "f":
        probs = probs.astype(np.float64)  # float32 stays as it is: a copy of a long trace costs more than the scores
    if probs.ndim < 2 or probs.shape[-1] != probs.shape[-2]:
        raise ValueError(f"probs must be (..., t, t) self-attention weights, got shape {probs.shape}")
    return probs


def induction_scores(probs, ids) -> np.ndarray:
    """(...,) mean weight from each repeated token to the token after its previous occurrence, per head
    (probs (..., t, t), e.g. (L, H, t, t)). NaN when `ids` repeat nothing."""
    probs = _check(probs)
    queries, keys = induction_pairs(ids)
    if len(ids) != probs.shape[-1]:
        raise ValueError(f"{len(ids)} ids for attention over {probs.shape[-1]} tokens")
    if not len(queries):
        return np.full(probs.shape[:-2], np.nan)
    return probs[..., queries, keys].mean(-1)


def previous_token_scores(probs) -> np.ndarray:
    """(...,) mean weight on the token just before, per head, over rows 1..t-1."""
    probs = _check(probs)
    t = probs.shape[-1]
    if t < 2:
        return np.full(probs.shape[:-2], np.nan)
    rows = np.arange(1, t)
    return probs[..., rows, rows - 1].mean(-1)


def batch_scores(probs, ids) -> tuple[np.ndarray, np.ndarray]:
    """(induction, previous-token) scores (L, H) averaged over a batch: probs (b, L, H, t, t), ids (b, t)."""
    ids = np.asarray(ids)
    induction = np.mean([induction_scores(p, row) for p, row in zip(probs, ids)], axis=0)
    previous = np.mean([previous_token_scores(p) for p in probs], axis=0)
    return induction, previous


def best_head(scores) -> tuple[int, int, float]:
    """(layer, head, score) of the highest score in an (L, H) array (0-based)."""
    scores = np.nan_to_num(np.asarray(scores, dtype=np.float64), nan=-np.inf)
    layer, head = np.unravel_index(int(scores.argmax()), scores.shape)
    return int(layer), int(head), float(scores[layer, head])


def copy_losses(token_losses, length: int, offset: int = 1) -> tuple[float, float]:
    """(first copy, second copy): mean loss (nats) of predicting the 2nd..last word of each copy.

    token_losses (t - 1,): token_losses[i] is the loss of predicting token i + 1 after tokens 0..i,
    for a sequence laid out as [offset tokens (e.g. <s>)] + words + the same words. The first word of
    each copy is left out: nothing in the context can predict it."""
    losses = np.asarray(token_losses, dtype=np.float64)
    if losses.ndim != 1 or len(losses) < offset + 2 * length - 1:
        raise ValueError(f"need {offset + 2 * length - 1} token losses for two copies of {length}, got {losses.shape}")
    first = losses[offset : offset + length - 1]  # predicting words 2..length of the first copy
    second = losses[offset + length : offset + 2 * length - 1]  # the same words, second time round
    return float(first.mean()), float(second.mean())


def common_words(lines, vocab: dict[str, int], min_count: int = 20) -> list[str]:
    """Lower-case words of 3+ letters written at least `min_count` times as whole words in `lines` and
    kept whole by the tokenizer (" word" is one token), sorted: the word list the demo draws from, so no
    BPE fragment ("cred", "susp") ever shows up as a "word"."""
    counts: dict[str, int] = {}
    for line in lines:
        for word in re.findall(r"(?<![A-Za-z])[a-z]{3,}(?![A-Za-z])", line):
            counts[word] = counts.get(word, 0) + 1
    return sorted(w for w, c in counts.items() if c >= min_count and f"Ġ{w}" in vocab)


def circuit(induction, previous) -> tuple[tuple[int, int], tuple[int, int] | None]:
    """The two-head circuit as measured: ((layer, head) of the strongest induction head, (layer, head) of
    the strongest previous-token head in an earlier layer, or None when it sits in the first layer)."""
    layer, head, _ = best_head(induction)
    if layer == 0:
        return (layer, head), None
    before_layer, before_head, _ = best_head(np.asarray(previous, dtype=np.float64)[:layer])
    return (layer, head), (before_layer, before_head)
