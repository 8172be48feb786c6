"""Masked versus unmasked attention: one model with and without its causal mask (the same weights),
and the causal lm beside the bidirectional mlm matched by what their heads do.

Shapes: probs (t, t) of one head; mask (t, t) bool, True = allowed; scores (t, t).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.panels import Panel, heatmap_row


def masks_figure(causal_mask, full_mask, tokens, font_size: int = 12, max_height: int | None = None) -> go.Figure:
    """The two masks as 0/1 matrices: lower-triangular for the causal model, all ones for the other; at most
    max_height px tall (presenter mode's first screen), its labels sized for that."""
    panels = [
        Panel(np.asarray(causal_mask, dtype=np.float32), "lm mask (causal): 1 = may look", tokens, tokens,
              signed=False, value="allowed"),
        Panel(np.asarray(full_mask, dtype=np.float32), "mlm mask (none): 1 = may look", tokens, tokens,
              signed=False, value="allowed"),
    ]
    return heatmap_row(panels, title="The masks: which keys each query may see", font_size=font_size,
                       colorbars=False, max_height=max_height)


def matched_heads_figure(left_probs, right_probs, tokens, left_title: str, right_title: str, title: str,
                         font_size: int = 12) -> go.Figure:
    """Two heads' weights (t, t) on the same tokens, side by side: heads matched by what they do, not by index."""
    left_probs, right_probs = np.asarray(left_probs, np.float32), np.asarray(right_probs, np.float32)
    if left_probs.shape != right_probs.shape:
        raise ValueError(f"the two models read different tokens ({left_probs.shape} vs {right_probs.shape}); "
                         "compare them on text without <mask> markers")
    panels = [Panel(left_probs, left_title, tokens, tokens, signed=False, value="weight"),
              Panel(right_probs, right_title, tokens, tokens, signed=False, value="weight")]
    return heatmap_row(panels, title=title, font_size=font_size)


def mask_effect_figure(scores_off, probs_off, scores_on, mask, probs_on, tokens, font_size: int = 12,
                       title: str = "") -> go.Figure:
    """One head of one model run twice, without and with its causal mask: scores (t, t) and weights (t, t)
    of each run. Masked scores (mask False) are drawn grey (−∞). One colour scale for both runs' scores."""
    scores_off, scores_on = np.asarray(scores_off, np.float32), np.asarray(scores_on, np.float32)
    mask = np.asarray(mask, bool)
    if not (scores_off.shape == scores_on.shape == mask.shape):
        raise ValueError(f"scores {scores_off.shape}, {scores_on.shape} and mask {mask.shape} must have one shape")
    reach = float(max(np.abs(scores_off).max(), np.abs(scores_on).max(), 1e-6))
    panels = [
        Panel(scores_off, "mask off: scores", tokens, tokens, value="score", zmax=reach),
        Panel(probs_off, "mask off: weights", tokens, tokens, signed=False, value="weight"),
        Panel(np.where(mask, scores_on, np.float32(np.nan)), "mask on: scores (grey = −∞)", tokens, tokens,
              value="score", zmax=reach),
        Panel(probs_on, "mask on: weights", tokens, tokens, signed=False, value="weight"),
    ]
    return heatmap_row(panels, title=title, font_size=font_size)


HEAD_TYPES = ["previous-token", "next-token", "first-token sink", "self", "broad", "mixed"]


def head_types_table(frames: dict) -> pd.DataFrame:
    """Heads grouped by their measured label (analysis.head_stats), one column per model.

    frames: model name -> head_stats DataFrame (columns head, label, previous, next, first, self, spread).
    Each cell lists that model's heads of that type with the share that earned the label."""
    share = {"previous-token": "previous", "next-token": "next", "first-token sink": "first", "self": "self",
             "broad": "spread"}
    labels = list(dict.fromkeys(HEAD_TYPES + [lab for f in frames.values() for lab in f["label"]]))
    rows = []
    for lab in labels:
        row = {"head type (measured)": lab}
        for name, frame in frames.items():
            heads = frame[frame["label"] == lab]
            column = share.get(lab)
            row[name] = ", ".join(f"{h} ({heads.loc[i, column]:.2f})" if column else str(h)
                                  for i, h in zip(heads.index, heads["head"])) or "—"
        rows.append(row)
    return pd.DataFrame(rows, columns=["head type (measured)", *frames])
