"""Generation step by step (analysis/generation.py, experiments/generation.py): the new query's attention row for one
head, every head of a layer as a strip, and the key/value cache as a block growing per layer.

Every figure writes its text alternative (layout.meta.alt) from the numbers it draws."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.describe import plain
from viz.figure import colorscale, figure
from viz.labels import axis_ticks, every_labelled, token_label, token_labels

NEW, KEPT, DROPPED = "#d95f02", "#4292c6", "#d9d9d9"
# the cache figure's cells: not yet read, dropped by the window, kept, added by this step
STATES = {"empty": 0.0, "dropped": 1.0, "kept": 2.0, "new": 3.0}
CACHE_COLOURS = [[0.0, "#ffffff"], [0.2, "#ffffff"], [0.2, DROPPED], [0.45, DROPPED], [0.45, KEPT], [0.7, KEPT],
                 [0.7, NEW], [1.0, NEW]]


def _layout(title: str, font_size: int, height: int, **more) -> dict:
    return dict(title=dict(text=title, x=0.01, y=1, yref="container", yanchor="top", pad=dict(t=10),
                           font=dict(size=font_size + 3)),
                height=height, font=dict(size=font_size), paper_bgcolor="white", plot_bgcolor="white",
                margin=dict(l=60 + 3 * font_size, r=20, t=60 + 2 * font_size, b=40 + 5 * font_size),
                hoverlabel=dict(font=dict(size=font_size + 2)), **more)


def _said(token) -> str:
    """A token as a screen reader should say it (markup in a token is text, not dropped)."""
    return plain(token_label(token))


def row_alt(row, tokens, query: int, kept_from: int, what: str) -> str:
    """The row's reading: the key with the most weight, and the window's dropped keys."""
    row = np.asarray(row, dtype=np.float64)
    top = int(np.argmax(row))
    said = (f"{what}: the new query (token {_said(tokens[query])}, position {query + 1}) reads {len(row) - kept_from} "
            f"keys and puts most weight, {row[top]:.2f}, on {_said(tokens[top])} (position {top + 1})")
    return said + (f"; positions 1 to {kept_from} have fallen out of the window" if kept_from else "") + "."


def row_figure(row, tokens, kept_from: int = 0, title: str = "", font_size: int = 12) -> go.Figure:
    """row (n,): one head's weights of the newest query (position n − 1) over key positions 0 … n − 1; tokens:
    the n tokens. Keys before kept_from have fallen out of a sliding window (drawn grey, weight 0)."""
    row = np.asarray(row, dtype=np.float32)
    n = len(row)
    if len(tokens) != n:
        raise ValueError(f"row_figure: {n} weights for {len(tokens)} tokens; give one token per key position")
    colours = [DROPPED if i < kept_from else NEW if i == n - 1 else KEPT for i in range(n)]
    labels = token_labels(tokens)
    # positions are counted from 1 wherever a student reads them (docs/tokens.md): bar i stands at i + 1
    trace = dict(type="bar", x=np.arange(1, n + 1), y=row, marker=dict(color=colours), text=labels,
                 textposition="none", hovertemplate="%{text} (position %{x}): %{y:.3f}<extra></extra>")
    layout = _layout(title, font_size, 300 + 6 * font_size,
                     xaxis=dict(**axis_ticks(tokens, offset=1), tickangle=-45, automargin=False),
                     yaxis=dict(title=dict(text="attention weight"), range=[0, 1], gridcolor="#eee"))
    layout["meta"] = dict(alt=row_alt(row, tokens, n - 1, kept_from, plain(title) or "Attention row"))
    return figure([trace], layout)


def strip_figure(rows, tokens, groups: int = 1, kept_from: int = 0, title: str = "", font_size: int = 12,
                 hidden: bool = False) -> go.Figure:
    """rows (h, n): every head's row for the newest query, one line per head (a compact strip). groups: query
    heads per key/value head (grouped-query attention), named on each line. hidden: the weights are left out
    (quiz mode), the strip's frame stays."""
    rows = np.asarray(rows, dtype=np.float32)
    h, n = rows.shape
    names = [f"H{i + 1}" + (f" (kv {i // groups + 1})" if groups > 1 else "") for i in range(h)]
    z = np.full_like(rows, np.nan) if hidden else np.where(np.arange(n)[None, :] < kept_from, np.nan, rows)
    trace = dict(type="heatmap", z=z, x=np.arange(n), y=np.arange(h), zmin=0, zmax=1, colorscale=colorscale("Blues"),
                 customdata=np.array([[t] * h for t in token_labels(tokens)]).T if n else None,
                 hovertemplate="%{customdata}: %{z:.3f}<extra></extra>", colorbar=dict(thickness=10, len=0.9))
    # a line per head as tall as its label needs (the margins _layout sets come on top)
    layout = _layout(title, font_size, int(h * max(22, 1.4 * font_size) + 100 + 7 * font_size),
                     xaxis=dict(**axis_ticks(tokens), tickangle=-45, automargin=False),
                     yaxis=dict(tickmode="array", tickvals=list(range(h)), ticktext=names, autorange="reversed"))
    if hidden:
        alt = f"{plain(title)}: hidden until Reveal."
    else:
        tops = rows.argmax(axis=1)
        alt = f"{plain(title)}: " + "; ".join(f"{names[i]} most on {_said(tokens[tops[i]])} ({rows[i, tops[i]]:.2f})"
                                               for i in range(min(h, 12))) + ("; …" if h > 12 else "") + "."
    layout["meta"] = dict(alt=alt)
    return figure([trace], layout)


def cache_cells(n_layers: int, kv_heads: int, total: int, seen: int, kept_from: int, new: int) -> np.ndarray:
    """(layers · kv heads, total) cell states (STATES): positions before kept_from dropped, kept_from … seen − 1
    kept, the last `new` of them added by this step, the rest not read yet."""
    row = np.full(total, STATES["empty"])
    row[:seen] = STATES["kept"]
    row[:kept_from] = STATES["dropped"]
    row[max(kept_from, seen - new):seen] = STATES["new"]
    return np.tile(row, (n_layers * kv_heads, 1))


def kv_head_name(kv: int, groups: int) -> str:
    """Key/value head kv (0-based) and the query heads it serves, from 1: "kv head 2 · query heads 4–6"."""
    if groups == 1:
        return f"kv head {kv + 1} · query head {kv + 1}"
    return f"kv head {kv + 1} · query heads {kv * groups + 1}–{kv * groups + groups}"


def cache_figure(n_layers: int, kv_heads: int, groups: int, total: int, seen: int, kept_from: int, new: int,
                 cache_bytes: int, per_token: int, title: str = "", font_size: int = 12) -> go.Figure:
    """The key/value cache after a step: one panel per key/value head, named once with the query heads it serves;
    in each a line per layer (layer 1 at the top) and a cell per position from 1 (a key and a value), coloured
    kept / added by this step / dropped by the window / not read yet; `total` positions wide (the whole
    generation), so the block grows step by step. groups: query heads sharing each key/value head.
    One trace: the panels are columns of one matrix with blank gaps (as viz.heatmap's tiles)."""
    row = cache_cells(1, 1, total, seen, kept_from, new)[0]
    gap = max(1, round(0.08 * total))
    step = total + gap
    width = kv_heads * step - gap
    z = np.full((n_layers, width), np.nan)
    for kv in range(kv_heads):
        z[:, kv * step:kv * step + total] = row
    labels = {v: k for k, v in STATES.items()}
    panel_of = np.array([kv if j - kv * step < total else -1 for kv in range(kv_heads) for j in
                         range(kv * step, kv * step + step)][:width])
    at = [j - kv * step for j, kv in enumerate(panel_of)]  # the position in its panel, from 0
    text = np.array([[f"layer {layer + 1} · {kv_head_name(panel_of[j], groups)} · position {at[j] + 1}: "
                      f"{labels[float(row[at[j]])]}" if panel_of[j] >= 0 else ""
                      for j in range(width)] for layer in range(n_layers)], dtype=object)
    trace = dict(type="heatmap", z=z, x=np.arange(width), y=np.arange(n_layers), zmin=0, zmax=3,
                 colorscale=CACHE_COLOURS, showscale=False, xgap=1 if 900 / max(width, 1) >= 6 else 0,
                 ygap=1 if n_layers <= 40 else 0, text=text, hoverongaps=False,
                 hovertemplate="%{text}<extra></extra>")
    # position ticks in every panel: 1 and every k-th, k so that the labels of all the panels stand apart
    every = next(k for k in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if kv_heads * total / k <= 24 or k == 1000)
    shown = [1] + list(range(every, total + 1, every)) if every > 1 else list(range(1, total + 1))
    tickvals = [kv * step + p - 1 for kv in range(kv_heads) for p in shown if p <= total]
    ticktext = [str(p) for kv in range(kv_heads) for p in shown if p <= total]
    # the layers: every one labelled where a line is tall enough for its label, else every k-th, and the title says so
    line_px = max(6, min(22, 480 / max(n_layers, 1)))
    layer_step = 1 if line_px >= 1.3 * font_size else int(np.ceil(1.3 * font_size / line_px))
    layer_ticks = list(range(0, n_layers, layer_step))
    annotations = [dict(x=kv * step + (total - 1) / 2, y=-0.6, xref="x", yref="y", yanchor="bottom", showarrow=False,
                        text="<br>".join(f"<b>{part}</b>" for part in
                                         kv_head_name(kv, groups).replace("query heads", "queries").split(" · ")),
                        font=dict(size=font_size))  # two lines: three panels' names stand apart on a phone
                   for kv in range(kv_heads)]
    top, bottom = 60 + 6 * font_size, 40 + 5 * font_size  # the panels' two-line names; the positions and their title
    layout = _layout(title, font_size, int(n_layers * line_px + top + bottom), annotations=annotations,
                     xaxis=dict(title=dict(text="position (one key and one value per cell)"), range=[-0.5, width - 0.5],
                                tickmode="array", tickvals=tickvals, ticktext=ticktext, showgrid=False, zeroline=False),
                     yaxis=dict(tickmode="array", tickvals=layer_ticks, ticktext=[f"L{i + 1}" for i in layer_ticks],
                                autorange="reversed", showgrid=False, zeroline=False,
                                title=dict(text="layer" + every_labelled(layer_step))))
    layout["margin"].update(l=int(font_size * 5.5), t=top, b=bottom)
    kept = seen - kept_from
    alt = (f"{plain(title) or 'The key/value cache'}: {kept} positions kept in each of {n_layers} layers × {kv_heads} "
           f"key/value heads ({'; '.join(kv_head_name(kv, groups) for kv in range(kv_heads))}), {cache_bytes:,} bytes "
           f"({kept} × {per_token:,} bytes per token)"
           + (f"; positions 1 to {kept_from} dropped by the sliding window" if kept_from else "") + ".")
    layout["meta"] = dict(alt=alt)
    return figure([trace], layout)
