"""The key/value cache of incremental decoding: what a causal model keeps so that writing one more token
costs one new query, not a new forward pass over the whole text.

A causal model's keys and values at position i depend only on tokens 0..i, so they never change once
computed. Each layer keeps them; the next token computes its own query, key and value, appends the key and
value, and attends over everything kept. Grouped-query models keep only their key/value heads (the query
heads that share one read the same cached keys), which is why they were invented: the cache is smaller.
A sliding-window model (Mistral) keeps only the last `window` positions: older ones can never be read again.

The cache is an explicit object the caller owns and passes to the forward pass (model/transformer.py's
CausalLM.step); no module keeps state between calls, so two visitors generating at once never share one.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class LayerCache:
    """One layer's kept keys and values (None before the first token).

    keys   (b, h_kv, s, d)  already turned by their positions in rotary models (a key is turned once, when made)
    values (b, h_kv, s, d)
    window 0 keeps every position; w > 0 keeps the last w (Mistral's sliding window)
    """

    window: int = 0
    keys: torch.Tensor | None = None
    values: torch.Tensor | None = None

    @property
    def kept(self) -> int:
        return 0 if self.keys is None else self.keys.size(2)

    def extend(self, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append the new tokens' keys and values (b, h_kv, t, d); returns everything the new queries may read
        (b, h_kv, kept + t, d), and keeps only the window of it for the next call."""
        if self.keys is not None:
            keys = torch.cat((self.keys, keys), dim=2)  # (b, h_kv, s + t, d)
            values = torch.cat((self.values, values), dim=2)
        if 0 < self.window < keys.size(2):  # a copy, so the dropped positions' memory is freed
            self.keys, self.values = keys[:, :, -self.window:].clone(), values[:, :, -self.window:].clone()
        else:
            self.keys, self.values = keys, values
        return keys, values

    @property
    def nbytes(self) -> int:
        """The bytes the kept keys and values hold (each is its own storage: extend copies what a window keeps)."""
        return 0 if self.keys is None else (self.keys.numel() * self.keys.element_size()
                                            + self.values.numel() * self.values.element_size())


@dataclass
class KVCache:
    """Every layer's LayerCache, and how many tokens the model has read (the next token's position)."""

    layers: list[LayerCache] = field(default_factory=list)
    seen: int = 0

    @classmethod
    def empty(cls, n_layers: int, window: int = 0) -> "KVCache":
        return cls([LayerCache(window) for _ in range(n_layers)])

    @property
    def kept(self) -> int:
        """Positions kept (the same in every layer): min(seen, window)."""
        return self.layers[0].kept if self.layers else 0

    @property
    def start(self) -> int:
        """The position of the oldest kept key: 0 until a sliding window starts dropping them."""
        return self.seen - self.kept

    @property
    def nbytes(self) -> int:
        return sum(layer.nbytes for layer in self.layers)


def bytes_per_token(n_layers: int, kv_heads: int, d_head: int, bytes_per_number: int) -> int:
    """2 (a key and a value) × layers × key/value heads × head size × bytes per number: what each token read
    adds to the cache."""
    return 2 * n_layers * kv_heads * d_head * bytes_per_number
