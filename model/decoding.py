"""Greedy and beam search, for any model that gives next-token log-probabilities.

step(prefixes) takes a (b, t) tensor of token ids and returns (b, v) log-probabilities
for the token that comes next after each prefix.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

Step = Callable[[torch.Tensor], torch.Tensor]


@dataclass
class Hypothesis:
    ids: list[int]  # generated ids, without the start token, ending at (and without) the end token
    score: float  # sum of log-probabilities
    finished: bool


def repeated_ngram_tokens(ids: list[int], n: int) -> list[int]:
    """Tokens that would repeat an n-gram already in `ids` (for no-repeat-n-gram decoding)."""
    if n < 1 or len(ids) < n:
        return []
    prefix = tuple(ids[len(ids) - n + 1:]) if n > 1 else ()
    return [ids[i + n - 1] for i in range(len(ids) - n + 1) if tuple(ids[i:i + n - 1]) == prefix]


def greedy(step: Step, start: list[int], end: int | None, max_new: int, device="cpu",
           no_repeat_ngram: int = 0) -> Hypothesis:
    """Take the single most likely token each step: fast, but it can never take back a choice.

    no_repeat_ngram=n forbids any n-gram from appearing twice: small models otherwise
    loop ("a person who is a person who ...")."""
    ids = list(start)
    score = 0.0
    for _ in range(max_new):
        logp = step(torch.tensor([ids], device=device))[0]
        banned = repeated_ngram_tokens(ids, no_repeat_ngram)
        if banned:
            logp = logp.clone()
            logp[banned] = float("-inf")
        best = int(logp.argmax())
        score += float(logp[best])
        if best == end:
            return Hypothesis(ids[len(start):], score, True)
        ids.append(best)
    return Hypothesis(ids[len(start):], score, False)


def beam_search(step: Step, start: list[int], end: int, max_new: int, width: int, device="cpu") -> list[Hypothesis]:
    """Keep the `width` best partial outputs each step; return them best first.

    A greedy choice that looks best now may lead to a worse whole output; beam
    search keeps a few alternatives alive and compares complete outputs.
    """
    if width < 1:
        raise ValueError(f"beam width must be at least 1, got {width}")
    beams = [(list(start), 0.0)]
    finished: list[Hypothesis] = []
    for _ in range(max_new):
        logp = step(torch.tensor([ids for ids, _ in beams], device=device))  # (beams, v)
        total = torch.tensor([score for _, score in beams], device=logp.device)[:, None] + logp
        values, flat = total.flatten().topk(min(width * 2, total.numel()))
        candidates = []
        for value, index in zip(values.tolist(), flat.tolist()):
            beam, token = divmod(index, logp.size(1))
            ids = beams[beam][0]
            if token == end:
                finished.append(Hypothesis(ids[len(start):], value, True))
            else:
                candidates.append((ids + [token], value))
            if len(candidates) == width:
                break
        beams = candidates
        best_open = max((s for _, s in beams), default=float("-inf"))
        if len(finished) >= width and sorted(h.score for h in finished)[-width] >= best_open:
            break  # scores only fall as outputs grow: no open beam can win any more
    finished += [Hypothesis(ids[len(start):], score, False) for ids, score in beams]
    return sorted(finished, key=lambda h: h.score, reverse=True)[:width]
