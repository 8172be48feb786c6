"""Attention heatmaps: one head in detail, every head tiled in one figure, per-layer averages.

Rows are queries (the token doing the looking), columns are keys (the tokens looked at).
The colour scale is fixed to 0..1 so heads can be compared by eye.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from analysis.heads import head_name, kv_group, sharing_sentence
from analysis.overview import (TILE_CELLS, PooledMaps, layer_average, max_pool, pool_block,  # noqa: F401 (viz's names)
                               pooled_maps)
from viz.describe import grid_alt, plain
from viz.figure import HUNDREDTHS, HUNDREDTHS_GAP, colorscale, figure
from viz.labels import axis_ticks, every_labelled, label_step, labelled_positions, token_labels  # noqa: F401

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
    """Unique axis names for escaped token labels, by position: "the (#3)" (a category axis merges equal
    names, and a sentence repeats its tokens)."""
    return [f"{label} (#{i})" for i, label in enumerate(labels)]


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
    # long inputs: every k-th token labelled (viz.labels), in a font that fits the room k cells give it
    step_x, step_y = label_step(s), label_step(t)

    def tick_size(c: float) -> int:
        return max(8, min(font_size, int(c * min(step_x, step_y) * 1.1)))

    def tick_room(c: float) -> float:  # the key labels above the cells, in the font cells of size c take
        return tick_size(c) * (1.5 if longest <= 2 else 0.6 * min(longest, LABEL_CHARS) + 1)

    titles = 5 * font_size + 60 + (font_size if "<br>" in title else 0)  # figure title (a line more), axis title
    shrunk = False
    if max_height:  # the rows share what the titles and the key labels leave; smaller cells take smaller labels
        while cell > 1.0 and t * cell + tick_room(cell) + titles > max_height:
            cell, shrunk = max(1.0, cell - 0.25), True
    tick_font = dict(size=tick_size(cell))
    x_font, y_font = tick_font, tick_font
    x_title, y_title = "keys (looked at)" + every_labelled(step_x), "queries (looking)" + every_labelled(step_y)
    # A long input on one screen (presenter mode, 500 tokens): square cells of under a pixel drew the head 260 px
    # wide with 4-px labels. Its cells are then wider than tall, across the whole width, each axis labelled
    # every k-th token in a font that reads, and the rows' note goes in the keys' title, which has the room.
    wide = shrunk and (max_height - titles - tick_room(cell)) / max(t, 1) < WIDE_BELOW_PX  # square cells' side
    if wide:
        x_labels = max(2, int(max_width / (1.3 * font_size)))
        step_x = label_step(s, x_labels)
        x_font = dict(size=max(8, min(font_size, int(max_width / s * step_x * 1.1))))
        room = x_font["size"] * (1.5 if longest <= 2 else 0.6 * min(longest, LABEL_CHARS) + 1)
        cell = max(0.25, (max_height - titles - room) / max(t, 1))
        y_labels = max(2, int(t * cell / (1.5 * font_size)))
        step_y = label_step(t, y_labels)
        y_font = dict(size=max(8, min(font_size, int(cell * step_y * 0.9))))
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
    x_ticks, y_ticks = (axis_ticks(keys, max_labels=x_labels), axis_ticks(queries, max_labels=y_labels)) if wide \
        else (axis_ticks(keys), axis_ticks(queries))
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
        xaxis=dict(**x_ticks, side="top", tickangle=0 if longest <= 2 else -60, tickfont=x_font,
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


def _pooled_labels(labels: list[str], block: int) -> list[str]:
    """A block's name from its first and last token: "the…mat (#8-15)"; unpooled, "mat (#6)"."""
    if block == 1:
        return [f"{label} (#{i})" for i, label in enumerate(labels)]
    names = []
    for start in range(0, len(labels), block):
        end = min(start + block, len(labels)) - 1
        names.append(f"{labels[start]}…{labels[end]} (#{start}-{end})")
    return names


def _tile_axis_names(names, key_labels, query_labels, gap_x: int, label_rows: int) -> tuple[list, list]:
    """Unique category names for every column and row of the tiled matrix, for the hover: "H2 · mat (#6)"
    and "L1 · the (#5)" (a one-row strip puts the whole tile name on the columns). Gap rows and columns
    get names too, and every name is unique: a category axis merges equal names."""
    rows, cols = len(names), len(names[0])
    if rows == 1:
        col_prefix, row_prefix = [names[0][c] for c in range(cols)], [""]
    else:
        col_prefix = [names[0][c].split()[-1] for c in range(cols)]
        row_prefix = [names[r][0].split()[0] for r in range(rows)]
        if len(set(row_prefix)) < rows:  # names that are not layer × head ("head 1" … in rows of 4)
            row_prefix = [" | ".join(filter(None, names[r])) for r in range(rows)]
            col_prefix = [f"tile {c + 1}" for c in range(cols)]
    x_names, y_names = [], []
    for c, prefix in enumerate(col_prefix):
        x_names += _joined(prefix, key_labels)
        if c < cols - 1:
            x_names += [f"gap {c * gap_x + g + 1}" for g in range(gap_x)]
    for r, prefix in enumerate(row_prefix):
        y_names += [f"title row {r * label_rows + g + 1}" for g in range(label_rows)]
        y_names += _joined(prefix, query_labels)
    return x_names, y_names


def _joined(prefix: str, labels: list[str]) -> list[str]:
    """f"{prefix} · {label}" for each label, without what leads it of " ·" (an empty prefix: the label alone)."""
    lead = prefix.lstrip(" ·")
    if lead:  # the usual case: the stripping ends inside the prefix, stripped once
        return [f"{lead} · {label}" for label in labels]
    return [f"{prefix} · {label}".lstrip(" ·") for label in labels]


def tiled_heatmap(tiles, names, title: str = "", mask=None, font_size: int = 12, tile_px: int = 170,
                  queries=None, keys=None, selected: tuple[int, int] | None = None,
                  token_ticks: bool = False) -> go.Figure:
    """Many (t, s) maps tiled into ONE heatmap trace with one shared 0..1 colour scale.

    tiles  (R, C, t, s): R rows and C columns of maps
    names  R lists of C tile labels, written above each tile and shown in the hover
    queries, keys  optional t and s token labels: the hover then names the tile, the query and the key
    selected  optional 0-based (row, column) of a tile to outline (the head opened in detail)
    token_ticks  label every tile's rows (queries, left) and columns (keys, below) with the tokens, for a
             few large tiles compared side by side (unpooled inputs only)
    The tiles are copied into a single big matrix with blank gaps: one trace is far cheaper
    to build and draw than R*C subplots. Values are rounded to 0.01 (float32), on the 0..1 scale the
    rest of the app uses (the hover reads 0.35, as every other view does), and travel as whole hundredths,
    one byte a cell (viz.figure.as_hundredths): the page draws the same float32 numbers.
    Past TILE_CELLS tokens a tile is max-pooled (each cell the largest weight of a k x k block of token
    pairs), and the title says so.
    """
    tiles = _check(tiles, 4, "tiles")
    rows, cols = tiles.shape[:2]
    if len(names) != rows or any(len(r) != cols for r in names):
        raise ValueError(f"names must be {rows} lists of {cols} labels, one per tile")
    if mask is not None:
        _mask(mask, tiles)
    return tiled_overview(pooled_maps(tiles, mask), names, title, font_size, tile_px, queries, keys, selected,
                          token_ticks)


def tiled_overview(maps: PooledMaps, names, title: str = "", font_size: int = 12, tile_px: int = 170,
                   queries=None, keys=None, selected: tuple[int, int] | None = None,
                   token_ticks: bool = False) -> go.Figure:
    """tiled_heatmap from what it draws: the maps already pooled and their rows' numbers for the text
    alternative (analysis.overview.pooled_maps, or its twin computed where the trace is: experiments/view_numbers.py)."""
    tiles, block = maps.tiles, maps.block
    rows, cols = tiles.shape[:2]
    if len(names) != rows or any(len(r) != cols for r in names):
        raise ValueError(f"names must be {rows} lists of {cols} labels, one per tile")
    t_full, s_full = maps.shape
    if queries is not None and len(queries) != t_full:
        raise ValueError(f"{len(queries)} query labels for {t_full} query rows: pass one label per row (attention.queries)")
    if keys is not None and len(keys) != s_full:
        raise ValueError(f"{len(keys)} key labels for {s_full} key columns: pass one label per column (attention.keys)")
    # the text alternative reads every weight, before any pooling (through its rows' numbers)
    alt = grid_alt(title, maps.rows, names)
    t, s = tiles.shape[-2:]
    if block > 1:
        title += (f"<br><sub>Each tile is {t} × {s} cells: a cell is the largest weight of {block} × {block} "
                  "token pairs (max pooling), so a one-token stripe stays visible. Open a head to see every weight."
                  "</sub>")
    gap_x = max(1, round(0.12 * s))
    # tiles no wider than the columns of tiles fit across GRID_PX: the height follows the tiles' drawn size
    # (minilm's 12 columns had 55-px tiles in a figure as tall as 170-px ones, the rest left blank)
    tile_px = min(tile_px, GRID_PX * s / (cols * (s + gap_x)))
    label_rows = int(np.ceil(1.6 * font_size / (tile_px / max(t, 1)))) + 1  # room for "L1 H2" above a tile
    step_x, step_y = s + gap_x, t + label_rows
    # An overview needs two decimals (open a head for exact values); they are read on the 0..1 scale of every
    # other view, and sent as whole hundredths in one byte a cell, which the page divides by 100 before Plotly
    # draws them (Plotly's hover cannot divide: sent as percents, the grid alone read "≈ 35%").
    hundredths = np.rint(np.clip(tiles, 0, 1) * HUNDREDTHS).astype(np.uint8)
    # the big matrix as (row, y, column, x) blocks: every tile placed in one assignment
    # gaps and title rows are gaps: NaN on the page, with hoverongaps off, so they draw as the white background and
    # have no hover (which showed the axis's internal names there, "title row 16 → gap 44"). They travel as
    # HUNDREDTHS_GAP, never a hundredth, which the page script turns into NaN (ui/runtime/hundredths.py).
    blocks = np.full((rows, step_y, cols, step_x), HUNDREDTHS_GAP, dtype=np.uint8)
    blocks[:, label_rows:, :, :s] = hundredths.transpose(0, 2, 1, 3)
    sent = blocks.reshape(rows * step_y, cols * step_x)[:, :cols * step_x - gap_x]
    # float32: k / 100 is the float32 nearest to it, as np.round gives
    weights = sent / np.float32(HUNDREDTHS)
    weights[sent == HUNDREDTHS_GAP] = np.nan
    annotations = []
    for r in range(rows):
        for c in range(cols):
            y0, x0 = r * step_y + label_rows, c * step_x
            annotations.append(dict(x=x0 + (s - 1) / 2, y=y0 - 0.6, yanchor="bottom", showarrow=False,
                                    text=f"<b>{names[r][c]}</b>", font=dict(size=font_size),
                                    captureevents=True))  # a click on the name opens the head (tile_click)
    flat_names = [name for row in names for name in row]
    heatmap = dict(
        type="heatmap", z=weights, zmin=0, zmax=1, colorscale=COLORSCALE, hoverongaps=False,
        hovertemplate="weight ≈ %{z:.2f}<extra></extra>",
        colorbar=dict(title=dict(text="weight"), thickness=14, len=0.8, tickvals=[0, 0.25, 0.5, 0.75, 1],
                      ticktext=["0", "0.25", "0.5", "0.75", "1"]),
    )
    if queries is not None and keys is not None:
        # name the tile, the query and the key under the pointer, so a lecturer can narrate any tile.
        # The names go on the (hidden) axes, one per row and per column of the big matrix, not one per
        # cell: a 16-head grid at 32 tokens would otherwise send 16k hover strings (~750 KB).
        x_names, y_names = _tile_axis_names(names, _pooled_labels(token_labels(keys), block),
                                            _pooled_labels(token_labels(queries), block), gap_x, label_rows)
        heatmap.update(x=x_names, y=y_names, hovertemplate="%{y} → %{x}: " + ("largest " if block > 1 else "")
                       + "≈ %{z:.2f}<extra></extra>")
    shapes = []
    if selected is not None:
        r, c = selected
        if not (0 <= r < rows and 0 <= c < cols):
            raise ValueError(f"selected tile {selected} is outside the {rows} × {cols} tiles")
        y0, x0 = r * step_y + label_rows, c * step_x
        shapes.append(dict(type="rect", x0=x0 - 0.5 - gap_x / 3, x1=x0 + s - 0.5 + gap_x / 3, y0=y0 - label_rows + 0.2,
                           y1=y0 + t - 0.5 + gap_x / 3, line=dict(color=HIGHLIGHT, width=4), xref="x", yref="y"))
        annotations[r * cols + c].update(text=f"<b>▶ {names[r][c]}</b>", font=dict(size=font_size, color=HIGHLIGHT))
    height = int(rows * step_y * tile_px / max(t, 1) + 60 + 3 * font_size)
    layout = _layout(
        title, height, font_size, annotations=annotations, shapes=shapes,
        # tile_grid: where each tile lies in the big matrix, so that a page script can tell which tile a
        # clicked cell is in (row r: matrix rows r*step_y ... with its name's label_rows first; column c:
        # matrix columns c*step_x ... , `width` of them, then the gap), pooled or not
        meta=dict(tiles=flat_names, alt=alt, tile_grid=dict(cols=cols, step_x=step_x, step_y=step_y, width=s)),
        xaxis=dict(visible=False, constrain="domain", range=[-0.5, weights.shape[1] - 0.5]),
        yaxis=dict(visible=False, autorange="reversed", scaleanchor="x", constrain="domain"),
    )
    layout["plot_bgcolor"] = "white"
    if token_ticks and block == 1 and queries is not None and keys is not None:
        _tile_token_ticks(layout, heatmap, token_labels(queries), token_labels(keys), rows, cols, step_x, step_y,
                          label_rows, font_size)
    if block > 1:  # the title's second line, on pooling
        layout["margin"]["t"] += 2 * font_size
        layout["height"] += 2 * font_size
    return figure([heatmap], layout, hundredths={0: sent})


def _tile_token_ticks(layout, heatmap, q_labels, k_labels, rows, cols, step_x, step_y, label_rows, font_size):
    """Token labels beside every tile row (queries) and under every tile column (keys)."""
    x_names, y_names = heatmap["x"], heatmap["y"]
    shown_q, shown_k = labelled_positions(len(q_labels), 32), labelled_positions(len(k_labels), 32)
    y_at = [r * step_y + label_rows + i for r in range(rows) for i in shown_q]
    x_at = [c * step_x + j for c in range(cols) for j in shown_k]
    small = dict(size=max(8, font_size - 2))
    layout["yaxis"].update(visible=True, showgrid=False, zeroline=False, ticks="", tickfont=small,
                           tickvals=[y_names[i] for i in y_at], ticktext=[q_labels[i] for i in shown_q] * rows)
    layout["xaxis"].update(visible=True, showgrid=False, zeroline=False, ticks="", tickfont=small, tickangle=-60,
                           tickvals=[x_names[i] for i in x_at], ticktext=[k_labels[j] for j in shown_k] * cols)
    longest = max((len(label) for label in q_labels + k_labels), default=1)
    layout["margin"].update(l=row_label_margin(q_labels, small["size"], titled=False),
                            b=int(0.55 * small["size"] * min(longest, LABEL_CHARS)) + 20)
    layout["height"] += layout["margin"]["b"]


GROUP_LINE = "#4b5563"  # the boxes around query heads that share keys and values: grey, not the selected head's red


def all_heads_grid(probs, queries=None, keys=None, title: str = "Every head: rows are layers, columns are heads",
                   mask=None, font_size: int = 12, selected: tuple[int, int] | None = None,
                   kv_heads: int = 0) -> go.Figure:
    """Every layer × head of one attention kind in one tiled figure, tiles named 'L1 H2'.

    probs  (L, H, t, s); queries/keys (optional): checked against t and s, and named in the hover
    selected  optional 0-based (layer, head) to outline: the head shown in detail
    kv_heads  the model's key/value heads where it has fewer than query heads (grouped-query attention, as
              SmolLM2's 9 query heads share 3): a dotted box spans each group's columns, and the title says
              which query heads share one (0, or as many as the query heads: no boxes)
    """
    probs = _check(probs, 4, "probs", queries, keys)
    return all_heads_overview(pooled_maps(probs, None if mask is None else _mask(mask, probs)), queries, keys,
                              title, font_size, selected, kv_heads)


def all_heads_overview(maps: PooledMaps, queries=None, keys=None,
                       title: str = "Every head: rows are layers, columns are heads", font_size: int = 12,
                       selected: tuple[int, int] | None = None, kv_heads: int = 0) -> go.Figure:
    """all_heads_grid from what it draws: every head pooled (analysis.overview.pooled_maps of the (L, H, t, s)
    weights, or its twin computed where the trace is: experiments/view_numbers.py)."""
    n_layers, n_heads = maps.tiles.shape[:2]
    names = [[head_name(layer, head) for head in range(n_heads)] for layer in range(n_layers)]
    groups = [kv_group(head, n_heads, kv_heads) for head in range(0, n_heads, n_heads // kv_heads)] \
        if 0 < kv_heads < n_heads else []
    if groups:
        title += f"<br><sub>{sharing_sentence(groups, n_heads)}</sub>"
    fig = tiled_overview(maps, names, title, font_size=font_size, queries=queries, keys=keys, selected=selected)
    if groups:
        layout = fig._plain_parts()[1]
        grid = layout["meta"]["tile_grid"]
        gap, bottom = grid["step_x"] - grid["width"], n_layers * grid["step_y"] - 0.5
        layout["shapes"] = list(layout.get("shapes") or []) + [
            dict(type="rect", x0=group[0] * grid["step_x"] - 0.5 - gap / 2,
                 x1=group[-1] * grid["step_x"] + grid["width"] - 0.5 + gap / 2, y0=-0.5, y1=bottom,
                 line=dict(color=GROUP_LINE, width=1.5, dash="dot"), xref="x", yref="y") for group in groups]
        layout["margin"]["t"] += 2 * font_size  # the subtitle's line
        layout["height"] += 2 * font_size
    return fig


def layer_average_grid(probs, title: str = "Average over heads, per layer", mask=None,
                       font_size: int = 12) -> go.Figure:
    """Each layer's head-averaged attention side by side: probs (L, H, t, s) -> one row of L tiles."""
    average = layer_average(_check(probs, 4, "probs"))  # (L, t, s)
    return layer_average_overview(pooled_maps(average[None], None if mask is None else _mask(mask, average)), title,
                                  font_size)


def layer_average_overview(maps: PooledMaps, title: str = "Average over heads, per layer",
                           font_size: int = 12) -> go.Figure:
    """layer_average_grid from what it draws: the (1, L) layer averages pooled (analysis.overview.pooled_maps,
    or experiments/view_numbers.py)."""
    names = [[f"L{layer + 1} mean" for layer in range(maps.tiles.shape[1])]]
    return tiled_overview(maps, names, title, font_size=font_size)
