"""The numbers a causal-tracing view states: how well the preview agrees with the exact grid, and where the
answer comes back (numpy; the grids come from experiments/patching.py)."""
from __future__ import annotations

import numpy as np

RESTORES = 0.5  # a cell "restores the answer" when patching it brings back at least half of the clean run


def agreement(preview, exact) -> float:
    """Pearson's correlation between the preview and the exact grid, cell by cell (nan if either is constant)."""
    a = np.asarray(preview, dtype=np.float64).ravel()
    b = np.asarray(exact, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"the preview {np.shape(preview)} and the exact grid {np.shape(exact)} differ in shape")
    if a.size < 2 or a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def strongest(grid, count: int = 3) -> list[tuple[int, int, float]]:
    """The `count` cells with the largest values, largest first: (row, column, value), 0-based."""
    z = np.asarray(grid, dtype=np.float64)
    order = np.argsort(-z, axis=None, kind="stable")[:count]
    return [(int(r), int(c), float(z[r, c])) for r, c in zip(*np.unravel_index(order, z.shape))]


def restoring_layers(grid, position: int, level: float = RESTORES) -> list[int]:
    """The layers (0-based) at which patching `position` restores at least `level` of the answer."""
    return [int(l) for l in np.flatnonzero(np.asarray(grid)[:, position] >= level)]


def layer_runs(layers: list[int]) -> str:
    """[0, 1, 2, 5] -> "1–3 and 6" (1-based, as the figures number layers)."""
    if not layers:
        return ""
    runs, start = [], layers[0]
    for previous, current in zip(layers, layers[1:] + [None]):
        if current != previous + 1:
            runs.append(f"{start + 1}" if start == previous else f"{start + 1}–{previous + 1}")
            start = current
    return runs[0] if len(runs) == 1 else ", ".join(runs[:-1]) + " and " + runs[-1]


SIGN_LEVEL = 0.1  # an exact cell at least this far from 0 has a sign the preview must get right
OFF_BY = 0.3  # a preview cell further than this from the exact one is wrong, whatever its sign


def wrong_cells(preview, exact) -> tuple[np.ndarray, np.ndarray]:
    """(backwards, off): boolean (L, n) masks of the preview's wrong cells. backwards: the exact cell is at least
    SIGN_LEVEL from 0 and the preview's sign differs; off: not backwards, but more than OFF_BY from the exact cell.
    A cell not computed yet (NaN) is neither."""
    p = np.asarray(preview, dtype=np.float64)
    e = np.asarray(exact, dtype=np.float64)
    if p.shape != e.shape:
        raise ValueError(f"the preview {p.shape} and the exact grid {e.shape} differ in shape")
    known = np.isfinite(e)
    e0 = np.where(known, e, 0.0)
    backwards = known & (np.abs(e0) >= SIGN_LEVEL) & (np.sign(p) != np.sign(e0))
    off = known & ~backwards & (np.abs(p - e0) > OFF_BY)
    return backwards, off


def wrong_places(mask) -> list[tuple[int, list[int]]]:
    """[(column, layers)]: each column with wrong cells and its wrong layers (0-based), the column with the most
    wrong cells first (ties: left to right)."""
    z = np.asarray(mask, dtype=bool)
    columns = [(c, [int(l) for l in np.flatnonzero(z[:, c])]) for c in range(z.shape[1])]
    return sorted([(c, ls) for c, ls in columns if ls], key=lambda cl: (-len(cl[1]), cl[0]))
