"""Which cross-attention head lines up output with input, for ONE date?

To write the month digits of "2026-11-21" the decoder must look at the month in the
source ("November", "Nov.", "11"). For the sentence on screen, a head's *month
attention* is the weight the two month-digit rows put on the month's source
characters, averaged: 1.0 means the head looks only at the month.

training/evaluate.py's month_alignment answers the dataset-wide question (over the
validation set, how often is a head's most-attended character inside the month?) and
stores the winner in metrics.json; the app opens on that head and reports this one.
"""
from __future__ import annotations

import re

import numpy as np

MONTH_DIGIT_ROWS = (5, 6)  # decoder rows that write the month digits of YYYY-MM-DD

_MONTH_NAME = re.compile(
    r"\b(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?"
    r"|sep(t(ember)?)?|oct(ober)?|nov(ember)?|dec(ember)?)\b", re.IGNORECASE)
# (pattern, number of the group holding the month), tried in this order.
_NUMERIC_MONTH = (
    (re.compile(r"\b\d{4}-(\d{1,2})-\d{1,2}\b"), 1),   # ISO: middle
    (re.compile(r"\b(\d{1,2})/\d{1,2}/\d{4}\b"), 1),   # US slash: first
    (re.compile(r"\b\d{1,2}\.(\d{1,2})\.\d{4}\b"), 1),  # dots: second
)


def month_span(source: str) -> tuple[int, int] | None:
    """[start, end) of the month name or number in ``source``, or None if absent.

    Parses rather than trusting the generator, so it also works on hand-written
    dates and on text typed into the demo.
    """
    for pattern, group in _NUMERIC_MONTH:
        match = pattern.search(source)
        if match:
            return match.span(group)
    match = _MONTH_NAME.search(source)
    return match.span(1) if match else None




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
