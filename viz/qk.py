"""One head's queries and keys as points on two axes (analysis.qk.project), a line from each query to
the key it weights most."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.describe import plain
from viz.figure import figure
from viz.labels import kept_apart, plot_scale, token_labels

QUERY_COLOR, KEY_COLOR = "#1f77b4", "#d62728"
PLOT_ASPECTS = (1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0)  # widths over height the labels are kept apart at


def qk_figure(queries_2d, keys_2d, explained, strongest, queries, keys, title: str = "", font_size: int = 12,
              lines: bool = True) -> go.Figure:
    """queries_2d (t, 2), keys_2d (s, 2); explained (2,) shares of variance; strongest (t,) key index per query.
    lines=False leaves out the line from each query to its strongest key (quiz mode: that is the answer)."""
    q2, k2 = np.asarray(queries_2d, dtype=np.float64), np.asarray(keys_2d, dtype=np.float64)
    q_names, k_names = token_labels(queries), token_labels(keys)
    lines_x, lines_y = [], []
    for i, j in enumerate(strongest):
        lines_x += [q2[i, 0], k2[j, 0], None]
        lines_y += [q2[i, 1], k2[j, 1], None]
    mode = "markers+text" if len(q2) + len(k2) <= 80 else "markers"
    size = max(9, font_size * 0.8)
    # each point's label where it meets no other (queries first, then keys, each on the side of its point that is
    # free), else left to the hover: two tokens whose vectors nearly coincide wrote one label on the other. The plot
    # is as wide as the page gives it, at least as wide as it is tall (its axes share one scale): the labels are kept
    # apart at each width from square to 3 times as wide (presenter mode at 1280 px draws 2.4), which sets the scale
    # where the points spread wider than tall (a pair kept apart for a square plot met in a 1068 × 440 one)
    height = 520 + 8 * font_size
    plot_px = height - (70 + 4 * font_size) - (50 + 2 * font_size)
    xs, ys = np.r_[q2[:, 0], k2[:, 0]], np.r_[q2[:, 1], k2[:, 1]]
    scale = [plot_scale(xs, ys, aspect * plot_px, plot_px, square=True) for aspect in PLOT_ASPECTS]
    q_text, k_text = [f"q {n}" for n in q_names], [f"k {n}" for n in k_names]
    sides = ("top center", "bottom center", "middle right", "middle left")
    placed = kept_apart([*map(tuple, q2), *map(tuple, k2)], [plain(t) for t in q_text + k_text], font_size, scale,
                        sides)
    q_where, k_where = placed[:len(q2)], placed[len(q2):]
    traces = [
        dict(type="scatter", mode="lines", x=lines_x, y=lines_y, line=dict(color="#bbb", width=1.5),
             hoverinfo="skip", name="query → its strongest key"),
        dict(type="scatter", mode=mode, x=q2[:, 0], y=q2[:, 1], name="queries (looking)",
             text=[t if w else "" for t, w in zip(q_text, q_where)], textposition=[w or "top center" for w in q_where],
             customdata=q_text,
             marker=dict(symbol="circle", size=size, color=QUERY_COLOR), textfont=dict(color=QUERY_COLOR),
             hovertemplate="query %{customdata}<extra></extra>"),
        dict(type="scatter", mode=mode, x=k2[:, 0], y=k2[:, 1], name="keys (looked at)",
             text=[t if w else "" for t, w in zip(k_text, k_where)], textposition=[w or "bottom center" for w in k_where],
             customdata=k_text,
             marker=dict(symbol="diamond", size=size, color=KEY_COLOR), textfont=dict(color=KEY_COLOR),
             hovertemplate="key %{customdata}<extra></extra>"),
    ]
    if not lines:
        traces = traces[1:]  # the lines would give the answer away
    layout = dict(
        title=dict(text=title, x=0.01, y=1, yref="container", yanchor="top", pad=dict(t=12), font=dict(size=font_size + 4)),
        height=height, font=dict(size=font_size), paper_bgcolor="white", plot_bgcolor="#f7f7f7",
        # the legend above the plot, under the title: below it, it sat on the x axis's title
        margin=dict(l=60 + 2 * font_size, r=20, t=70 + 4 * font_size, b=50 + 2 * font_size),
        legend=dict(orientation="h", x=0, y=1.01, yanchor="bottom"),
        xaxis=dict(title=dict(text=f"axis 1 ({explained[0]:.0%} of the variance)"), zeroline=True, zerolinecolor="#ccc"),
        yaxis=dict(title=dict(text=f"axis 2 ({explained[1]:.0%})"), zeroline=True, zerolinecolor="#ccc", scaleanchor="x"),
        hoverlabel=dict(font=dict(size=font_size + 2)),
    )
    layout["meta"] = dict(alt=qk_alt(title, explained, strongest, q_names, k_names, lines))
    return figure(traces, layout)


def qk_alt(title: str, explained, strongest, q_names, k_names, lines: bool, listed: int = 6) -> str:
    """The picture in words: how much the two axes keep and, unless that is the quiz's answer, which key each
    query weights most (the commonest first), from the same numbers the lines join."""
    said = (f"{plain(title)}. {len(q_names)} queries (circles) and {len(k_names)} keys (diamonds), one per token, on "
            f"two axes that keep {explained[0]:.0%} and {explained[1]:.0%} of their spread.")
    if not lines:
        return said + " Which key each query weights most is hidden (quiz)."
    picked = np.bincount(np.asarray(strongest, dtype=int), minlength=len(k_names))
    order = [int(j) for j in np.argsort(-picked, kind="stable") if picked[j]][:3]
    common = "; ".join(f"{picked[j]} of {len(q_names)} queries weight the key “{plain(k_names[j])}” most"
                       for j in order)
    pairs = ", ".join(f"“{plain(q_names[i])}” → “{plain(k_names[int(j)])}”"
                      for i, j in list(enumerate(strongest))[-listed:])
    return f"{said} {common}. The last queries' strongest keys: {pairs}."
