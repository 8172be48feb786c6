"""Position vectors as numpy tables, for the positional-encoding view.

sinusoidal_table(n, k)  the fixed sinusoids (model/positions.py), positions × dimensions
position_table(loaded)  the table a loaded model actually adds: its learned vectors or sinusoids
"""
from __future__ import annotations

import numpy as np
import torch

from model.positions import LearnedPositions, SinusoidalPositions, sinusoidal_encoding


def sinusoidal_table(n: int, k: int) -> np.ndarray:
    """(n, k) float32: PE[pos, 2i] = sin(pos / 10000^(2i/k)), PE[pos, 2i+1] = cos(...)."""
    if n < 1 or k < 2:
        raise ValueError(f"need at least 1 position and 2 dimensions, got n={n}, k={k}")
    return sinusoidal_encoding(n, k).numpy().astype(np.float32)


@torch.no_grad()
def position_table(loaded, n: int | None = None) -> tuple[str, np.ndarray]:
    """("learned" | "sinusoidal" | "none", (n, k) float32) for a model.api.LoadedModel;
    n defaults to the model's whole context."""
    positions = loaded.model.embed.positions
    n = loaded.config.max_len if n is None else min(n, loaded.config.max_len)
    offset = loaded.config.position_offset  # RoBERTa's first position is row 2 of its table
    if isinstance(positions, LearnedPositions):
        return "learned", positions.embedding.weight[offset:offset + n].float().cpu().numpy()
    if isinstance(positions, SinusoidalPositions):
        return "sinusoidal", positions.table[:n].float().cpu().numpy()
    return "none", np.zeros((n, loaded.config.d_model), dtype=np.float32)


def cosine_similarity(table: np.ndarray) -> np.ndarray:
    """(n, k) -> (n, n): cosine of the angle between every pair of position vectors."""
    table = np.asarray(table, dtype=np.float32)
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    unit = table / np.where(norms > 0, norms, 1.0)
    return unit @ unit.T
