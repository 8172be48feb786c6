"""Attention one step at a time, in numpy, for the "step by step" view.

A Trace stores each head's queries, keys and values. From them this module
recomputes the head with a chosen temperature and with the 1/sqrt(d) scaling
switched on or off, keeping every intermediate, so the student can watch

    raw scores q·k  ->  scaled  ->  masked  ->  softmax  ->  weighted sum of values

Pure numpy (float32) on purpose: it runs live on every slider move, and it can
be checked against the torch path that produced the trace.

Dimension letters as in model/attention.py: t queries, s keys, d per-head size.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# The temperature slider's range: near 0 every row becomes one-hot (hard,
# argmax attention); far above 1 every row becomes uniform over the allowed keys.
MIN_TEMPERATURE = 0.01
MAX_TEMPERATURE = 100.0


@dataclass
class AttentionSteps:
    """Every intermediate of softmax(mask(q kᵀ · factor / temperature)) v for one head.

    scores  (t, s)  raw dot products q·k
    scaled  (t, s)  scores · factor / temperature (factor = 1/sqrt(d), or 1 with scaling off)
    masked  (t, s)  scaled, with -inf where the mask forbids a key
    probs   (t, s)  softmax over each row; every row sums to 1
    output  (t, d)  probs @ v: each query's weighted sum of the values
    mask    (t, s)  bool, True = allowed
    factor, temperature   what was applied
    """

    scores: np.ndarray
    scaled: np.ndarray
    masked: np.ndarray
    probs: np.ndarray
    output: np.ndarray
    mask: np.ndarray
    factor: float
    temperature: float

    @property
    def entropy(self) -> np.ndarray:
        """(t,) entropy of each row in nats: 0 = one-hot, log(#allowed keys) = uniform."""
        p = self.probs.astype(np.float64)
        logp = np.log(np.where(p > 0, p, 1.0))
        return (-(p * logp).sum(-1)).astype(np.float32)

    @property
    def max_entropy(self) -> np.ndarray:
        """(t,) entropy of uniform attention over each row's allowed keys."""
        return np.log(self.mask.sum(-1)).astype(np.float32)


def stable_softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax that never overflows: subtract each row's max before exp.
    -inf entries get weight 0; a row must have at least one finite entry."""
    top = np.max(logits, axis=axis, keepdims=True)
    e = np.exp(logits - top)
    return e / e.sum(axis=axis, keepdims=True)


def attention_steps(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    scale: bool = True,
    temperature: float = 1.0,
) -> AttentionSteps:
    """One head's attention with every step kept.

    q (t, d), k (s, d), v (s, d_v); mask (t, s) bool, True = allowed (None: all
    allowed). Each row of the mask must allow at least one key. scale=False skips
    the 1/sqrt(d); temperature must be > 0.
    """
    q, k, v = (np.asarray(a, dtype=np.float32) for a in (q, k, v))
    if q.ndim != 2 or k.ndim != 2 or v.ndim != 2:
        raise ValueError(f"q, k, v must be 2-D (tokens x dims) for one head; got {q.shape}, {k.shape}, {v.shape}")
    if q.shape[1] != k.shape[1] or k.shape[0] != v.shape[0]:
        raise ValueError(f"q (t, d) and k (s, d) must share d, k and v must share s; got {q.shape}, {k.shape}, {v.shape}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    t, s = q.shape[0], k.shape[0]
    mask = np.ones((t, s), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if mask.shape != (t, s):
        raise ValueError(f"mask must be (t, s) = {(t, s)}, got {mask.shape}")
    if not mask.any(-1).all():
        raise ValueError("every query row of the mask must allow at least one key")
    factor = 1.0 / math.sqrt(q.shape[1]) if scale else 1.0
    scores = q @ k.T  # (t, s)
    scaled = (scores.astype(np.float64) * (factor / temperature))  # float64: tiny temperatures stay finite
    masked = np.where(mask, scaled, -np.inf)
    probs = stable_softmax(masked).astype(np.float32)  # (t, s)
    return AttentionSteps(
        scores=scores.astype(np.float32),
        scaled=scaled.astype(np.float32),
        masked=masked.astype(np.float32),
        probs=probs,
        output=probs @ v,  # (t, d_v)
        mask=mask,
        factor=float(factor),
        temperature=float(temperature),
    )


def simple_attention(x: np.ndarray, mask: np.ndarray | None = None, scale: bool = False,
                     temperature: float = 1.0) -> AttentionSteps:
    """The lecture notes' first, parameter-free self-attention: w = softmax(x xᵀ), y = w x.

    x (t, k): the vectors themselves act as query, key and value. With scale=True the
    dot products are divided by sqrt(k) as in the scaled version; mask as in attention_steps.
    """
    x = np.asarray(x, dtype=np.float32)
    return attention_steps(x, x, x, mask, scale=scale, temperature=temperature)
