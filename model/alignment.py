"""Which cross-attention head lines up output with input, for ONE date?

To write the month digits of "2026-11-21" the decoder must look at the month in the
source ("November", "Nov.", "11"). For the sentence on screen, a head's *month
attention* is the weight the two month-digit rows put on the month's source
characters, averaged: 1.0 means the head looks only at the month.

model/evaluate.py's month_alignment answers the dataset-wide question (over the
validation set, how often is a head's most-attended character inside the month?) and
stores the winner in metrics.json; the app opens on that head and reports this one.
"""
from __future__ import annotations

import numpy as np

from model.dates import month_span
from model.evaluate import MONTH_DIGIT_ROWS


def month_attention(cross_probs: np.ndarray, source: str) -> np.ndarray | None:
    """cross_probs (L, H, t, s) for a decoder input "<s>YYYY-MM-DD" -> (L, H) weight on the month,
    or None when the source has no recognisable month or the output is too short.

    Decoder row j reads target token j ("<s>" first) and writes output character j,
    so the month digits are written at rows 5 and 6."""
    span = month_span(source)
    rows = [r for r in MONTH_DIGIT_ROWS if r < cross_probs.shape[2]]
    if span is None or len(rows) < len(MONTH_DIGIT_ROWS) or span[1] > cross_probs.shape[3]:
        return None
    start, end = span
    return cross_probs[:, :, rows, start:end].sum(-1).mean(-1)  # (L, H)


def most_month_attentive_head(cross_probs: np.ndarray, source: str) -> tuple[int, int, float] | None:
    """0-based (layer, head, weight) of the head putting most weight on the month, or None."""
    scores = month_attention(cross_probs, source)
    if scores is None:
        return None
    layer, head = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return int(layer), int(head), float(scores[layer, head])
