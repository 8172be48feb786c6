"""Copying from context, measured on a causal lm: induction and previous-token scores per head, and the
loss on the first copy of random words against the second (model.copying runs the model, analysis.induction
has the numbers).

    from model import api
    from analysis import copying
    result = copying.measure(api.load("lm"))   # induction and previous-token score per head, copy losses
    result.induction.max(), result.first_loss, result.second_loss
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis import induction
from model import copying
from model.switches import PLAIN, Switches


@dataclass
class CopyResult:
    """induction, previous_token  (L, H) mean scores over the sequences
    first_loss, second_loss      mean loss (nats) on words 2..n of the first and of the second copy
    ids                          (n, t) the sequences measured"""

    induction: np.ndarray
    previous_token: np.ndarray
    first_loss: float
    second_loss: float
    ids: np.ndarray


def measure(loaded, n: int = 16, length: int = 20, seed: int = 0, switches: Switches = PLAIN,
            ids: np.ndarray | None = None) -> CopyResult:
    """Scores and copy losses on n sequences of `length` random words repeated (or on `ids` given)."""
    ids = copying.repeated_ids(loaded, n, length, seed) if ids is None else np.atleast_2d(np.asarray(ids))
    length = (ids.shape[1] - 1) // 2
    losses, probs = copying.token_losses(loaded, ids, switches)
    induction_scores, previous = induction.batch_scores(probs, ids)
    pairs = np.array([induction.copy_losses(row, length) for row in losses])
    return CopyResult(induction_scores, previous, float(pairs[:, 0].mean()), float(pairs[:, 1].mean()), ids)
