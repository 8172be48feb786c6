"""Rotary positions (RoPE) drawn: a query/key pair turned by position, and the score along a text.

Takes an analysis.rotary.RotaryDemo (numbers only) and returns Plotly figures.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figure import figure
from viz.labels import token_label
from viz.qk import KEY_COLOR, QUERY_COLOR  # one colour for queries and one for keys in every view

ADDED_COLOR = "#7f7f7f"
SHOWN_SHIFT = 2  # the pair moved this far in the rotation figure: small, so the turn stays visible
KEY_POSITIONS = 64  # the offset figure slides the pair of tokens over this many key positions


def _two_panels(titles: list[str], spacing: float) -> dict:
    """The layout of two plots side by side, each titled above (as plotly's make_subplots lays them out, built
    as plain data: make_subplots and its checks cost ~25 ms a figure, on every click)."""
    width = (1 - spacing) / 2
    domains = [[0.0, width], [1 - width, 1.0]]
    layout = {"annotations": [dict(text=title, x=sum(domain) / 2, xanchor="center", xref="paper", y=1.0,
                                   yanchor="bottom", yref="paper", showarrow=False, font=dict(size=16))
                              for title, domain in zip(titles, domains)]}
    for col, domain in enumerate(domains, start=1):
        suffix = "" if col == 1 else str(col)
        # automargin: the tick labels and axis titles get the room they need (plotly.py's default template)
        layout[f"xaxis{suffix}"] = dict(anchor=f"y{suffix}", domain=domain, automargin=True)
        layout[f"yaxis{suffix}"] = dict(anchor=f"x{suffix}", domain=[0.0, 1.0], automargin=True)
    return layout


def _arrow(x, y, color, name, col, dash=None, showlegend=True) -> dict:
    suffix = "" if col == 1 else str(col)
    return dict(type="scatter", x=[0, x], y=[0, y], mode="lines+markers", name=name, legendgroup=name,
                showlegend=showlegend, line=dict(color=color, width=3, dash=dash),
                marker=dict(size=[0, 10], color=color, symbol="circle"), xaxis=f"x{suffix}", yaxis=f"y{suffix}",
                hovertemplate=f"{name}<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>")


def _angle(a: tuple[float, float], b: tuple[float, float]) -> float:
    """The angle from b to a, in degrees, in (−180, 180]."""
    turn = np.degrees(np.arctan2(a[1], a[0]) - np.arctan2(b[1], b[0]))
    return float((turn + 180) % 360 - 180)


def rotation_figure(demo, pair: int = 0, font_size: int = 12, max_height: int | None = None) -> go.Figure:
    """Pair `pair` of the query and the key (dimensions i and i + d/2) at positions (m, n) and at (m + s, n + s):
    both arrows turn by s·ω_i more, so the angle between them, and their product, stay the same.
    max_height: the most the figure may take (presenter mode's first screen): smaller panels, the same words."""
    m, n, s = demo.query_pos, demo.key_pos, SHOWN_SHIFT
    half = demo.d // 2
    speed = float(demo.speeds[pair])
    q0, k0 = (demo.q[pair], demo.q[pair + half]), (demo.k[pair], demo.k[pair + half])
    places = ((m, n), (m + s, n + s))
    turned = [(demo.pair(demo.q, pair, a), demo.pair(demo.k, pair, b)) for a, b in places]
    # positions counted from 1, as every view counts them; m and n (the turns) count from 0, as RoPE does
    titles = [(f"positions {a + 1} and {b + 1}{'' if i == 0 else f': both moved {s} on'}<br>query turned "
               f"{np.degrees(a * speed) % 360:.0f}°, key {np.degrees(b * speed) % 360:.0f}°; angle between "
               f"{abs(_angle(qa, kb)):.1f}°, adds {qa[0] * kb[0] + qa[1] * kb[1]:.3f} to q·k")
              for i, ((a, b), (qa, kb)) in enumerate(zip(places, turned))]
    layout = _two_panels(titles, 0.08)
    extent = 1.15 * max(np.hypot(*q0), np.hypot(*k0), 1e-6)
    query, key = token_label(demo.query_token), token_label(demo.key_token)
    data = []
    for col, (qa, kb) in enumerate(turned, start=1):
        first, suffix = col == 1, "" if col == 1 else str(col)
        data += [_arrow(*q0, QUERY_COLOR, "query, before turning", col, dash="dot", showlegend=first),
                 _arrow(*k0, KEY_COLOR, "key, before turning", col, dash="dot", showlegend=first),
                 _arrow(*qa, QUERY_COLOR, f"query of {query}, turned by its position", col, showlegend=first),
                 _arrow(*kb, KEY_COLOR, f"key of {key}, turned by its position", col, showlegend=first)]
        layout[f"xaxis{suffix}"].update(range=[-extent, extent], zeroline=True, title=dict(text=f"dimension {pair}"))
        layout[f"yaxis{suffix}"].update(range=[-extent, extent], zeroline=True, scaleanchor=f"x{suffix}",
                                        title=dict(text=f"dimension {pair + half}"))
    layout.update(
        title=dict(text=(f"One pair of dimensions of layer 1, head {demo.head + 1}: turned by position · ω "
                         f"(ω = {speed:.3g} radian per position)"), x=0.01, font=dict(size=font_size + 4)),
        height=min(560 + 4 * font_size, max_height or 10_000), font=dict(size=font_size), paper_bgcolor="white",
        plot_bgcolor="white",
        # the legend at the figure's foot, in the bottom margin: at y = -0.2 of the plot it sat on "dimension 0"
        margin=dict(l=10, r=10, t=110 + 3 * font_size, b=20 + 5 * font_size),
        legend=dict(orientation="h", x=0, y=0, yref="container", yanchor="bottom"),
    )
    return figure(data, layout)


def offset_figure(demo, offsets: tuple[int, ...] | None = None, font_size: int = 12) -> go.Figure:
    """The score of the same query and key slid along a text at fixed offsets: flat with rotary positions,
    waving with sinusoids added. x: the key's position n; the query stands at n + offset."""
    offsets = offsets or tuple(sorted({1, demo.offset, demo.offset + 4}))
    positions = np.arange(KEY_POSITIONS)
    layout = _two_panels(["rotary: q and k turned by position", "sinusoids added to q and k instead"], 0.1)
    colors = ["#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    data = []
    for offset, color in zip(offsets, colors):
        name = f"offset {offset}"
        rotary = [demo.score(n + offset, n) for n in positions]
        added = [demo.added_score(n + offset, n) for n in positions]
        for col, y in ((1, rotary), (2, added)):
            suffix = "" if col == 1 else str(col)
            data.append(dict(type="scatter", x=positions, y=np.asarray(y, dtype=np.float64), mode="lines", name=name,
                             legendgroup=name, showlegend=col == 1, line=dict(color=color, width=2),
                             xaxis=f"x{suffix}", yaxis=f"y{suffix}",
                             hovertemplate=f"{name}: key at %{{x}}, query at %{{x}}+{offset}<br>"
                                           "q·k = %{y:.4f}<extra></extra>"))
    for suffix in ("", "2"):
        layout[f"xaxis{suffix}"]["title"] = dict(text="key position n (query at n + offset)")
    layout["yaxis"]["title"] = dict(text="score q·k")
    layout.update(
        title=dict(text="The same two tokens slid along a text: only the offset matters with rotary positions",
                   x=0.01, font=dict(size=font_size + 4)),
        height=420, font=dict(size=font_size), paper_bgcolor="white",
        margin=dict(l=10, r=10, t=70 + 2 * font_size, b=10),
    )
    return figure(data, layout)
