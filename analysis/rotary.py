"""Rotary positions (RoPE) in numbers, for the Positions tab: one query and one key, turned by position.

A rotary model adds nothing to its embeddings. Each head splits its query and key into d/2 pairs of
dimensions (i, i + d/2) and turns pair i by the angle position · ω_i. Turning q by m·ω and k by n·ω
changes the angle between them by (m − n)·ω, and a rotation keeps lengths, so the score q·k depends on
the two positions only through their offset m − n: the same q and k at (m, n) and (m + s, n + s) score
the same. Adding a position vector instead (sinusoidal or learned) gives cross terms q·p_n and p_m·k
that depend on where each token stands, not only on how far apart they are.

The numbers are computed here (numpy) from the model's own layer-1 query and key, before any position
is applied (read by experiments.rotary's forward pass); the figures are viz/positions.py's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.positions import sinusoidal_table

SHIFTS = (0, 10, 50)  # the same pair of tokens moved this many positions further into a text


@dataclass
class RotaryDemo:
    """One head's query (of the last token) and key (of an earlier token) in layer 1, before any position.

    q, k        (d,) float64 vectors, from the tokens alone
    speeds      (d/2,) angular speed ω_i of pair i, radians per position (pair i = dimensions i, i + d/2)
    own         True: the model's own rotary speeds (its rope_theta and scaling); False: a model with
                added positions, shown what RoPE with θ = 10000 would do to its vectors
    query_pos, key_pos   where the two tokens stand in the sentence
    """

    model: str
    head: int
    query_token: str
    key_token: str
    query_pos: int
    key_pos: int
    q: np.ndarray
    k: np.ndarray
    speeds: np.ndarray
    own: bool
    theta: float
    scaling: str = ""  # how the model's rope_scaling changes the speeds, as the view writes it

    @property
    def d(self) -> int:
        return self.q.shape[-1]

    @property
    def offset(self) -> int:
        return self.query_pos - self.key_pos

    def rotated(self, x: np.ndarray, position: int) -> np.ndarray:
        """(d,): x with pair i turned by position · ω_i (model.positions.rotate, in numpy)."""
        half = self.d // 2
        angle = position * self.speeds
        cos, sin = np.cos(angle), np.sin(angle)
        first, second = x[:half], x[half:]
        return np.concatenate([first * cos - second * sin, second * cos + first * sin])

    def score(self, m: int, n: int) -> float:
        """q turned to position m · k turned to position n: the raw score, before the division by √d."""
        return float(self.rotated(self.q, m) @ self.rotated(self.k, n))

    def added_score(self, m: int, n: int) -> float:
        """(q + p_m) · (k + p_n) with p the fixed sinusoids of size d: position vectors added instead."""
        table = sinusoidal_table(max(m, n) + 1, self.d).astype(np.float64)
        return float((self.q + table[m]) @ (self.k + table[n]))

    def pair(self, x: np.ndarray, i: int, position: int) -> tuple[float, float]:
        """Pair i of x (dimensions i and i + d/2) after turning to `position`."""
        turned = self.rotated(x, position)
        return float(turned[i]), float(turned[i + self.d // 2])

    def rows(self, shifts=SHIFTS) -> list[dict]:
        """The table of the view: the two tokens moved along together (same offset, same rotary score),
        and the query with the key one position nearer (another offset, another score)."""
        m, n = self.query_pos, self.key_pos
        places = [(m + s, n + s) for s in shifts] + [(m + shifts[-1], n + shifts[-1] + 1)]
        return [{"query position m": a, "key position n": b, "offset m − n": a - b,
                 "rotary score": round(self.score(a, b), 4), "added sinusoids": round(self.added_score(a, b), 4)}
                for a, b in places]


def key_position(query_pos: int, skip: set[int]) -> int:
    """The key shown: the token three before the query where there is one (not a start token)."""
    candidates = [j for j in range(query_pos) if j not in skip]
    if not candidates:
        return 0
    return candidates[max(0, len(candidates) - 3)]


def scaling_note(config) -> str:
    """', linear scaling × 4' for a model whose config.json scales its rotary speeds; '' for plain RoPE."""
    if config.rope_scaling == "default":
        return ""
    return f", {config.rope_scaling} scaling × {config.rope_factor:g}"
