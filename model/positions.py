"""Positional information: the fixed sinusoids of "Attention Is All You Need", learned vectors, or
rotary positions (RoPE).

Self-attention treats its input as a set; adding a position vector to each token
embedding, or turning each query and key by its position, is what lets word order matter.
"""
from __future__ import annotations

import math

import numpy as np
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


# rotary models add nothing to the embedding: their positions turn the queries and keys (below)
POSITIONS = {"sinusoidal": SinusoidalPositions, "learned": LearnedPositions, "none": NoPositions,
             "rotary": NoPositions}


# ---- rotary positions (RoPE; Su et al., 2021), as Llama, Mistral and Qwen2 use them ------------------
# Nothing is added to the embedding. Instead each head's query and key are turned by an angle that grows
# with their position: the d dimensions form d/2 pairs (i, i + d/2), and pair i turns by position · ω_i.
# A rotation keeps lengths, and turning q by mθ and k by nθ changes q·k only through (m − n)θ: the score
# depends on how far apart the two tokens are, not on where they stand.
def rotary_frequencies(d: int, theta: float = 10000.0, scaling: str = "default", factor: float = 1.0,
                       low_freq_factor: float = 1.0, high_freq_factor: float = 4.0, original_max_len: int = 0,
                       t: int = 0) -> torch.Tensor:
    """(d/2,) float32 angular speeds ω_i = theta^(-2i/d), changed as the checkpoint's rope_scaling says:
    "linear" divides every speed by factor (positions stretched factor times); "dynamic" raises theta only
    for a text longer than original_max_len (so within the pretrained context it is the default); "llama3"
    slows the low frequencies by factor, keeps the high ones and blends those between."""
    exponents = torch.arange(0, d, 2, dtype=torch.int64).float() / d  # (d/2,)
    if scaling == "dynamic" and original_max_len:
        longest = max(t, original_max_len)
        theta = theta * ((factor * longest / original_max_len) - (factor - 1)) ** (d / (d - 2))
    speeds = 1.0 / (theta ** exponents)
    if scaling == "linear":
        speeds = speeds / factor
    elif scaling == "llama3":
        wavelength = 2 * math.pi / speeds
        low_wavelength, high_wavelength = original_max_len / low_freq_factor, original_max_len / high_freq_factor
        slowed = torch.where(wavelength > low_wavelength, speeds / factor, speeds)
        smooth = (original_max_len / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
        blended = (1 - smooth) * slowed / factor + smooth * slowed
        between = ~(wavelength < high_wavelength) & ~(wavelength > low_wavelength)
        speeds = torch.where(between, blended, slowed)
    return speeds


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(..., d): (x1, x2) -> (−x2, x1), the halves swapped: pair i is dimensions i and i + d/2."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x (..., t, d) turned pair by pair: [x_i, x_{i+d/2}] -> [x_i cos − x_{i+d/2} sin, x_{i+d/2} cos + x_i sin]."""
    return x * cos + rotate_half(x) * sin


class RotaryPositions(nn.Module):
    """The angles for a decoder's positions; the attention turns its queries and keys by them."""

    def __init__(self, d: int, theta: float = 10000.0, scaling: str = "default", factor: float = 1.0,
                 low_freq_factor: float = 1.0, high_freq_factor: float = 4.0, original_max_len: int = 0):
        super().__init__()
        self.settings = dict(d=d, theta=theta, scaling=scaling, factor=factor, low_freq_factor=low_freq_factor,
                             high_freq_factor=high_freq_factor, original_max_len=original_max_len)
        self.register_buffer("speeds", rotary_frequencies(**self.settings), persistent=False)

    def speeds_for(self, t: int) -> torch.Tensor:
        """(d/2,): dynamic scaling depends on the text's length, the others do not."""
        if self.settings["scaling"] == "dynamic" and t > self.settings["original_max_len"]:
            return rotary_frequencies(**self.settings, t=t).to(self.speeds.device)
        return self.speeds

    def angles(self, t: int) -> torch.Tensor:
        """(t, d/2) float32: position m's angle for pair i, m · ω_i."""
        positions = torch.arange(t, device=self.speeds.device, dtype=torch.float32)
        return positions[:, None] * self.speeds_for(t)[None, :]

    def forward(self, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(cos, sin), each (t, d): every pair's angle written twice, for dimensions i and i + d/2."""
        angles = self.angles(t)
        both = torch.cat((angles, angles), dim=-1)  # (t, d)
        return both.cos(), both.sin()


@torch.no_grad()
def position_table(loaded, n: int | None = None) -> tuple[str, np.ndarray]:
    """("learned" | "sinusoidal" | "none", (n, k) float32 numpy) for a model.api.LoadedModel: the position
    vectors it adds, read from its weights; n defaults to the model's whole context."""
    positions = loaded.model.embed.positions
    n = loaded.config.max_len if n is None else min(n, loaded.config.max_len)
    offset = loaded.config.position_offset  # RoBERTa's first position is row 2 of its table
    if isinstance(positions, LearnedPositions):
        return "learned", positions.embedding.weight[offset:offset + n].float().cpu().numpy()
    if isinstance(positions, SinusoidalPositions):
        return "sinusoidal", positions.table[:n].float().cpu().numpy()
    return "none", np.zeros((n, loaded.config.d_model), dtype=np.float32)
