"""Learning: the loss curve with the current training step marked, and one head's
attention at every saved snapshot in one tiled figure."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figure import plain_figure
from analysis.overview import pooled_maps
from viz.heatmap import _mask
from viz.narrow import narrow_strip
from viz.tiles import tiled_heatmap

MARK = "#ff7f0e"


def loss_figure(steps, train_loss, val_loss, current: int | None = None, font_size: int = 12) -> go.Figure:
    """Train and validation loss against the training step; a vertical line at `current`."""
    steps = np.asarray(steps)
    if not (len(steps) == len(train_loss) == len(val_loss)):
        raise ValueError("steps, train_loss and val_loss must have the same length")
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=steps, y=np.asarray(train_loss, np.float32), mode="lines+markers", name="train loss"))
    fig.add_trace(go.Scatter(x=steps, y=np.asarray(val_loss, np.float32), mode="lines+markers", name="validation loss"))
    # snapshots are log-spaced: on a linear axis early learning would be squeezed into one corner
    log_x = bool(len(steps) and steps.min() > 0 and steps.max() / steps.min() > 20)
    if current is not None:
        fig.add_vline(x=current, line=dict(color=MARK, width=2, dash="dash"))
        # an annotation's x on a log axis is the power of ten (a shape's is the step): given the step,
        # Plotly put the label at 10^step and stretched the axis to 10^106 at snapshot 3
        fig.add_annotation(x=float(np.log10(current)) if log_x and current > 0 else current, xref="x",
                           y=1, yref="paper", yanchor="bottom", xanchor="left", text=f"step {current}",
                           showarrow=False, font=dict(color=MARK))
    fig.update_layout(
        title=dict(text="Loss during training (dashed: the snapshot shown)", x=0.01, font=dict(size=font_size + 4)),
        height=340, font=dict(size=font_size), xaxis_title="training step", yaxis_title="cross-entropy loss",
        margin=dict(l=10, r=10, t=60 + 2 * font_size, b=10), paper_bgcolor="white",
    )
    if log_x:  # powers of ten labelled only: Plotly's minor labels ("2 3 4 ...") read as steps 2, 3, 4
        fig.update_xaxes(type="log", dtick=1, tickformat=",d")
    return plain_figure(fig)


def snapshots_strip(probs_by_step, steps, mask=None, font_size: int = 12) -> go.Figure:
    """probs_by_step (n, t, s): the same head at n snapshots, left to right, one shared 0..1 scale."""
    probs_by_step = np.asarray(probs_by_step, np.float32)
    if probs_by_step.ndim != 3 or len(steps) != len(probs_by_step):
        raise ValueError(f"need one (t, s) map per step: got {probs_by_step.shape} for {len(steps)} steps")
    names = [[f"step {s}" for s in steps]]
    title = "The same head at every snapshot, left to right"
    fig = tiled_heatmap(probs_by_step[None], names, title=title, mask=mask, font_size=font_size)
    # a phone draws the snapshots in rows it can hold (viz/narrow.py)
    maps = pooled_maps(probs_by_step[None], None if mask is None else _mask(mask, probs_by_step[None]))
    return narrow_strip(fig, maps, names[0], title, font_size=font_size)
