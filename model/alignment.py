"""Which cross-attention head lines up output with input? A month test for the dates model.

To write the month digits of "2026-11-21" (output characters 5 and 6) the decoder
must look at the month in the source ("November", "Nov.", "11"). A head's month
alignment is the attention mass those two output rows put on the month's source
characters, averaged: 1.0 means the head looks only at the month.
"""
from __future__ import annotations

import numpy as np

from model.dates import month_span

MONTH_CHARACTERS = (5, 6)  # positions of the month digits in YYYY-MM-DD


def month_alignment(cross_probs: np.ndarray, source: str) -> np.ndarray | None:
    """cross_probs (L, H, t, s) for a decoder input "<s>YYYY-MM-DD" -> (L, H) scores,
    or None when the source has no recognisable month or the output is too short.

    Decoder row j reads target token j ("<s>" first) and writes output character j,
    so the month digits are written at rows 5 and 6."""
    span = month_span(source)
    rows = [r for r in MONTH_CHARACTERS if r < cross_probs.shape[2]]
    if span is None or len(rows) < len(MONTH_CHARACTERS):
        return None
    start, end = span
    return cross_probs[:, :, rows, start:end].sum(-1).mean(-1)  # (L, H)


def best_head(cross_probs: np.ndarray, source: str) -> tuple[int, int, float] | None:
    """(layer, head, score) of the best month-aligned head, or None (see month_alignment)."""
    scores = month_alignment(cross_probs, source)
    if scores is None:
        return None
    layer, head = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return int(layer), int(head), float(scores[layer, head])
