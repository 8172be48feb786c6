"""Positional information: the fixed sinusoids of "Attention Is All You Need", or learned vectors.

Self-attention treats its input as a set; adding a position vector to each token
embedding is what lets word order matter.
"""
from __future__ import annotations

import math

import torch
from torch import nn


def sinusoidal_encoding(t: int, k: int) -> torch.Tensor:
    """(t, k): PE[pos, 2i] = sin(pos / 10000^(2i/k)), PE[pos, 2i+1] = cos(pos / 10000^(2i/k))."""
    position = torch.arange(t, dtype=torch.float32)[:, None]  # (t, 1)
    frequency = torch.exp(torch.arange(0, k, 2, dtype=torch.float32) * (-math.log(10000.0) / k))  # (k/2,)
    pe = torch.zeros(t, k)
    pe[:, 0::2] = torch.sin(position * frequency)
    pe[:, 1::2] = torch.cos(position * frequency[: k // 2])
    return pe


class SinusoidalPositions(nn.Module):
    """Fixed, not trained; stored as a buffer so it moves with the model's device."""

    def __init__(self, max_len: int, k: int):
        super().__init__()
        self.register_buffer("table", sinusoidal_encoding(max_len, k), persistent=False)

    def forward(self, t: int) -> torch.Tensor:
        return self.table[:t]  # (t, k)


class LearnedPositions(nn.Module):
    """One trained vector per position, as in GPT-2 and BERT."""

    def __init__(self, max_len: int, k: int):
        super().__init__()
        self.embedding = nn.Embedding(max_len, k)
        nn.init.normal_(self.embedding.weight, std=0.02)

    def forward(self, t: int) -> torch.Tensor:
        return self.embedding.weight[:t]  # (t, k)


class NoPositions(nn.Module):
    """For the demonstration that attention alone ignores word order."""

    def __init__(self, max_len: int, k: int):
        super().__init__()
        self.k = k
        self.register_buffer("zero", torch.zeros(1, k), persistent=False)  # on the model's device

    def forward(self, t: int) -> torch.Tensor:
        return self.zero.expand(t, self.k)  # (t, k)


POSITIONS = {"sinusoidal": SinusoidalPositions, "learned": LearnedPositions, "none": NoPositions}
