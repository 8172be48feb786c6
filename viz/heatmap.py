"""Attention heatmaps: one head in detail, and what the tiled figures (viz/tiles.py) share with it.

Rows are queries (the token doing the looking), columns are keys (the tokens looked at).
The colour scale is fixed to 0..1 so heads can be compared by eye.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from analysis.overview import TILE_CELLS, max_pool, pool_block  # noqa: F401 (viz's names)
from viz.describe import plain
from viz.figure import colorscale, figure
from viz.labels import LINE_PITCH, axis_ticks, every_labelled, label_fit, label_step, token_labels  # noqa: F401

COLORSCALE = colorscale("Blues")
MASKED_COLOR = "#eeeeee"  # NaN cells (keys a query may not see) show the plot background


def _check(probs, ndim: int, what: str, queries=None, keys=None) -> np.ndarray:
    probs = np.asarray(probs)
    if probs.ndim != ndim:
        raise ValueError(f"{what} must have {ndim} dimensions, got shape {probs.shape}; "
                         f"pass trace.attention[kind].probs{'' if ndim == 4 else '[layer, head]'}")
    t, s = probs.shape[-2:]
    if queries is not None and len(queries) != t:
        raise ValueError(f"{len(queries)} query labels for {t} query rows: pass one label per row (attention.queries)")
    if keys is not None and len(keys) != s:
        raise ValueError(f"{len(keys)} key labels for {s} key columns: pass one label per column (attention.keys)")
    return probs.astype(np.float32, copy=False)


def _mask(mask, probs: np.ndarray) -> np.ndarray:
    """The (t, s) mask as bools, checked against the attention's last two dimensions."""
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != probs.shape[-2:]:
        raise ValueError(f"mask shape {mask.shape} does not match attention (t, s) = {probs.shape[-2:]}")
    return mask


def _masked(probs: np.ndarray, mask) -> np.ndarray:
    """probs with NaN where mask is False (drawn as background, so the mask itself is visible)."""
    if mask is None:
        return probs
    return np.where(_mask(mask, probs), probs, np.float32(np.nan)).astype(np.float32)


WIDE_BELOW_PX = 3  # one head on a screen's height: square cells smaller than this draw wider than tall
GRID_PX = 820  # the plot area of a tiled figure on a 1280-px screen, without its colour bar
LABEL_CHARS = 16  # longer token labels may be clipped at the figure's edge


def row_label_margin(labels, font_size: int, titled: bool = True, cap: int = LABEL_CHARS) -> int:
    """Left margin (px) for a column of row labels (a character is ~0.62 em wide) and, if titled, the axis
    title beside them: set by the figures themselves, not found by Plotly's automargin, whose extra layout
    passes doubled the time to draw a figure in the browser. Labels past `cap` characters may be clipped."""
    chars = min(max((len(str(label)) for label in labels), default=1), cap)
    return int(font_size * (0.62 * chars + (2.5 if titled else 0.5)) + 10)


def _layout(title: str, height: int, font_size: int, **extra) -> dict:
    """Shared layout as one dict: building the figure in one go is much faster than many update_* calls."""
    return dict(
        # the title hangs from the top edge, so axis titles placed above the plot never run into it
        # Plotly hangs a title of two lines by its first line's middle: a second line needs the first pushed down
        title=dict(text=title, x=0.01, y=1, yref="container", yanchor="top",
                   pad=dict(t=12 + (font_size if "<br>" in title else 0)),
                   font=dict(size=font_size + 4)),
        height=height, font=dict(size=font_size),
        margin=dict(l=10, r=10, t=50 + 2 * font_size, b=10), plot_bgcolor=MASKED_COLOR, paper_bgcolor="white",
        hoverlabel=dict(font=dict(size=font_size + 2)), **extra,
    )


# Up to this many cells (lm's 128 tokens) the one-head view sends a hover string per cell; past it, one
# name per row and column on category axes (_position_names).
HOVER_TEXT_CELLS = 128 * 128


def _position_names(labels: list[str]) -> list[str]:
    """Unique axis names for escaped token labels, by position counted from 1 as every view counts: "the (#3)"
    (a category axis merges equal names, and a sentence repeats its tokens)."""
    return [f"{label} (#{i})" for i, label in enumerate(labels, start=1)]


HIGHLIGHT = "#ff7f0e"  # what the viewer picked: the tile open in detail, the quiz's row and guess


def attention_heatmap(probs, queries, keys, title: str = "", mask=None, font_size: int = 12,
                      height: int | None = None, hidden: bool = False, row: int | None = None,
                      guess: int | None = None, max_width: int = 560, max_height: int | None = None) -> go.Figure:
    """One head's attention as a heatmap.

    probs    (t, s) weights in 0..1, each row a query's distribution over keys
    queries  t labels (rows, top to bottom); keys: s labels (columns)
    mask     optional (t, s) bool; False cells are left blank (e.g. the future in a causal model)
    Hover reads "query → key: weight"; tokens are escaped and placed by position.
    Quiz mode: hidden=True draws every allowed cell alike and leaves the weights out of the figure
    (and its hover); row outlines one query row and guess marks one key in it.
    max_height  the most the figure may take (presenter mode: the first screen): smaller cells, not a cut
    """
    probs = _masked(_check(probs, 2, "probs", queries, keys), mask)
    t, s = probs.shape
    q_labels, k_labels = token_labels(queries), token_labels(keys)
    # square cells that fit a ~600 px wide column; the height follows the rows it has to show
    cell = min(2.2 * font_size, max_width / max(s, 1))  # max_width: ~600 px in a column, more at full width
    longest = max((len(k) for k in keys), default=1)
    # every key and query labelled where the cells leave room, in a font that fits them but never under the
    # smallest readable text; else every k-th (viz.labels.label_fit), and the axis says which
    slanted = longest > 2  # short labels stand upright side by side: their width is what must fit
    x_pitch = LINE_PITCH if slanted else 0.62 * max(longest, 1) + 0.5

    def x_fit(c: float) -> tuple[int, int]:
        return label_fit(c, s, font_size, slanted=slanted, pitch=x_pitch)

    def tick_room(c: float) -> float:  # the key labels above the cells, in the font cells of size c take
        return x_fit(c)[0] * (1.5 if not slanted else 0.6 * min(longest, LABEL_CHARS) + 1)

    titles = 5 * font_size + 60 + (font_size if "<br>" in title else 0)  # figure title (a line more), axis title
    shrunk = False
    if max_height:  # the rows share what the titles and the key labels leave; smaller cells, fewer labels
        while cell > 1.0 and t * cell + tick_room(cell) + titles > max_height:
            cell, shrunk = max(1.0, cell - 0.25), True
    x_size, step_x = x_fit(cell)
    y_size, step_y = label_fit(cell, t, font_size)
    x_font, y_font = dict(size=x_size), dict(size=y_size)
    x_title, y_title = "keys (looked at)" + every_labelled(step_x), "queries (looking)" + every_labelled(step_y)
    # A long input on one screen (presenter mode, 500 tokens): square cells of under a pixel drew the head 260 px
    # wide with 4-px labels. Its cells are then wider than tall, across the whole width, each axis labelled
    # every k-th token in a font that reads, and the rows' note goes in the keys' title, which has the room.
    wide = shrunk and (max_height - titles - tick_room(cell)) / max(t, 1) < WIDE_BELOW_PX  # square cells' side
    if wide:
        x_size, step_x = x_fit(max_width / max(s, 1))
        x_font = dict(size=x_size)
        room = x_size * (1.5 if not slanted else 0.6 * min(longest, LABEL_CHARS) + 1)
        cell = max(0.25, (max_height - titles - room) / max(t, 1))
        y_size, step_y = label_fit(cell, t, font_size)
        y_font = dict(size=y_size)
        x_title = f"keys{every_labelled(step_x)}; queries{every_labelled(step_y)}"
        y_title = "queries (looking)"
    gap = 1 if cell >= 6 else 0  # white lines between cells, unless they would hide the cells
    left = row_label_margin(queries, font_size)  # the query labels and the axis title
    height = height or (max_height if shrunk else int(min(1100, max_height or 1100,
                                                          max(320, t * cell + tick_room(cell) + titles))))
    heatmap = dict(
        type="heatmap", z=probs, x=np.arange(s), y=np.arange(t), zmin=0.0, zmax=1.0, colorscale=COLORSCALE,
        xgap=gap, ygap=gap, colorbar=dict(title=dict(text="weight"), thickness=14, len=0.8),
    )
    x_ticks, y_ticks = axis_ticks(keys, step=step_x), axis_ticks(queries, step=step_y)
    if t * s <= HOVER_TEXT_CELLS:
        hover = np.array([[f"{q} → {k}" for k in k_labels] for q in q_labels], dtype=object)
        heatmap.update(text=hover, hovertemplate="%{text}: %{z:.3f}<extra></extra>")
    else:
        # one name per row and per column, not one string per cell: the hover still names both tokens
        # (and their positions), and a 512-token head sends 1,000 names instead of 262,144 strings
        x_names, y_names = _position_names(k_labels), _position_names(q_labels)
        heatmap.update(x=x_names, y=y_names, hovertemplate="%{y} → %{x}: %{z:.3f}<extra></extra>")
        x_ticks["tickvals"] = [x_names[i] for i in x_ticks["tickvals"]]
        y_ticks["tickvals"] = [y_names[i] for i in y_ticks["tickvals"]]
    layout = _layout(
        title, height, font_size,
        xaxis=dict(**x_ticks, side="top", tickangle=-60 if slanted else 0, tickfont=x_font,
                   automargin=False, title=dict(text=x_title), showgrid=False,
                   zeroline=False, constrain="domain", constraintoward="left"),  # a zero line crossed masked row 0
        yaxis=dict(**y_ticks, autorange="reversed", tickfont=y_font, automargin=False,
                   title=dict(text=y_title), showgrid=False, zeroline=False,
                   **({} if wide else dict(scaleanchor="x")), constrain="domain", constraintoward="top"),
    )
    # the key labels and their axis title sit on top: leave them room below the figure title
    layout["margin"].update(t=int(titles - 2 * font_size - 10 + (room if wide else tick_room(cell))), l=left)
    if hidden:  # the weights are not sent at all: nobody can read them from the page
        layout["meta"] = dict(alt=f"{plain(title)}. Quiz mode: the weights are hidden; guess where each token looks.")
        heatmap.update(z=np.where(np.isnan(probs), np.nan, 0.0).astype(np.float32), showscale=False,
                       hovertemplate="%{text}<extra></extra>")
    if row is not None:
        if not 0 <= row < t:
            raise ValueError(f"row {row} is outside the {t} query rows")
        layout["shapes"] = [dict(type="rect", x0=-0.5, x1=s - 0.5, y0=row - 0.5, y1=row + 0.5, xref="x", yref="y",
                                 line=dict(color=HIGHLIGHT, width=3))]
        if guess is not None:
            if not 0 <= guess < s:
                raise ValueError(f"guess {guess} is outside the {s} key columns")
            layout["annotations"] = [dict(x=guess, y=row, xref="x", yref="y", text="✕", showarrow=False,
                                          font=dict(size=int(1.6 * font_size), color=HIGHLIGHT))]
    return figure([heatmap], layout)
