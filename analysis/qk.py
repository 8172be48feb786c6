"""One head's queries and keys in one picture: a 2-D projection (PCA) of the joint set.

A score is a dot product, q_i · k_j: a query gives a high score to the keys that point its way. Each
head has its own q and k, in d dimensions (32 for minilm, 32 for lm); to draw them, the queries and keys
are pooled into one set of t + s points, centred on their joint mean, and projected on the two directions
along which that set varies most. The projection keeps where the points lie relative to each other as well
as two axes can (the explained variance says how well); it does not keep the dot products exactly, so the
line from each query goes to its strongest key as the model scored it, in all d dimensions.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class QKProjection:
    """queries (t, 2) and keys (s, 2): the points on the two axes;  explained (2,) the share of the joint
    set's variance each axis holds;  strongest (t,) each query's highest-weighted key (among those it may see);
    scores (t, s) q·k recomputed from the full-dimensional vectors."""

    queries: np.ndarray
    keys: np.ndarray
    explained: np.ndarray
    strongest: np.ndarray
    scores: np.ndarray


def project(q: np.ndarray, k: np.ndarray, probs: np.ndarray) -> QKProjection:
    """q (t, d) and k (s, d) of one head, and its weights probs (t, s)."""
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    joint = np.concatenate([q, k])
    centred = joint - joint.mean(0)
    _, singular, axes = np.linalg.svd(centred, full_matrices=False)
    variance = singular ** 2
    total = variance.sum()
    explained = np.zeros(2)
    n = min(2, len(variance))
    explained[:n] = variance[:n] / total if total > 0 else 0.0
    basis = np.zeros((q.shape[1], 2))
    basis[:, :n] = axes[:n].T
    points = centred @ basis
    return QKProjection(queries=points[: len(q)], keys=points[len(q):], explained=explained,
                        strongest=np.asarray(probs).argmax(-1), scores=q @ k.T)
