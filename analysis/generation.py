"""The cost of writing one token, with a key/value cache and without: arithmetic, memory and the time measured.

Writing token n+1 needs the last position's output. Without a cache the model runs again over all n tokens:
every projection and feed-forward for every position, and every pair of positions in every head. With a cache
it runs over the one new token: its projections and feed-forward, and its one query against the kept keys.

Arithmetic is counted in floating-point operations: a multiply-add is 2 (a (1, a) × (a, b) product is 2·a·b).
Normalisations, softmax and activations are left out: they are a few operations per number, not per weight.
Memory: every kept position holds a key and a value in every layer and key/value head:
    bytes per token = 2 × layers × key/value heads × head size × bytes per number.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class Sizes:
    """What fixes a causal model's cost per token (read off its config)."""

    n_layers: int
    d_model: int
    n_heads: int
    kv_heads: int
    d_head: int
    d_ff: int
    gated: bool  # a SwiGLU feed-forward: three matrices (gate, up, down) instead of two
    vocab_size: int
    bytes_per_number: int = 4
    window: int = 0  # a sliding window: the most keys a query reads (0: all)


def position_flops(s: Sizes) -> int:
    """Every layer's projections and feed-forward for one position, and the readout to the vocabulary."""
    projections = 2 * s.d_model * s.d_head * (s.n_heads + 2 * s.kv_heads) + 2 * s.n_heads * s.d_head * s.d_model
    feed_forward = 2 * s.d_model * s.d_ff * (3 if s.gated else 2)
    return s.n_layers * (projections + feed_forward) + 2 * s.d_model * s.vocab_size


def pair_flops(s: Sizes) -> int:
    """One query against one key in every layer and head: q·k and that weight times the value (2·d each)."""
    return s.n_layers * s.n_heads * 4 * s.d_head


def cached_flops(s: Sizes, keys: int) -> int:
    """Writing one token with the cache: one position, its query against `keys` kept keys (itself included)."""
    return position_flops(s) + pair_flops(s) * keys


def recompute_flops(s: Sizes, n: int) -> int:
    """Writing the token after n without a cache: a full forward pass over n positions. The pass computes every
    (query, key) pair of the n × n map, the masked ones too, and the readout at every position (as the model's
    forward does)."""
    return n * position_flops(s) + pair_flops(s) * n * n


def bytes_per_token(s: Sizes) -> int:
    return 2 * s.n_layers * s.kv_heads * s.d_head * s.bytes_per_number


def without_grouping(s: Sizes) -> Sizes:
    """The same model with one key/value head per query head (no grouped-query attention)."""
    return replace(s, kv_heads=s.n_heads)


@dataclass(frozen=True)
class Costs:
    """What one generation cost, per token written after the prompt (steps 2 …).

    cached_ms, recompute_ms   mean wall time per token with the cache, and of a full pass over the same texts
    cached_flops, recompute_flops   mean arithmetic per token of each (FLOPs)
    per_token, per_token_mha  cache bytes per token, and without grouped-query attention
    """

    cached_ms: float
    recompute_ms: float
    cached_flops: float
    recompute_flops: float
    per_token: int
    per_token_mha: int

    @property
    def speedup(self) -> float:
        return self.recompute_ms / self.cached_ms if self.cached_ms > 0 else float("nan")

    @property
    def flops_ratio(self) -> float:
        return self.recompute_flops / self.cached_flops


def costs(s: Sizes, prompt: int, step_seconds, recompute_seconds: dict[int, float]) -> Costs:
    """step_seconds: each step's wall time (step 1 reads the whole prompt, so it is left out where there are
    more); recompute_seconds: text length n -> the wall time of a full pass over n tokens (measured at a few
    of the steps' lengths). The arithmetic is averaged over the same steps as the time."""
    seconds = np.asarray(step_seconds, dtype=np.float64)
    steps = np.arange(len(seconds))
    later = steps[1:] if len(steps) > 1 else steps
    reads = prompt + later  # step t (from 0) reads prompt + t positions
    kept = np.minimum(reads, s.window) if s.window else reads
    lengths = np.array(sorted(recompute_seconds))
    return Costs(cached_ms=float(seconds[later].mean() * 1000),
                 recompute_ms=float(np.mean([recompute_seconds[n] for n in lengths]) * 1000),
                 cached_flops=float(np.mean([cached_flops(s, int(k)) for k in kept])),
                 recompute_flops=float(np.mean([recompute_flops(s, int(n)) for n in lengths])),
                 per_token=bytes_per_token(s), per_token_mha=bytes_per_token(without_grouping(s)))


def recompute_lengths(prompt: int, steps: int, samples: int = 4) -> list[int]:
    """The text lengths at which a full pass is timed: `samples` evenly spaced among the later steps'."""
    first = prompt + (1 if steps > 1 else 0)
    last = prompt + steps - 1
    return sorted({int(round(x)) for x in np.linspace(first, max(first, last), samples)})


def top_key(row) -> int:
    """The position a query row gives most weight (the first, on a tie): the quiz's answer."""
    return int(np.argmax(np.asarray(row)))
