"""Attention weight beside what flows: one head's α and its ‖α·W_O v‖ shares, and the two rollouts.

Numbers from analysis.flow; drawn as viz.panels rows (each matrix with its own colour bar, 0..1)."""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from viz.describe import plain
from viz.figure import figure
from viz.heatmap import HIGHLIGHT, max_pool, pool_block
from viz.panels import Panel, heatmap_row


def _masked(values, mask):
    values = np.asarray(values, dtype=np.float32)
    return values if mask is None else np.where(mask, values, np.float32(np.nan))


def pooled(z, rows, cols, mask=None):
    """(z, row labels, column labels, k): past TILE_CELLS tokens a (t, s) map max-pooled in k × k blocks as the
    every-head grid's tiles are (a 504-token map was 254k cells with a hover string each: 8.5 MB a figure,
    drawn as near-white noise), each block named by its first and last token; a block wholly masked stays
    blank. Unpooled (k = 1) the map as it is, masked cells NaN."""
    z = np.asarray(z, dtype=np.float32)
    block = pool_block(max(z.shape))
    if block == 1:
        return _masked(z, mask), rows, cols, 1
    out = max_pool(z, block, mask)
    if mask is not None:
        out[max_pool(np.asarray(mask, dtype=np.float32), block) == 0] = np.nan
    return out, block_names(rows, block), block_names(cols, block), block


def block_names(labels, block: int) -> list[str]:
    """Each block of `block` tokens named by its first and last, with its positions counted from 1:
    "the…mat (9–16)"."""
    labels = [str(x) for x in labels]
    return [f"{labels[start]}…{labels[min(start + block, len(labels)) - 1]} "
            f"({start + 1}–{min(start + block, len(labels))})" for start in range(0, len(labels), block)]


def pooled_note(block: int, t: int) -> str:
    return ("" if block == 1 else f"<br><sub>{t} tokens: each cell is the largest of {block} × {block} token pairs "
            "(max pooling), so a one-token stripe stays visible; hover names the tokens of a block</sub>")


def head_figure(probs, shares, queries, keys, mask=None, title: str = "", font_size: int = 12) -> go.Figure:
    """probs (t, s) one head's weights beside shares (t, s): each row's ‖α_ij · W_O v_j‖ as shares of the row.
    shares None (quiz mode): the weights alone, with no panel for what is hidden (an empty map with a 0..1 colour
    bar read as "it moves nothing")."""
    weights, rows, cols, block = pooled(probs, queries, keys, mask)
    panels = [Panel(weights, "weight α<br>(where it looks)", rows, cols, signed=False,
                    value="weight", row_title="queries", col_title="keys")]
    if shares is not None:
        panels.append(Panel(pooled(shares, queries, keys, mask)[0], "share of ‖α·W_O v‖<br>(what it moves)", rows,
                            cols, signed=False, value="share of norm", col_title="keys"))
    return heatmap_row(panels, title=title + pooled_note(block, len(queries)), font_size=font_size)


def rollout_figure(attention_rollout, norm_rollout, tokens, title: str = "", font_size: int = 12) -> go.Figure:
    """Two (t, t) rollouts side by side: by attention weight and by norm, on one colour scale (0 to the larger
    maximum: a rollout's shares are small, and on 0..1 they would all look white)."""
    top = float(max(np.max(attention_rollout), np.max(norm_rollout)))
    by_weight, rows, cols, block = pooled(attention_rollout, tokens, tokens)
    return heatmap_row([
        Panel(by_weight, "attention rollout (weights)", rows, cols, signed=False, value="share",
              row_title="final position", col_title="input token", zmax=top),
        Panel(pooled(norm_rollout, tokens, tokens)[0], "norm-based rollout (‖α·W_O v‖)", rows, cols, signed=False,
              value="share", col_title="input token", zmax=top),
    ], title=title + pooled_note(block, len(tokens)), font_size=font_size)


def sink_figure(weight, norm, special_name: str, font_size: int = 12, selected: tuple[int, int] | None = None) -> go.Figure:
    """One point per head: its share of weight on the special tokens (x) against its share of norm there (y).
    A head on the diagonal moves as much as it looks; a sink head sits far below it."""
    weight, norm = np.asarray(weight, dtype=np.float64), np.asarray(norm, dtype=np.float64)
    layers, heads = weight.shape
    names = [f"L{l + 1} H{h + 1}" for l in range(layers) for h in range(heads)]
    name = html.escape(special_name)
    points = dict(type="scatter", mode="markers", x=weight.ravel(), y=norm.ravel(), text=names,
                  marker=dict(size=max(8, font_size * 0.8), color="#1f77b4", opacity=0.75),
                  hovertemplate="%{text}<br>weight on " + name + ": %{x:.2f}<br>norm on " + name + ": %{y:.2f}<extra></extra>",
                  showlegend=False)
    traces = [dict(type="scatter", mode="lines", x=[0, 1], y=[0, 1], line=dict(color="#999", dash="dot"),
                   hoverinfo="skip", showlegend=False), points]
    if selected is not None:
        l, h = selected
        traces.append(dict(type="scatter", mode="markers", x=[weight[l, h]], y=[norm[l, h]], hoverinfo="skip",
                           marker=dict(size=max(14, font_size * 1.3), color="rgba(0,0,0,0)",
                                       line=dict(color=HIGHLIGHT, width=3)), showlegend=False))
    layout = dict(
        title=dict(text=f"Every head: share of weight vs share of norm on {name}", x=0.01, y=1, yref="container",
                   yanchor="top", pad=dict(t=12), font=dict(size=font_size + 4)),
        height=380 + 6 * font_size, font=dict(size=font_size), paper_bgcolor="white", plot_bgcolor="#f7f7f7",
        margin=dict(l=60 + 2 * font_size, r=20, t=50 + 2 * font_size, b=50 + 2 * font_size),
        xaxis=dict(range=[-0.02, 1.02], title=dict(text=f"share of attention weight on {name}"), zeroline=False),
        yaxis=dict(range=[-0.02, 1.02], title=dict(text=f"share of ‖α·W_O v‖ on {name}"), zeroline=False),
        hoverlabel=dict(font=dict(size=font_size + 2)),
        meta=dict(alt=sink_alt(weight, norm, special_name, names, selected)),
    )
    return figure(traces, layout)


def sink_alt(weight, norm, special_name: str, names, selected=None) -> str:
    """The scatter in words: how many heads park half their weight on the special tokens, what they move there,
    the head farthest below the diagonal and the selected head, from the points drawn."""
    # plain() reads figure text, where a token is escaped: "<s>" unescaped would read as a tag and vanish
    name, w, n = plain(html.escape(special_name)), weight.ravel(), norm.ravel()
    sinks = w >= 0.5
    said = (f"Every head: share of weight vs share of norm on {name} (the norm of ‖α·W_O v‖), one point per head "
            f"({w.size} heads). {int(sinks.sum())} of them put at least half their weight on {name}")
    if sinks.any():
        said += f", and move on average {n[sinks].mean():.2f} of their norm there against {w[sinks].mean():.2f} of their weight"
    far = int(np.argmax(w - n))
    said += (f". Farthest below the diagonal (weight without norm): {names[far]}, weight {w[far]:.2f}, "
             f"norm {n[far]:.2f}.")
    if selected is not None:
        l, h = selected
        said += f" The head chosen, L{l + 1} H{h + 1}: weight {weight[l, h]:.2f}, norm {norm[l, h]:.2f}."
    return said
