"""Masked versus unmasked attention: the causal lm beside the bidirectional mlm, and one
model's scores before and after its mask.

Shapes: probs (t, t) of one head; mask (t, t) bool, True = allowed; scores (t, t).
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.panels import Panel, heatmap_row


def masks_figure(causal_mask, full_mask, tokens, font_size: int = 12) -> go.Figure:
    """The two masks as 0/1 matrices: lower-triangular for the causal model, all ones for the other."""
    panels = [
        Panel(np.asarray(causal_mask, dtype=np.float32), "lm mask (causal): 1 = may look", tokens, tokens,
              signed=False, value="allowed"),
        Panel(np.asarray(full_mask, dtype=np.float32), "mlm mask (none): 1 = may look", tokens, tokens,
              signed=False, value="allowed"),
    ]
    return heatmap_row(panels, title="The masks: which keys each query may see", font_size=font_size,
                       colorbars=False)


def side_by_side_figure(lm_probs, mlm_probs, tokens, font_size: int = 12, where: str = "") -> go.Figure:
    """Weights of the causal and the bidirectional model on the same tokens, and lm − mlm."""
    lm_probs, mlm_probs = np.asarray(lm_probs, np.float32), np.asarray(mlm_probs, np.float32)
    if lm_probs.shape != mlm_probs.shape:
        raise ValueError(f"the two models read different tokens ({lm_probs.shape} vs {mlm_probs.shape}); "
                         "compare them on text without <mask> markers")
    panels = [
        Panel(lm_probs, "lm (causal): weights", tokens, tokens, signed=False, value="weight"),
        Panel(mlm_probs, "mlm (bidirectional): weights", tokens, tokens, signed=False, value="weight"),
        Panel(lm_probs - mlm_probs, "difference lm − mlm", tokens, tokens, value="difference"),
    ]
    return heatmap_row(panels, title=f"The same sentence, masked and unmasked{where}", font_size=font_size)


def before_after_figure(scaled, mask, probs, tokens, font_size: int = 12, model: str = "") -> go.Figure:
    """One model: scaled scores, the same with −inf where the mask forbids (grey), and the softmax."""
    scaled = np.asarray(scaled, np.float32)
    mask = np.asarray(mask, bool)
    if mask.shape != scaled.shape:
        raise ValueError(f"mask {mask.shape} and scores {scaled.shape} must have the same shape")
    panels = [
        Panel(scaled, "scores q·k/√d, before the mask", tokens, tokens, value="score"),
        Panel(np.where(mask, scaled, np.float32(np.nan)), "after the mask (grey = −∞)", tokens, tokens,
              value="score"),
        Panel(probs, "softmax: −∞ becomes weight 0", tokens, tokens, signed=False, value="weight"),
    ]
    return heatmap_row(panels, title=f"Inside {model}: scores before and after masking", font_size=font_size)
