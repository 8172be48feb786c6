"""A row of matrices side by side, each with its own colour scale: for the lecture views
that put vectors (tokens × dimensions), raw scores and weights next to each other.

viz.heatmap draws attention weights (always 0..1); this draws any matrix, with a
diverging scale centred on 0 for signed values. Axes that list tokens sit on integer
positions with escaped labels (viz.labels); NaN cells show the grey background, which
the views use for masked (-inf) scores.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.heatmap import COLORSCALE, MASKED_COLOR
from viz.labels import axis_ticks, token_labels

DIVERGING = "RdBu_r"  # negative blue, positive red, 0 white


@dataclass
class Panel:
    """One matrix to draw.

    z       (rows, cols) values; NaN cells are drawn blank (grey)
    title   written above the panel
    rows    labels for the rows (tokens) or None for numbered rows
    cols    labels for the columns (tokens) or None for numbered columns (dimensions)
    signed  True: diverging colours centred on 0; False: 0..1 weights in blues
    value   what a cell holds, for the hover ("score", "weight", "value")
    """

    z: np.ndarray
    title: str
    rows: list | None = None
    cols: list | None = None
    signed: bool = True
    value: str = "value"
    row_title: str = ""
    col_title: str = ""


def _hover(panel: Panel) -> tuple[np.ndarray, str]:
    n_rows, n_cols = panel.z.shape
    row_names = token_labels(panel.rows) if panel.rows is not None else [f"#{i}" for i in range(n_rows)]
    col_names = token_labels(panel.cols) if panel.cols is not None else [f"dim {j}" for j in range(n_cols)]
    text = np.array([[f"{r} · {c}" for c in col_names] for r in row_names], dtype=object)
    return text, f"%{{text}}<br>{panel.value}: %{{z:.3f}}<extra></extra>"


def heatmap_row(panels: list[Panel], title: str = "", font_size: int = 12, height: int | None = None,
                colorbars: bool = True, spacing: float = 0.06) -> go.Figure:
    """Panels left to right, each with its own colour scale (its colour bar below it).

    Every panel's z must be 2-D and match its row/column label counts; raises ValueError
    naming the panel otherwise."""
    if not panels:
        raise ValueError("heatmap_row needs at least one panel")
    for p in panels:
        z = np.asarray(p.z)
        if z.ndim != 2:
            raise ValueError(f"panel {p.title!r}: z must be 2-D (rows, cols), got shape {z.shape}")
        if p.rows is not None and len(p.rows) != z.shape[0]:
            raise ValueError(f"panel {p.title!r}: {len(p.rows)} row labels for {z.shape[0]} rows")
        if p.cols is not None and len(p.cols) != z.shape[1]:
            raise ValueError(f"panel {p.title!r}: {len(p.cols)} column labels for {z.shape[1]} columns")
    n = len(panels)
    fig = make_subplots(rows=1, cols=n, subplot_titles=[p.title for p in panels], horizontal_spacing=spacing)
    for i, p in enumerate(panels, start=1):
        z = np.asarray(p.z, dtype=np.float32)
        finite = z[np.isfinite(z)]
        if p.signed:
            reach = float(np.abs(finite).max()) if finite.size else 1.0
            reach = reach if reach > 0 else 1.0
            scale = dict(zmin=-reach, zmax=reach, colorscale=DIVERGING)
        else:
            scale = dict(zmin=0.0, zmax=1.0, colorscale=COLORSCALE)
        domain = fig.layout[f"xaxis{'' if i == 1 else i}"].domain
        bar = dict(orientation="h", x=(domain[0] + domain[1]) / 2, xanchor="center", len=(domain[1] - domain[0]),
                   y=-0.04, yanchor="top", thickness=10, tickfont=dict(size=max(9, font_size - 2)))
        text, template = _hover(p)
        fig.add_trace(go.Heatmap(z=z, x=np.arange(z.shape[1]), y=np.arange(z.shape[0]), text=text,
                                 hovertemplate=template, colorbar=bar, showscale=colorbars, name=p.title, **scale),
                      row=1, col=i)
        x_ticks = dict(**axis_ticks(p.cols), tickangle=-60) if p.cols is not None else {}
        y_ticks = axis_ticks(p.rows) if p.rows is not None else {}
        fig.update_xaxes(row=1, col=i, side="top", showgrid=False, title_text=p.col_title, **x_ticks)
        fig.update_yaxes(row=1, col=i, autorange="reversed", showgrid=False, title_text=p.row_title, **y_ticks)
    n_rows = max(np.asarray(p.z).shape[0] for p in panels)
    height = height or int(min(900, max(360, 18 * n_rows * (1 + font_size / 40) + 260)))
    fig.update_annotations(font_size=font_size + 1, yshift=40 + font_size)
    fig.update_layout(
        title=dict(text=title, x=0.01, font=dict(size=font_size + 4)), height=height, font=dict(size=font_size),
        margin=dict(l=10, r=10, t=110 + 3 * font_size, b=60 if colorbars else 10),
        plot_bgcolor=MASKED_COLOR, paper_bgcolor="white", hoverlabel=dict(font_size=font_size + 2),
    )
    return fig
