"""Figures for "Copying from context": the induction stripe, every head's induction and previous-token
scores, and the loss on each token of a repeated sentence (with a head knocked out or not)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from analysis.heads import head_name
from viz.figure import figure, plain_figure
from viz.heatmap import _layout, attention_heatmap
from viz.labels import token_labels
from viz.panels import Panel, heatmap_row

LINE_COLORS = ["#4c78a8", "#f58518", "#54a24b", "#b279a2"]
STRIPE_SCORE = 0.3  # an induction score from which the title calls the head's pattern a stripe
CIRCUIT_COLOR = "#d62728"


def stripe_figure(probs, tokens, layer: int, head: int, score: float, length: int, font_size: int = 12,
                  max_height: int | None = None) -> go.Figure:
    """One head's attention (t, t) on a sentence repeated twice after <s>: an induction head draws a
    stripe `length - 1` cells left of the diagonal in the second copy. layer/head 0-based."""
    probs = np.asarray(probs, dtype=np.float32)
    t = probs.shape[-1]
    if probs.shape != (t, t) or len(tokens) != t:
        raise ValueError(f"probs must be (t, t) with one token per row, got {probs.shape} and {len(tokens)} tokens")
    mask = np.tril(np.ones((t, t), dtype=bool))
    if length < 2:
        raise ValueError(f"length is the number of words repeated, at least 2, got {length}")
    # the stripe is named only where the head draws it: a low score beside "the stripe" would contradict it
    stripe = (f"the stripe, {length - 1} cells left of the diagonal: each word of the second copy looks at the "
              f"word after its first occurrence" if score >= STRIPE_SCORE else
              f"no stripe: an induction head would look {length - 1} cells left of the diagonal in the second copy")
    # two lines: on a projector one would run past the figure's right edge
    title = f"{head_name(layer, head)} on the repeated sentence: induction score {score:.2f}:<br><sub>{stripe}</sub>"
    return attention_heatmap(probs, tokens, tokens, title=title, mask=mask, font_size=font_size, max_height=max_height)


def scores_figure(induction, previous, font_size: int = 12, marked: list | None = None) -> go.Figure:
    """Two layers × heads maps side by side: induction score and previous-token score (0..1).
    marked: (layer, head) pairs (0-based) whose cells are outlined (the circuit)."""
    induction, previous = (np.asarray(a, dtype=np.float32) for a in (induction, previous))
    if induction.ndim != 2 or induction.shape != previous.shape:
        raise ValueError(f"induction and previous must be (layers, heads) of one shape, got {induction.shape} "
                         f"and {previous.shape}")
    layers, heads = induction.shape
    rows, cols = [f"L{i + 1}" for i in range(layers)], [f"H{j + 1}" for j in range(heads)]
    panels = [Panel(induction, "induction score: weight on the word after the earlier occurrence", rows, cols,
                    signed=False, value="induction score", row_title="layer"),
              Panel(previous, "previous-token score: weight on the token just before", rows, cols,
                    signed=False, value="previous-token score", row_title="layer")]
    fig = heatmap_row(panels, title="Every head, measured on this repeated sentence", font_size=font_size,
                      height=int(260 + 48 * layers * (1 + font_size / 40)))
    shapes = []
    for i in range(len(panels)):
        suffix = "" if i == 0 else str(i + 1)
        for layer, head in marked or []:
            shapes.append(dict(type="rect", xref=f"x{suffix}", yref=f"y{suffix}", x0=head - 0.5, x1=head + 0.5,
                               y0=layer - 0.5, y1=layer + 0.5, line=dict(color=CIRCUIT_COLOR, width=3)))
    fig.layout.shapes = shapes
    return plain_figure(fig)


def losses_figure(tokens, losses: dict, length: int, font_size: int = 12) -> go.Figure:
    """The loss (nats) of predicting each token after <s>, one line per condition.

    tokens  the t tokens read (<s>, the words, the words again)
    losses  name -> (t - 1,) losses; losses[i] is for predicting tokens[i + 1]
    length  the number of words repeated; the second copy is shaded"""
    names = list(losses)
    if not names:
        raise ValueError("losses_figure needs at least one line: {name: (t - 1,) losses}")
    labels = token_labels(tokens)[1:]
    lines = []
    for n, name in enumerate(names):
        y = np.asarray(losses[name], dtype=np.float32)
        if y.shape != (len(labels),):
            raise ValueError(f"{name}: {y.shape[0] if y.ndim else 0} losses for {len(labels)} predicted tokens")
        lines.append(dict(type="scatter", mode="lines+markers", name=name, x=np.arange(len(labels)), y=y,
                          text=labels, line=dict(color=LINE_COLORS[n % len(LINE_COLORS)], width=2),
                          hovertemplate=f"{name}<br>predicting %{{text}}: %{{y:.2f}} nats<extra></extra>"))
    second = length  # index of the first prediction of the second copy (its first word)
    shapes = [dict(type="rect", xref="x", yref="paper", x0=second - 0.5, x1=len(labels) - 0.5, y0=0, y1=1,
                   fillcolor="#54a24b", opacity=0.08, line=dict(width=0), layer="below")]
    annotations = [dict(text="first copy", x=(second - 1) / 2, y=1, xref="x", yref="paper", yanchor="bottom",
                        showarrow=False),
                   dict(text="second copy", x=(second + len(labels) - 1) / 2, y=1, xref="x", yref="paper",
                        yanchor="bottom", showarrow=False)]
    step = max(1, int(np.ceil(len(labels) / 40)))
    layout = _layout("Loss on each word: the second copy is easy only for a model that copies", 420, font_size,
                     shapes=shapes, annotations=annotations, legend=dict(orientation="h", y=-0.3),
                     xaxis=dict(tickvals=list(range(0, len(labels), step)), ticktext=labels[::step], tickangle=-60,
                                title=dict(text="token predicted")),
                     yaxis=dict(rangemode="tozero", title=dict(text="loss (nats)"), automargin=True))
    layout["plot_bgcolor"] = "white"
    return figure(lines, layout)


def forming_figure(steps, scores, snapshots=(), font_size: int = 12) -> go.Figure:
    """The best head's induction score during training (steps, scores), with the steps that kept
    weights (the Learning tab's snapshots) marked."""
    steps, scores = np.asarray(steps), np.asarray(scores, dtype=np.float32)
    if steps.shape != scores.shape or steps.ndim != 1 or not len(steps):
        raise ValueError(f"steps and scores must be two equally long 1-D arrays, got {steps.shape} and {scores.shape}")
    line = dict(type="scatter", mode="lines", x=steps, y=scores, name="best head's induction score",
                line=dict(color=LINE_COLORS[0], width=2),
                hovertemplate="step %{x}: induction score %{y:.2f}<extra></extra>")
    kept = [s for s in snapshots if steps.min() <= s <= steps.max()]
    marks = dict(type="scatter", mode="markers", x=kept, y=np.interp(kept, steps, scores) if kept else [],
                 name="snapshot (Learning tab)", marker=dict(color=LINE_COLORS[1], size=9),
                 hovertemplate="snapshot at step %{x}<extra></extra>")
    layout = _layout("The induction head forming during training (random words repeated)", 360, font_size,
                     legend=dict(orientation="h", y=-0.25),
                     xaxis=dict(title=dict(text="training step")),
                     yaxis=dict(range=[0, 1], title=dict(text="induction score"), automargin=True))
    layout["plot_bgcolor"] = "white"
    return figure([line, marks], layout)
