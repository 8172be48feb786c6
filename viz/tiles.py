"""Many attention maps in one figure: every layer x head tiled (the Every head tab's overview), a layer's heads
(Multi-head), the per-layer averages. The tiles are copied into one matrix with blank gaps and drawn as ONE heatmap
trace: far cheaper to build and draw than a subplot per map. One head in detail is viz/heatmap.py.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from analysis.heads import head_name, kv_group, sharing_sentence
from analysis.overview import PooledMaps, layer_average, pooled_maps
from viz.describe import grid_alt
from viz.figure import HUNDREDTHS, HUNDREDTHS_GAP, figure
from viz.heatmap import COLORSCALE, GRID_PX, HIGHLIGHT, LABEL_CHARS, _check, _layout, _mask, row_label_margin
from viz.labels import every_labelled, label_step, smallest_text, token_labels

OUTLINE_PX = 4  # the width of the open tile's outline


def _pooled_labels(labels: list[str], block: int) -> list[str]:
    """A block's name from its first and last token: "the…mat (#9-16)"; unpooled, "mat (#7)" (positions from 1)."""
    if block == 1:
        return [f"{label} (#{i})" for i, label in enumerate(labels, start=1)]
    names = []
    for start in range(0, len(labels), block):
        end = min(start + block, len(labels)) - 1
        names.append(f"{labels[start]}…{labels[end]} (#{start + 1}-{end + 1})")
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
                  token_ticks: bool = False, grid_px: float = GRID_PX) -> go.Figure:
    """Many (t, s) maps tiled into ONE heatmap trace with one shared 0..1 colour scale.

    tiles  (R, C, t, s): R rows and C columns of maps
    names  R lists of C tile labels, written above each tile and shown in the hover
    queries, keys  optional t and s token labels: the hover then names the tile, the query and the key
    selected  optional 0-based (row, column) of a tile to outline (the head opened in detail)
    token_ticks  label every tile's rows (queries, left) and columns (keys, below) with the tokens, for a
             few large tiles compared side by side (unpooled inputs only)
    grid_px  the plot area's width the tiles may take (presenter mode's projector: more than a page's)
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
                          token_ticks, grid_px)


def tiled_overview(maps: PooledMaps, names, title: str = "", font_size: int = 12, tile_px: int = 170,
                   queries=None, keys=None, selected: tuple[int, int] | None = None,
                   token_ticks: bool = False, grid_px: float = GRID_PX, alt: str | None = None) -> go.Figure:
    """tiled_heatmap from what it draws: the maps already pooled and their rows' numbers for the text
    alternative (analysis.overview.pooled_maps, or its twin computed where the trace is: experiments/view_numbers.py).
    alt: the text alternative when the caller has written it (a phone's figure says its own: viz/narrow.py)."""
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
    alt = grid_alt(title, maps.rows, names) if alt is None else alt
    t, s = tiles.shape[-2:]
    if block > 1:
        title += (f"<br><sub>Each tile is {t} × {s} cells: a cell is the largest weight of {block} × {block} "
                  "token pairs (max pooling), so a one-token stripe stays visible. Open a head to see every weight."
                  "</sub>")
    gap_x = max(1, round(0.12 * s))
    # tiles no wider than the columns of tiles fit across GRID_PX: the height follows the tiles' drawn size
    # (minilm's 12 columns had 55-px tiles in a figure as tall as 170-px ones, the rest left blank)
    tile_px = min(tile_px, grid_px * s / (cols * (s + gap_x)))
    label_rows = int(np.ceil(1.6 * font_size / (tile_px / max(t, 1)))) + 1  # room for "L1 H2" above a tile
    # tiles narrower than their names (smollm2's 30 layer averages: "L1 mean" ran into "L2 mean"): every k-th
    # tile named, the title saying which; the others are named in the hover and the text alternative. A one-row strip
    # only: a grid's names are what a click opens a head by
    name_every = name_step(names, tile_px * (s + gap_x) / max(s, 1), font_size) if rows == 1 else 1
    if name_every > 1:
        title += every_labelled(name_every)
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
    for r, c in ((r, c) for r in range(rows) for c in range(cols) if not names[r][c]):
        blocks[r, :, c, :] = HUNDREDTHS_GAP  # a tile with no name is no tile (a last row with fewer heads): blank
    sent = blocks.reshape(rows * step_y, cols * step_x)[:, :cols * step_x - gap_x]
    # float32: k / 100 is the float32 nearest to it, as np.round gives
    weights = sent / np.float32(HUNDREDTHS)
    weights[sent == HUNDREDTHS_GAP] = np.nan
    annotations = []
    for r in range(rows):
        for c in (c for c in range(cols) if names[r][c]):  # blank tiles come last: the others keep r * cols + c
            y0, x0 = r * step_y + label_rows, c * step_x
            annotations.append(dict(x=x0 + (s - 1) / 2, y=y0 - 0.6, yanchor="bottom", showarrow=False,
                                    text=f"<b>{names[r][c]}</b>", font=dict(size=font_size),
                                    captureevents=True))  # a click on the name opens the head (tile_click)
            if c % name_every:  # kept, hidden, so that annotation r * cols + c stays tile (r, c)'s
                annotations[-1]["visible"] = False
    flat_names = [name for row in names for name in row]
    heatmap = dict(
        type="heatmap", z=weights, zmin=0, zmax=1, colorscale=COLORSCALE, hoverongaps=False,
        hovertemplate="weight ≈ %{z:.2f}<extra></extra>",
        colorbar=dict(thickness=14, **{"title": dict(text="weight"), "len": 0.8,
                                       **_colour_ticks(rows * step_y * tile_px / max(t, 1), font_size)}),
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
                           y1=y0 + t - 0.5 + gap_x / 3, line=dict(color=HIGHLIGHT, width=OUTLINE_PX), xref="x", yref="y"))
        annotations[r * cols + c].update(text=f"<b>▶ {names[r][c]}</b>", font=dict(size=font_size, color=HIGHLIGHT),
                                         visible=True)
    # room beside the matrix for an outline around a first or last column of tiles (gap_x / 3 past its tile, and
    # its stroke) and then as much again, inside the grid's area: the open tile's outline in the last column ran
    # out of it onto the colour bar (minilm on a phone). The rows need none: the y axis's autorange counts shapes.
    edge = gap_x / 3 + 2 * OUTLINE_PX * max(s, 1) / max(tile_px, 1e-6)
    height = int(rows * step_y * tile_px / max(t, 1) + 60 + 3 * font_size)
    layout = _layout(
        title, height, font_size, annotations=annotations, shapes=shapes,
        # tile_grid: where each tile lies in the big matrix, so that a page script can tell which tile a
        # clicked cell is in (row r: matrix rows r*step_y ... with its name's label_rows first; column c:
        # matrix columns c*step_x ... , `width` of them, then the gap), pooled or not
        meta=dict(tiles=flat_names, alt=alt, tile_grid=dict(cols=cols, step_x=step_x, step_y=step_y, width=s)),
        xaxis=dict(visible=False, constrain="domain", range=[-0.5 - edge, weights.shape[1] - 0.5 + edge]),
        yaxis=dict(visible=False, autorange="reversed", scaleanchor="x", constrain="domain"),
    )
    layout["plot_bgcolor"] = "white"
    if rows == 1:  # the first tile's name, centred on a tile narrower than it, reaches left of the plot: room for it
        overhang = (BOLD_CHAR * len(names[0][0]) * font_size - tile_px) / 2
        layout["margin"]["l"] = max(layout["margin"]["l"], int(np.ceil(overhang)) + 4)
    if token_ticks and block == 1 and queries is not None and keys is not None:
        _tile_token_ticks(layout, heatmap, token_labels(queries), token_labels(keys), rows, cols, step_x, step_y,
                          label_rows, font_size, tile_px / max(t, 1))
    if block > 1:  # the title's second line, on pooling
        layout["margin"]["t"] += 2 * font_size
        layout["height"] += 2 * font_size
    return figure([heatmap], layout, hundredths={0: sent})


BOLD_CHAR = 0.62  # a bold label's width per character, in font sizes (generous: "L30 mean" is about 0.57)


def name_step(names, pitch_px: float, font_size: int) -> int:
    """1 when every tile's name fits across its tile's pitch (the tile and its gap, px) in bold at font_size, with
    half a font size between names; else k: every k-th column of tiles named."""
    longest = max((len(name) for row in names for name in row), default=0)
    need = (BOLD_CHAR * longest + 0.5) * font_size
    return max(1, int(np.ceil(need / max(pitch_px, 1e-6) - 1e-9)))


def _colour_ticks(plot_px: float, font_size: int) -> dict:
    """The colour bar's labels: quarters where 0.8 of the plot's height gives each label room, else halves, else
    its two ends (a strip of layer averages)."""
    room = 0.8 * plot_px / (1.8 * font_size)  # how many label gaps the bar has room for
    values = [0, 0.25, 0.5, 0.75, 1] if room >= 4 else [0, 0.5, 1] if room >= 2 else [0, 1]
    ticks = dict(tickvals=values, ticktext=[f"{v:g}" for v in values])
    if room < 2:  # a strip: the title beside the bar, not above it inside its length (which left 10 px: "1" on "0")
        ticks.update(len=1.0, title=dict(text="weight", side="right"))
    return ticks


def _tile_token_ticks(layout, heatmap, q_labels, k_labels, rows, cols, step_x, step_y, label_rows, font_size,
                      cell_px: float):
    """Token labels beside every tile row (queries) and under every tile column (keys): every token where a cell
    (cell_px) leaves its label room in a readable size, else every k-th, and the axis title says so."""
    x_names, y_names = heatmap["x"], heatmap["y"]
    small = dict(size=max(smallest_text(font_size), font_size - 2))
    every = max(1, int(np.ceil(1.25 * small["size"] / max(cell_px, 0.1))), label_step(len(k_labels), 32))
    shown_q, shown_k = range(0, len(q_labels), every), range(0, len(k_labels), every)
    y_at = [r * step_y + label_rows + i for r in range(rows) for i in shown_q]
    x_at = [c * step_x + j for c in range(cols) for j in shown_k]
    layout["yaxis"].update(visible=True, showgrid=False, zeroline=False, ticks="", tickfont=small,
                           tickvals=[y_names[i] for i in y_at], ticktext=[q_labels[i] for i in shown_q] * rows)
    layout["xaxis"].update(visible=True, showgrid=False, zeroline=False, ticks="", tickfont=small, tickangle=-60,
                           tickvals=[x_names[i] for i in x_at], ticktext=[k_labels[j] for j in shown_k] * cols)
    longest = max((len(label) for label in q_labels + k_labels), default=1)
    layout["margin"].update(l=row_label_margin(q_labels, small["size"], titled=False),
                            b=int(0.55 * small["size"] * min(longest, LABEL_CHARS)) + 20)
    if every > 1:  # which tokens are labelled, under the keys' labels
        layout["xaxis"]["title"] = dict(text=f"queries (left) and keys (below){every_labelled(every)}",
                                        font=dict(size=small["size"]))
        layout["margin"]["b"] += int(1.6 * small["size"])
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
