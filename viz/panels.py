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

from viz.figure import colorscale, figure, plain_figure
from viz.heatmap import COLORSCALE, LABEL_CHARS, MASKED_COLOR, row_label_margin
from viz.labels import MAX_TICK_LABELS, axis_ticks, label_fit, label_step, token_labels, with_labelled

DIVERGING = colorscale("RdBu_r")  # negative blue, positive red, 0 white
FIGURE_PX = 1100  # a row's width on a 1280-px screen (a projector): column labels are sized to fit it


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
    zmax: float | None = None  # top of the scale: unsigned default 1; signed default max |z| (set it to share one)
    col_labels: bool = True  # False: columns unlabelled (a square matrix whose columns follow its rows); hover names them
    # numbered rows (columns) counted from this: 1 for positions, as every view counts them (docs/tokens.md);
    # Plotly's own ticks then start past the corner, where a "0" of each axis met
    row_from: int = 0
    col_from: int = 0


def _hover(panel: Panel) -> tuple[np.ndarray | None, str]:
    """Hover text naming the row and column; numbered-only panels use Plotly's own x/y
    instead of a text array (a 128 × 128 table would otherwise ship 16k strings)."""
    n_rows, n_cols = panel.z.shape
    if panel.rows is None and panel.cols is None:
        row, col = (f"{title} " if title else "#" for title in (panel.row_title, panel.col_title))
        return None, f"{row}%{{y}} · {col}%{{x}}<br>{panel.value}: %{{z:.3f}}<extra></extra>"
    row_names = token_labels(panel.rows) if panel.rows is not None else [f"#{i + panel.row_from}" for i in range(n_rows)]
    col_names = token_labels(panel.cols) if panel.cols is not None else [f"dim {j + panel.col_from}" for j in range(n_cols)]
    text = np.array([[f"{r} · {c}" for c in col_names] for r in row_names], dtype=object)
    return text, f"%{{text}}<br>{panel.value}: %{{z:.3f}}<extra></extra>"


def _repeats(labels, left) -> bool:
    return labels is not None and left is not None and list(labels) == list(left)


ROW_NAME_CHARS = 36


def heatmap_row(panels: list[Panel], title: str = "", font_size: int = 12, height: int | None = None,
                colorbars: bool = True, spacing: float = 0.06, max_height: int | None = None) -> go.Figure:
    """Panels left to right, each with its own colour scale (its colour bar below it).

    A panel with the same row (or column) labels as the panel to its left leaves them to that panel.
    Every panel's z must be 2-D and match its row/column label counts; raises ValueError
    naming the panel otherwise. max_height: the most the figure may take (presenter mode's first screen); its
    row labels are sized and thinned for the rows it leaves. The layout is written as one dict (no make_subplots and
    no per-axis updates), which keeps building the figure fast enough for live sliders."""
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
    width = (1 - spacing * (n - 1)) / n
    # panel titles sit above the column labels (rotated -60°: a label of c characters rises ~0.5·c·font)
    # and the axis title; long token labels would otherwise run into them, worst in presenter mode
    longest = max((min(len(str(c)), LABEL_CHARS) for p in panels if p.cols is not None and p.col_labels for c in p.cols),
                  default=0)
    # (a character is ~0.6 em wide; a label rotated -60° rises sin 60° of its length; ticks take ~12 px)
    label_room = max(1.5 * font_size, 0.62 * font_size * longest) + 14
    title_shift = int(label_room + (2 * font_size + 10 if any(p.col_title for p in panels) else 4))
    # the left panel's row labels and title need room (with a margin of 10 px every row label was cut off)
    first = panels[0]
    rows = first.rows if first.rows is not None else [np.asarray(first.z).shape[0] - 1]  # numbered: the widest
    # row names such as "share of the pooled vector (max)" are shown whole (cut at 16 characters they lost
    # their start); a token label rarely comes near the cap
    left = row_label_margin(rows, font_size, titled=bool(first.row_title), cap=ROW_NAME_CHARS)
    n_rows = max(np.asarray(p.z).shape[0] for p in panels)
    height = height or int(min(900, max(360, 18 * n_rows * (1 + font_size / 40) + 260)))
    height = min(height, max_height or height)
    top, bottom = title_shift + 50 + 3 * font_size, 60 if colorbars else 10
    row_px = (height - top - bottom) / max(n_rows, 1)  # a row's height, for the row labels' size and step
    col_steps, row_steps = [1] * n, [1] * n  # every k-th labelled, said in the axis titles
    traces, layout, annotations = [], {}, []
    for i, p in enumerate(panels):
        z = np.asarray(p.z, dtype=np.float32)
        finite = z[np.isfinite(z)]
        if p.signed:
            reach = float(np.abs(finite).max()) if finite.size else 1.0
            reach = float(p.zmax) if p.zmax is not None else reach  # a scale shared with other panels
            reach = reach if reach > 0 else 1.0
            scale = dict(zmin=-reach, zmax=reach, colorscale=DIVERGING)
        else:
            scale = dict(zmin=0.0, zmax=1.0 if p.zmax is None else float(p.zmax), colorscale=COLORSCALE)
        x0 = i * (width + spacing)
        domain = [x0, min(1.0, x0 + width)]
        suffix = "" if i == 0 else str(i + 1)
        bar = dict(orientation="h", x=x0 + width / 2, xanchor="center", len=width, y=-0.04, yanchor="top",
                   thickness=10, tickfont=dict(size=max(9, font_size - 2)), ticklabeloverflow="allow",
                   nticks=max(3, int(FIGURE_PX * width / (4.5 * font_size * 2))))  # labels that fit their bar
        text, template = _hover(p)
        trace = dict(type="heatmap", z=z, x=np.arange(z.shape[1]) + (p.col_from if p.cols is None else 0),
                     y=np.arange(z.shape[0]) + (p.row_from if p.rows is None else 0),
                     hovertemplate=template, colorbar=bar, showscale=colorbars, name=p.title,
                     xaxis=f"x{suffix}", yaxis=f"y{suffix}", **scale)
        if text is not None:
            trace["text"] = text
        traces.append(trace)
        if not p.col_labels or _repeats(p.cols, panels[i - 1].cols if i else None):
            x_ticks = dict(showticklabels=False)
        else:
            # a panel is 1/n of the width: fewer column labels fit side by side than rows fit down; in large type
            # (presenter mode) every k-th is labelled rather than shrunk under the smallest readable text
            cell_px = (FIGURE_PX - left - 10) * width / max(z.shape[1], 1)
            size, step = label_fit(cell_px, z.shape[1], font_size, slanted=True)
            step = max(step, label_step(z.shape[1], min(MAX_TICK_LABELS, 128 // n)))
            if p.cols is not None:
                x_ticks = dict(**axis_ticks(p.cols, step=step), tickangle=-60, tickfont=dict(size=size))
                col_steps[i] = step
            else:
                x_ticks = dict(ticklabeloverflow="allow")
        # labels that repeat the left neighbour's are shown once, on the left panel: they read the same
        # across the row, and every tick label costs the browser time to measure and draw (hover names them)
        if _repeats(p.rows, panels[i - 1].rows if i else None):
            y_ticks = dict(showticklabels=False)
        elif p.rows is not None:
            row_size, row_step = label_fit(row_px, z.shape[0], font_size)
            y_ticks = dict(**axis_ticks(p.rows, step=row_step), tickfont=dict(size=row_size))
            row_steps[i] = row_step
        else:  # numbered rows: Plotly's own ticks, standing off the corner where the columns' first number is
            y_ticks = dict(ticklabeloverflow="allow", ticklabelstandoff=int(0.7 * font_size))
        # no zero line: it ran through row 0 across the grey (masked) cells
        layout[f"xaxis{suffix}"] = dict(domain=domain, anchor=f"y{suffix}", side="top", showgrid=False,
                                        zeroline=False, title=dict(text=with_labelled(p.col_title, col_steps[i])),
                                        **x_ticks)
        layout[f"yaxis{suffix}"] = dict(domain=[0, 1], anchor=f"x{suffix}", autorange="reversed", showgrid=False,
                                        zeroline=False, title=dict(text=with_labelled(p.row_title, row_steps[i])),
                                        **y_ticks)
        annotations.append(dict(text=p.title, x=x0 + width / 2, y=1, xref="paper", yref="paper", xanchor="center",
                                yanchor="bottom", yshift=title_shift, showarrow=False,
                                font=dict(size=font_size + 1)))
    layout.update(
        annotations=annotations,
        title=dict(text=title, x=0.01, y=1, yref="container", yanchor="top", pad=dict(t=10),
                   font=dict(size=font_size + 4)),
        height=height, font=dict(size=font_size), margin=dict(l=left, r=10, t=top, b=bottom),
        plot_bgcolor=MASKED_COLOR, paper_bgcolor="white", hoverlabel=dict(font=dict(size=font_size + 2)),
    )
    return figure(traces, layout)


def note_figure(text: str, height: int = 220, font_size: int = 12) -> go.Figure:
    """An empty figure that says why there is nothing to draw (instead of a blank or an error)."""
    fig = go.Figure()
    fig.add_annotation(text=text, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                       font=dict(size=font_size + 2))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=height, paper_bgcolor="white", plot_bgcolor="white", margin=dict(l=10, r=10, t=10, b=10))
    return plain_figure(fig)
