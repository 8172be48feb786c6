"""Position vectors as numpy tables, for the positional-encoding view.

sinusoidal_table(n, k)  the fixed sinusoids (model.positions.sinusoidal_encoding's, in numpy), positions × dimensions
cosine_similarity(t)    how alike every pair of position vectors is
The table a loaded model actually adds (learned or sinusoidal) is read from its weights by
model.positions.position_table: analysis/ imports no torch.
"""
from __future__ import annotations

import numpy as np


def sinusoidal_table(n: int, k: int) -> np.ndarray:
    """(n, k) float32: PE[pos, 2i] = sin(pos / 10000^(2i/k)), PE[pos, 2i+1] = cos(...), as the models add them
    (tests/analysis/test_lecture_helpers.py checks it against model.positions.sinusoidal_encoding)."""
    if n < 1 or k < 2:
        raise ValueError(f"need at least 1 position and 2 dimensions, got n={n}, k={k}")
    position = np.arange(n, dtype=np.float32)[:, None]  # (n, 1)
    frequency = np.exp(np.arange(0, k, 2, dtype=np.float32) * np.float32(-np.log(10000.0) / k))  # (k/2,)
    table = np.zeros((n, k), dtype=np.float32)
    table[:, 0::2] = np.sin(position * frequency)
    table[:, 1::2] = np.cos(position * frequency[: k // 2])
    return table


def cosine_similarity(table: np.ndarray) -> np.ndarray:
    """(n, k) -> (n, n): cosine of the angle between every pair of position vectors."""
    table = np.asarray(table, dtype=np.float32)
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    unit = table / np.where(norms > 0, norms, 1.0)
    return unit @ unit.T
