"""Causal tracing as figures: the preview and the exact grid side by side, layers × positions (or × heads).

Rows are layers, the first at the bottom (the residual stream rises through the stack); columns are the positions,
labelled with the clean prompt's tokens (a position where the corrupted prompt differs is marked with *), or the
heads. A cell is the normalised logit difference with that one activation patched in: 0 is the corrupted run,
1 the clean run; red is above 0, blue below. An exact grid still being computed has its missing layers blank
(NaN). The preview is labelled an estimate, and each of its cells the exact grid shows wrong (analysis.patching.wrong_cells)
is marked ×. Numbers come from experiments/patching.py.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.describe import plain
from viz.figure import colorscale, figure
from viz.heatmap import HIGHLIGHT, row_label_margin
from viz.labels import token_label

# diverging: blue below 0, white at 0, red towards 1 (the clean answer back)
COLORSCALE = colorscale("RdBu")[::-1]
COLORSCALE = [[1 - p, c] for p, c in COLORSCALE]
GRID_PX = 200  # the most height a grid's rows take together (px), whatever its layers
CELL_NUMBERS_MAX = 24  # columns per panel up to which each cell writes its value
SITE_WORDS = {"residual": "the residual stream after the layer", "attention": "the attention's output",
              "mlp": "the feed-forward's output", "heads": "one head's output at the answer position"}


def column_labels(clean_tokens, corrupted_tokens) -> list[str]:
    """The clean prompt's tokens, a changed position marked "*"."""
    return [token_label(a) + ("*" if a != b else "") for a, b in zip(clean_tokens, corrupted_tokens)]


def _range(*grids) -> float:
    finite = [np.abs(g[np.isfinite(g)]).max() for g in grids if g is not None and np.isfinite(g).any()]
    return float(max([1.0] + finite))


def _panel(z, column_names, hover_names, axis: str, bound: float, numbers: bool, font_size: int, show_scale: bool):
    layers, columns = z.shape
    hover = np.array([[f"layer {l + 1} · {hover_names[c]}" for c in range(columns)] for l in range(layers)],
                     dtype=object)
    traces = [dict(type="heatmap", z=z.astype(np.float32), x=np.arange(columns), y=np.arange(layers),
                   xaxis=f"x{axis}", yaxis=f"y{axis}", zmin=-bound, zmax=bound, zmid=0, colorscale=COLORSCALE,
                   text=hover, hovertemplate="%{text}<br>restored: %{z:.2f}<extra></extra>", xgap=1, ygap=1,
                   showscale=show_scale, hoverongaps=False,
                   colorbar=dict(title=dict(text="restored"), thickness=12, len=0.9))]
    if numbers:
        finite = np.isfinite(z)
        ls, cs = np.nonzero(finite)
        values = z[finite]
        traces.append(dict(type="scatter", mode="text", x=cs, y=ls, xaxis=f"x{axis}", yaxis=f"y{axis}",
                           text=[f"{v + 0.0:.2f}".replace("-0.00", "0.00") for v in values], hoverinfo="skip", showlegend=False,
                           textfont=dict(size=max(8, font_size - 3),
                                         color=["white" if abs(v) > 0.6 * bound else "black" for v in values])))
    return traces


def _wrong_marks(wrong, size: float) -> list[dict]:
    """A × on each wrong cell of the preview panel (wrong: boolean (L, n))."""
    ls, cs = np.nonzero(np.asarray(wrong, dtype=bool))
    if not len(ls):
        return []
    return [dict(type="scatter", mode="markers", x=cs, y=ls, xaxis="x", yaxis="y", showlegend=False,
                 hovertemplate="the exact grid shows the preview wrong here<extra></extra>",
                 marker=dict(symbol="x-thin", size=size, color="black", line=dict(color="black", width=2)))]


def comparison_figure(preview, exact, columns: list[str], title: str, column_title: str, font_size: int = 12,
                      mark: tuple[int, int] | None = None, alt: str = "", meta: dict | None = None,
                      wrong=None) -> go.Figure:
    """Two panels, the preview (left) and the exact grid (right; None: not computed yet), each (L, n).
    columns: the n column labels (escaped). mark (layer, column), 0-based: outlined in both panels.
    meta: more of layout.meta (the heads map's clickable cells: ui/runtime/tile_click.py).
    wrong: boolean (L, n), the preview's cells the exact grid shows wrong: each marked × on the preview."""
    preview = np.asarray(preview, dtype=np.float64)
    exact_z = np.full_like(preview, np.nan) if exact is None else np.asarray(exact, dtype=np.float64)
    if exact_z.shape != preview.shape or len(columns) != preview.shape[1]:
        raise ValueError(f"the preview {preview.shape}, the exact grid {exact_z.shape} and {len(columns)} column "
                         "labels must agree")
    layers, n = preview.shape
    bound = _range(preview, exact_z)
    # rows shrink past GRID_PX of them (smollm2's 30 layers), so the figure stays whole on a 1280 x 720 presenter
    # screen; rows too short for a number draw none, and the layer names are thinned to every k-th
    row = max(22, 2.2 * font_size)
    if layers * row > GRID_PX:
        row = GRID_PX / layers
    numbers = n <= CELL_NUMBERS_MAX and row >= font_size + 4
    every = int(np.ceil(1.2 * font_size / row))
    hover_names = [plain(c) for c in columns]
    wrong = np.zeros(preview.shape, dtype=bool) if wrong is None else np.asarray(wrong, dtype=bool)
    if wrong.shape != preview.shape:
        raise ValueError(f"the wrong cells {wrong.shape} and the preview {preview.shape} must agree")
    traces = (_panel(preview, columns, hover_names, "", bound, numbers, font_size, False)
              + _panel(exact_z, columns, hover_names, "2", bound, numbers, font_size, True)
              + _wrong_marks(wrong, max(6.0, min(0.9 * row, 16.0))))
    layer_names = [f"layer {l + 1}" for l in range(layers)]
    done = int(np.isfinite(exact_z).all(axis=1).sum())
    left = "preview: an estimate" + (", × wrong" if wrong.any() else "")
    right = ("exact" if exact is not None and done == layers else
             f"exact: {done} of {layers} layers…" if exact is not None else "exact: not computed yet")
    axis = dict(tickmode="array", tickvals=list(range(n)), ticktext=columns, tickangle=-45, showgrid=False,
                automargin=False)
    shapes = []
    if mark is not None:
        l, c = mark
        for x, y in (("x", "y"), ("x2", "y2")):
            shapes.append(dict(type="rect", xref=x, yref=y, x0=c - 0.5, x1=c + 0.5, y0=l - 0.5, y1=l + 0.5,
                               line=dict(color=HIGHLIGHT, width=3)))
    height = int(max(260, layers * row + 150 + 5 * font_size))
    layout = dict(
        title=dict(text=title, x=0.01, y=1, yref="container", yanchor="top", pad=dict(t=12),
                   font=dict(size=font_size + 4)),
        height=height, font=dict(size=font_size), paper_bgcolor="white", plot_bgcolor="white", shapes=shapes,
        margin=dict(l=row_label_margin(layer_names, font_size), r=10, t=60 + 2 * font_size, b=10 + 5 * font_size),
        hoverlabel=dict(font=dict(size=font_size + 2)),
        xaxis=dict(domain=[0, 0.46], title=dict(text=column_title), **axis),
        xaxis2=dict(domain=[0.52, 0.98], title=dict(text=column_title), anchor="y2", **axis),
        yaxis=dict(tickmode="array", tickvals=list(range(0, layers, every)), ticktext=layer_names[::every],
                   showgrid=False, automargin=False),
        yaxis2=dict(anchor="x2", tickvals=list(range(layers)), showticklabels=False, showgrid=False,
                    matches="y"),
        # each panel's name starts at its left edge: a phone shows the left of a wide figure first
        annotations=[dict(text=left, x=0, xanchor="left", xref="paper", y=1.0, yref="paper",
                          yanchor="bottom", showarrow=False, font=dict(size=font_size)),
                     dict(text=right, x=0.52, xanchor="left", xref="paper", y=1.0, yref="paper", yanchor="bottom",
                          showarrow=False, font=dict(size=font_size))],
        # wide: on a phone, a readable width scrolled sideways (ui/page/accessibility.py)
        meta=dict(alt=alt, wide=True, **(meta or {})),
    )
    return figure(traces, layout)
