"""Training batches for the three tasks, built from token ids with a seeded generator."""
from __future__ import annotations

import random

import numpy as np
import torch

from training import dates

IGNORE = -100  # cross_entropy skips targets with this value


def next_token_batch(stream: np.ndarray, batch_size: int, seq_len: int, gen: np.random.Generator):
    """Random windows of the token stream: inputs (b, t) and the same shifted by one."""
    starts = gen.integers(0, len(stream) - seq_len - 1, size=batch_size)
    windows = np.stack([stream[s : s + seq_len + 1] for s in starts]).astype(np.int64)
    return torch.from_numpy(windows[:, :-1]), torch.from_numpy(windows[:, 1:])


def with_repeats(windows: np.ndarray, gen: np.random.Generator, *, rate: float, random_share: float,
                 max_span: int, filler: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Copying rewarded: in a `rate` share of the windows (b, t + 1) a span of 2..max_span tokens
    appears twice, the second time somewhere after the first. In a `random_share` of those the span is
    random tokens drawn from `filler` (e.g. the token stream: realistic words in a random order), so
    only the earlier copy can predict it; otherwise it is a chunk of the window's own text.
    Returns (windows, ignore) with ignore (b, t + 1) True on the first copy of a random span: nothing
    predicts random tokens, so the loss skips them there."""
    windows = windows.copy()
    ignore = np.zeros(windows.shape, dtype=bool)
    n = windows.shape[1]
    for row in np.flatnonzero(gen.random(len(windows)) < rate):
        span = int(gen.integers(2, max(2, min(max_span, n // 2)) + 1))
        first = int(gen.integers(0, n - 2 * span + 1))
        second = int(gen.integers(first + span, n - span + 1))
        if gen.random() < random_share:
            windows[row, first : first + span] = filler[gen.integers(0, len(filler), size=span)]
            ignore[row, first : first + span] = True
        windows[row, second : second + span] = windows[row, first : first + span]
    return windows, ignore


def next_token_batch_with_repeats(stream: np.ndarray, batch_size: int, seq_len: int, gen: np.random.Generator,
                                  **repeats):
    """next_token_batch whose windows hold repeated spans (with_repeats); targets inside the first copy
    of a random span are IGNORE."""
    starts = gen.integers(0, len(stream) - seq_len - 1, size=batch_size)
    windows = np.stack([stream[s : s + seq_len + 1] for s in starts]).astype(np.int64)
    windows, ignore = with_repeats(windows, gen, **repeats)
    targets = windows[:, 1:].copy()
    targets[ignore[:, 1:]] = IGNORE
    return torch.from_numpy(windows[:, :-1]), torch.from_numpy(targets)


def masked_batch(stream, batch_size, seq_len, gen, *, mask_id: int, vocab_size: int, n_special: int, rate=0.15):
    """BERT's recipe: pick 15% of positions; of those 80% become <mask>, 10% a random
    token, 10% stay; the model must recover the original at the picked positions."""
    inputs, _ = next_token_batch(stream, batch_size, seq_len, gen)
    targets = inputs.clone()
    picked = torch.from_numpy(gen.random(inputs.shape) < rate) & (inputs >= n_special)
    targets[~picked] = IGNORE
    roll = torch.from_numpy(gen.random(inputs.shape))
    inputs = inputs.clone()
    inputs[picked & (roll < 0.8)] = mask_id
    randomise = picked & (roll >= 0.8) & (roll < 0.9)
    inputs[randomise] = torch.from_numpy(gen.integers(n_special, vocab_size, size=inputs.shape))[randomise]
    return inputs, targets


def encode_dates(pairs, tokenizer, *, bos: int, eos: int, pad: int):
    """(source, iso) pairs -> src (b, s), src_keep (b, s), decoder input (b, t), target (b, t)."""
    src = [tokenizer.encode(s).ids for s, _ in pairs]
    tgt = [[bos] + tokenizer.encode(iso).ids + [eos] for _, iso in pairs]
    s_len, t_len = max(map(len, src)), max(map(len, tgt))
    src_t = torch.full((len(pairs), s_len), pad, dtype=torch.long)
    tgt_t = torch.full((len(pairs), t_len), pad, dtype=torch.long)
    for i, (s, t) in enumerate(zip(src, tgt)):
        src_t[i, : len(s)] = torch.tensor(s)
        tgt_t[i, : len(t)] = torch.tensor(t)
    target = tgt_t[:, 1:].clone()
    target[target == pad] = IGNORE
    return src_t, src_t != pad, tgt_t[:, :-1], target


def padded(sequences: list, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token-id sequences of different lengths -> ids (b, t) padded with `pad`, and keep (b, t), True on real tokens."""
    t = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), t), pad, dtype=torch.long)
    for i, s in enumerate(sequences):
        ids[i, : len(s)] = torch.as_tensor(s, dtype=torch.long)
    return ids, ids != pad


def dates_batch(batch_size: int, rng: random.Random, tokenizer, **ids):
    return encode_dates([dates.random_pair(rng, split="train") for _ in range(batch_size)], tokenizer, **ids)
