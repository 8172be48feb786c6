"""Encoder-decoder views: cross-attention (output characters × input characters), what
one output character looked at as it was written, and greedy versus beam search.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.figure import plain_figure
from viz.heatmap import attention_heatmap
from viz.labels import axis_ticks, label_fit, token_labels, with_labelled

HIGHLIGHT = "#ff7f0e"
BAR_PX = 1050  # the step's bars' plot width on a 1280-px screen


def cross_figure(probs, targets, sources, step: int | None = None, title: str = "",
                 font_size: int = 12, max_height: int | None = None) -> go.Figure:
    """probs (t, s): rows are decoder steps, labelled `targets` (pass the character each row writes),
    columns the source characters. `step` frames the row of the output character being written. max_height: the
    most the figure may take (presenter mode's first screen): its labels are sized for the cells that leaves."""
    probs = np.asarray(probs, np.float32)
    # full width on the page: a written date has ~30 characters, whose cells would be tiny in 560 px
    fig = attention_heatmap(probs, targets, sources, title=title, font_size=font_size, max_width=1000,
                            max_height=max_height)
    # the title says it: columns are the source characters; each axis still says which it labels
    which = {axis: str(fig.layout[axis].title.text).partition(", ")[2] for axis in ("xaxis", "yaxis")}
    fig.update_xaxes(title_text=which["xaxis"])
    fig.update_yaxes(title_text="writes" + (f", {which['yaxis']}" if which["yaxis"] else ""))
    if step is not None:
        if not 0 <= step < probs.shape[0]:
            raise ValueError(f"step must be between 0 and {probs.shape[0] - 1}, got {step}")
        fig.add_shape(type="rect", x0=-0.5, x1=probs.shape[1] - 0.5, y0=step - 0.5, y1=step + 0.5,
                      line=dict(color=HIGHLIGHT, width=3))
    return plain_figure(fig)


def step_figure(weights, sources, written: str, step: int, font_size: int = 12) -> go.Figure:
    """One decoding step: the weights (s,) one output character put on each source character."""
    weights = np.asarray(weights, np.float32)
    if weights.ndim != 1 or len(weights) != len(sources):
        raise ValueError(f"weights must be one row of {len(sources)} source weights, got shape {weights.shape}")
    top = int(weights.argmax())
    colors = [HIGHLIGHT if i == top else "#1f77b4" for i in range(len(weights))]
    labels = token_labels(sources)
    fig = go.Figure(go.Bar(x=np.arange(len(weights)), y=weights, marker_color=colors, hovertext=labels,
                           hovertemplate="%{hovertext}: %{y:.3f}<extra></extra>"))
    # upright labels side by side across ~1,100 px (a 1280-px screen): every k-th where they would not fit
    longest = max((len(label) for label in token_labels(sources)), default=1)
    size, every = label_fit(BAR_PX / max(len(sources), 1), len(sources), font_size, pitch=0.62 * longest + 0.5)
    fig.update_xaxes(**axis_ticks(sources, step=every), tickangle=0, tickfont=dict(size=size),
                     title_text=with_labelled("source characters", every))
    fig.update_yaxes(range=[0, 1], title_text="weight")
    fig.update_layout(
        title=dict(text=f"Step {step + 1}: writing {token_labels([written])[0]!s} — it looked most at "
                        f"{labels[top]!s} (position {top + 1})", x=0.01, font=dict(size=font_size + 4)),
        height=340, font=dict(size=font_size), margin=dict(l=10, r=10, t=60 + 2 * font_size, b=10),
        paper_bgcolor="white",
    )
    return plain_figure(fig)


def beams_table(translations) -> pd.DataFrame:
    """Outputs best first: rank, output, log-probability and probability of the whole output.

    translations: objects with .text, .score (log-probability) and .finished."""
    rows = [{"rank": i + 1, "output": t.text, "log-prob": round(float(t.score), 4),
             "probability": float(f"{math.exp(float(t.score)):.4g}"), "finished": bool(t.finished)}
            for i, t in enumerate(translations)]
    return pd.DataFrame(rows, columns=["rank", "output", "log-prob", "probability", "finished"])
