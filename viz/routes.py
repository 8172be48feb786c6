"""Information-flow routes as a graph: nodes are (layer, position), the embeddings at the bottom and the last
layer at the top; an edge is a part of a node's stream whose importance passes the threshold (analysis/routes.py).
Attention edges (one position into another, the heads summed) are drawn slanted, the residual connection
(a position into itself) straight up; the wider the line, the more important. A node's colour is the share of
its stream the feed-forward of that layer adds."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from analysis.routes import RouteGraph
from viz.describe import routes_alt
from viz.figure import colorscale, figure
from viz.heatmap import HIGHLIGHT, row_label_margin
from viz.labels import token_label, token_labels

KIND_COLOURS = {"attention": "#1f77b4", "residual": "#7f7f7f"}
WIDTHS = (1.0, 2.5, 4.5, 7.0)  # line widths for importance up to 0.25, 0.5, 0.75, 1
NODE_SCALE = colorscale("Greens")
WIDE_TOKENS = 10  # past this many positions a phone shows the graph at a readable width, scrolled sideways


def routes_figure(graph: RouteGraph, tokens: list[str], n_layers: int, mlp, position: int,
                  font_size: int = 12) -> go.Figure:
    """graph: the route (analysis.routes.route_graph); tokens: the t positions' labels; mlp (L, t): the
    feed-forward's importance at each node after layer 1 … L (the embeddings, layer 0, have none)."""
    t = len(tokens)
    mlp = np.asarray(mlp, dtype=np.float64)
    if mlp.shape != (n_layers, t):
        raise ValueError(f"mlp must be (layers, tokens) = {(n_layers, t)}, got {mlp.shape}")
    names = token_labels(tokens)
    traces = []
    for kind in ("residual", "attention"):
        for w, width in enumerate(WIDTHS):
            low, high = w / len(WIDTHS), (w + 1) / len(WIDTHS)
            chosen = [e for e in graph.edges if e.kind == kind and low < e.weight <= high + 1e-9]
            if not chosen:
                continue
            x, y = [], []
            for e in chosen:
                x += [e.source, e.target, None]
                y += [e.layer - 1, e.layer, None]
            traces.append(dict(type="scatter", mode="lines", x=x, y=y, hoverinfo="skip", showlegend=False,
                               line=dict(color=KIND_COLOURS[kind], width=width), opacity=0.75))
    # the edges' hover sits at their middles
    mids = [e for e in graph.edges]
    if mids:
        traces.append(dict(
            type="scatter", mode="markers", x=[(e.source + e.target) / 2 for e in mids],
            y=[e.layer - 0.5 for e in mids], marker=dict(size=8, color="rgba(0,0,0,0)"), showlegend=False,
            hovertemplate="%{text}<extra></extra>",
            text=[(f"layer {e.layer} attention: {names[e.source]} → {names[e.target]}: {e.weight:.2f}"
                   f"<br>largest head: {e.layer}.{e.head + 1} ({e.head_weight:.2f})") if e.kind == "attention"
                  else f"layer {e.layer} residual: {names[e.target]} kept {e.weight:.2f}" for e in mids]))
    nodes = sorted(graph.nodes)
    colour = [mlp[l - 1, i] if l > 0 else 0.0 for l, i in nodes]
    traces.append(dict(
        type="scatter", mode="markers", x=[i for _, i in nodes], y=[l for l, _ in nodes], showlegend=False,
        marker=dict(size=[16 if (l, i) == (n_layers, position) else 11 for l, i in nodes], color=colour,
                    cmin=0, cmax=1, colorscale=NODE_SCALE, line=dict(color="black", width=1),
                    colorbar=dict(title=dict(text="feed-forward share"), thickness=12, len=0.9)),
        text=[f"{names[i]} after layer {l}" + (f"<br>feed-forward share: {mlp[l - 1, i]:.2f}" if l > 0 else
                                               " (the embedding)") for l, i in nodes],
        hovertemplate="%{text}<extra></extra>"))
    title = (f"Routes into “{token_label(tokens[position])}” (position {position + 1}), edges ≥ "
             f"{graph.threshold:.2f}")
    layer_names = ["embeddings"] + [f"layer {l}" for l in range(1, n_layers + 1)]
    height = int(max(320, (n_layers + 1) * max(18, 2 * font_size) + 140 + 5 * font_size))
    layout = dict(
        title=dict(text=title, x=0.01, y=1, yref="container", yanchor="top", pad=dict(t=12),
                   font=dict(size=font_size + 4)),
        height=height, font=dict(size=font_size), paper_bgcolor="white", plot_bgcolor="white",
        margin=dict(l=row_label_margin(layer_names, font_size), r=10, t=60 + 2 * font_size, b=10 + 5 * font_size),
        hoverlabel=dict(font=dict(size=font_size + 2)),
        shapes=[dict(type="rect", x0=position - 0.4, x1=position + 0.4, y0=n_layers - 0.4, y1=n_layers + 0.4,
                     line=dict(color=HIGHLIGHT, width=2))],
        xaxis=dict(tickmode="array", tickvals=list(range(t)), ticktext=names, tickangle=-45, showgrid=False,
                   range=[-0.6, t - 0.4], automargin=False, zeroline=False),
        yaxis=dict(tickmode="array", tickvals=list(range(n_layers + 1)), ticktext=layer_names, showgrid=True,
                   gridcolor="#f0f0f0", range=[-0.6, n_layers + 0.6], automargin=False, zeroline=False),
        meta=dict(alt=routes_alt(graph, names, position, title), wide=t > WIDE_TOKENS),
    )
    return figure(traces, layout)
