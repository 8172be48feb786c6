"""Figures for the classifier: the last layer's vectors pooled into one, and each token's part
in the chosen category's score. (Token explanations and before/after guesses reuse
viz.interventions.explanations_figure and guesses_figure.)"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figure import plain_figure
from viz.heatmap import _layout
from viz.labels import token_labels
from viz.panels import Panel, heatmap_row

POOLING_NAMES = {"mean": "mean pooling", "max": "max pooling", "cls": "[CLS] pooling"}


def pooling_figure(tokens, features, pooled, pooling: str, font_size: int = 12) -> go.Figure:
    """The last layer's vectors (t, k), one row per token, with the pooled vector (k,) as the last row.
    Max pooling adds a second panel: which token won each dimension (1 where it holds the maximum)."""
    tokens = list(tokens)
    x = np.asarray(features, dtype=np.float32)
    p = np.asarray(pooled, dtype=np.float32)
    if x.ndim != 2 or x.shape[0] != len(tokens) or p.shape != (x.shape[1],):
        raise ValueError(f"pooling_figure needs features (t, k) for t={len(tokens)} tokens and pooled (k,); "
                         f"got {x.shape} and {p.shape}")
    if pooling not in POOLING_NAMES:
        raise ValueError(f"pooling must be one of {list(POOLING_NAMES)}, got {pooling!r}")
    rows = tokens + [f"= {POOLING_NAMES[pooling]}"]
    z = np.vstack([x, p[None, :]])
    panels = [Panel(z, "last layer's vectors, and the pooled one", rows=rows, cols=None, value="value",
                    col_title="dimension")]
    if pooling == "max":
        won = np.zeros_like(x)
        won[x.argmax(0), np.arange(x.shape[1])] = 1.0
        counts = won.sum(1)
        panels.append(Panel(won, "which token wins each dimension", rows=[f"{t} ({int(c)})" for t, c in
                                                                          zip(tokens, counts)],
                            cols=None, signed=False, value="wins", col_title="dimension"))
    title = {"mean": "Mean pooling: the pooled vector is the average of the rows",
             "max": "Max pooling: each dimension keeps its largest value, from whichever token holds it",
             "cls": "[CLS] pooling: the pooled vector is the first token's row"}[pooling]
    return heatmap_row(panels, title=title, font_size=font_size, colorbars=pooling != "max")


def contributions_figure(tokens, contributions, category: str, font_size: int = 12) -> go.Figure:
    """Each token's part of one category's score (t,), signed, as horizontal bars (the parts add up to
    the score without its bias)."""
    tokens = list(tokens)
    values = np.asarray(contributions, dtype=np.float32)
    if values.shape != (len(tokens),):
        raise ValueError(f"one contribution per token: {values.shape} for {len(tokens)} tokens")
    labels = [f"{i}: {t}" for i, t in enumerate(token_labels(tokens))]
    bar = go.Bar(x=values, y=labels, orientation="h",
                 marker_color=["#c0392b" if v >= 0 else "#2e86c1" for v in values],
                 hovertemplate="%{y}: %{x:+.3f}<extra></extra>")
    height = int(160 + 22 * len(tokens) * (1 + font_size / 30))
    layout = _layout(f"Each token's part of the score for {category} (sum {values.sum():+.2f})",
                     height, font_size, xaxis=dict(title=dict(text="part of the score"), zeroline=True),
                     yaxis=dict(autorange="reversed", ticklabeloverflow="allow", type="category"))
    layout["plot_bgcolor"] = "white"
    return plain_figure(go.Figure(data=[bar], layout=layout))
