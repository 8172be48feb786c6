"""Sampling the next token: temperature, top-k and top-p (nucleus), one filter after the other.

The model gives a score (logit) to every token of its vocabulary; softmax turns them into probabilities.
Greedy decoding always takes the likeliest token. Sampling draws one at random with those probabilities,
after three optional changes, applied in this order (as Hugging Face's generate does):

    temperature T   divide the logits by T before the softmax: T < 1 sharpens the distribution (T -> 0 is
                    greedy: all the probability on the top token), T > 1 flattens it
    top-k           keep only the k likeliest tokens (0: keep all), share their probability out again
    top-p           keep the fewest likeliest tokens whose probabilities add up to at least p (1: keep all)

A seed fixes the random draws: the same settings and seed give the same text. numpy only; a model
gives the logits through `step` (ids -> logits of the next token).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from analysis.steps import stable_softmax

MAX_TEMPERATURE = 2.0
# What the app's sampling panel offers (its sliders, /generate, and a link's sample_* settings)
MAX_TOP_K = 100
MIN_TOP_P = 0.01
MAX_TOKENS = 40  # tokens sampled after the text
DEFAULT_TOKENS = 12
MAX_SEED = 2**32 - 1


@dataclass
class Distribution:
    """The next-token distribution at each stage, every array (v,) summing to 1:
    before (T = 1, no filter), tempered (after T), top_k (after top-k), after (after top-p: what is sampled)."""

    before: np.ndarray
    tempered: np.ndarray
    top_k: np.ndarray
    after: np.ndarray


def softmax(logits: np.ndarray) -> np.ndarray:
    """The probabilities of a vocabulary's logits, in float64 (top-p adds up thousands of small ones)."""
    return stable_softmax(np.asarray(logits, dtype=np.float64))


def check(temperature, top_k, top_p) -> tuple[float, int, float]:
    """The three settings as numbers, or ValueError saying which is wrong and what it takes."""
    def number(value, what):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            raise ValueError(f"{what} must be a number")
        return value

    temperature = float(number(temperature, "the temperature"))
    if not 0 <= temperature <= MAX_TEMPERATURE:
        raise ValueError(f"the temperature must be between 0 and {MAX_TEMPERATURE:g} (0 is greedy)")
    top_k = number(top_k, "top-k")
    if top_k != int(top_k) or top_k < 0:
        raise ValueError("top-k must be a whole number, 0 or more (0 keeps every token)")
    top_p = float(number(top_p, "top-p"))
    if not 0 < top_p <= 1:
        raise ValueError("top-p must be above 0 and at most 1 (1 keeps every token)")
    return temperature, int(top_k), top_p


def tempered(logits: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(logits / T); T = 0: all the probability on the top token (the first, on a tie)."""
    logits = np.asarray(logits, dtype=np.float64)
    if temperature == 0:
        probs = np.zeros_like(logits)
        probs[int(np.argmax(logits))] = 1.0
        return probs
    return softmax(logits / temperature)


def keep_top_k(probs: np.ndarray, k: int) -> np.ndarray:
    """The k likeliest tokens' probabilities shared out again (k = 0 or k >= vocabulary: unchanged)."""
    if k <= 0 or k >= len(probs):
        return probs
    kept = np.zeros_like(probs)
    best = np.argsort(-probs, kind="stable")[:k]
    kept[best] = probs[best]
    return kept / kept.sum()


def keep_top_p(probs: np.ndarray, p: float) -> np.ndarray:
    """The fewest likeliest tokens whose probabilities add up to at least p, shared out again (p = 1: unchanged)."""
    if p >= 1:
        return probs
    order = np.argsort(-probs, kind="stable")
    cumulative = np.cumsum(probs[order])
    n = int(np.searchsorted(cumulative, p * cumulative[-1])) + 1  # the token that crosses p is kept
    kept = np.zeros_like(probs)
    kept[order[:n]] = probs[order[:n]]
    return kept / kept.sum()


def distribution(logits: np.ndarray, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> Distribution:
    temperature, top_k, top_p = check(temperature, top_k, top_p)
    hot = tempered(logits, temperature)
    k = keep_top_k(hot, top_k)
    return Distribution(before=softmax(logits), tempered=hot, top_k=k, after=keep_top_p(k, top_p))


def draw(probs: np.ndarray, rng: np.random.Generator) -> int:
    """One token drawn with these probabilities (inverse of the cumulative distribution: one uniform number)."""
    cumulative = np.cumsum(probs)
    return int(min(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"), len(probs) - 1))


@dataclass
class Sample:
    ids: list[int]  # the tokens drawn, without the prompt; the end token, where drawn, is left out
    probs: list[float]  # each one's probability under the filtered distribution it was drawn from
    finished: bool  # the end token was drawn


def generate(step: Callable[[list[int]], np.ndarray], prompt: list[int], n: int, temperature: float = 1.0,
             top_k: int = 0, top_p: float = 1.0, seed: int = 0, end: int | None = None) -> Sample:
    """Up to n tokens after `prompt`, each drawn from the filtered distribution; stops at `end`."""
    temperature, top_k, top_p = check(temperature, top_k, top_p)
    rng = np.random.default_rng(seed)
    ids, drawn, chances = list(prompt), [], []
    for _ in range(n):
        probs = distribution(step(ids), temperature, top_k, top_p).after
        token = draw(probs, rng)
        if token == end:
            return Sample(drawn, chances, True)
        ids.append(token)
        drawn.append(token)
        chances.append(float(probs[token]))
    return Sample(drawn, chances, False)


def chooser(temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0, seed: int = 0):
    """A step's choice as `generate` makes it, one call per token: logits -> (token drawn, its probability after
    the settings). The same settings and seed draw the same tokens as `generate` (and /generate) from the same
    logits: one seeded generator, one uniform number per token."""
    temperature, top_k, top_p = check(temperature, top_k, top_p)
    rng = np.random.default_rng(seed)

    def choose(logits: np.ndarray) -> tuple[int, float]:
        probs = distribution(logits, temperature, top_k, top_p).after
        token = draw(probs, rng)
        return token, float(probs[token])

    return choose
