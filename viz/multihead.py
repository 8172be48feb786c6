"""Multi-head attention: every head of one layer side by side, and what wide and
narrow heads cost."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.heads import kv_group, sharing_sentence
from viz.heatmap import GRID_PX
from viz.labels import smallest_text
from viz.tiles import tiled_heatmap

PER_ROW = 4  # heads side by side on a page: 12 in one strip left each tile too small to read its tokens
WIDE_GRID_PX = 1000  # presenter mode: the plot area a 1280-px projector gives the tiles, beside their row labels
GROUP_LINE = "#4b5563"  # the boxes around query heads that share keys and values (as the every-head grid draws them)


def arrangement(heads: int, group: int = 1, max_height: int | None = None, font_size: int = 12) -> tuple[int, int]:
    """(rows, columns) of tiles for a layer's heads. With grouped-query attention (group query heads to a key/value
    head) a row never splits a group: a group per row on a page (smollm2: 3 rows of 3). In presenter mode
    (max_height) the arrangement whose tiles are largest on one screen, the one filling the width on a tie (9
    heads: one row of 9, not a third of the width); a last row with fewer heads is left blank, never padded."""
    if max_height is None:
        cols = group if group > 1 else min(heads, PER_ROW)
        return -(-heads // cols), cols
    room = max_height - 60 - 6 * font_size  # the title, the sharing line and the keys' labels under the tiles
    options = [c for c in range(1, heads + 1) if group == 1 or c % group == 0 or group % c == 0]

    def size(cols):
        rows = -(-heads // cols)
        return min(WIDE_GRID_PX / cols, room / rows) * (0.8 if rows * cols > heads else 1.0), cols
    cols = max(options, key=size)
    return -(-heads // cols), cols


def heads_figure(probs, layer: int, mask=None, font_size: int = 12, title: str | None = None, queries=None,
                 keys=None, kv_heads: int = 0, max_height: int | None = None) -> go.Figure:
    """probs (H, t, s) of one layer -> rows of tiles with a shared 0..1 scale, each tile's rows and columns
    labelled with the tokens (every k-th where a cell is too small for its label). `layer` is 0-based.
    queries/keys (optional): token labels. kv_heads: the model's key/value heads where fewer than its query heads
    (grouped-query attention): a dotted box spans the query heads that share one, named above it.
    max_height: presenter mode's first screen: the tiles as large as it allows (arrangement)."""
    probs = np.asarray(probs, np.float32)
    if probs.ndim != 3:
        raise ValueError(f"probs must be (heads, t, s) for one layer, got shape {probs.shape}")
    heads, t, s = probs.shape
    group = heads // kv_heads if 0 < kv_heads < heads else 1
    rows, cols = arrangement(heads, group, max_height, font_size)
    tiles = np.zeros((rows * cols, t, s), np.float32)
    tiles[:heads] = probs
    title = title or f"Layer {layer + 1}: every head on the same sentence"
    if group > 1:
        groups = [kv_group(head, heads, kv_heads) for head in range(0, heads, group)]
        title += f"<br><sub>{sharing_sentence(groups, heads)}</sub>"
    gap = max(1, round(0.12 * s))
    grid_px, tile_px = GRID_PX, 260
    if max_height:  # tiles as large as the screen's height and width allow, their labels and titles included
        grid_px = WIDE_GRID_PX
        small = max(smallest_text(font_size), font_size - 2)  # the token labels' size (tiles._tile_token_ticks)
        longest = min(max((len(str(label)) for label in list(queries or []) + list(keys or [])), default=1), 16)
        overhead = 60 + 3 * font_size + (2 * font_size if group > 1 else 0) + 0.55 * small * longest + 20 + 1.6 * small
        tile_px = (max_height - overhead) / rows - 2 * font_size
    tile_px = min(tile_px, grid_px * s / (cols * (s + gap)))  # as tiled_overview draws them

    def name(head: int) -> str:  # the longest name a tile's width holds in bold: "head 4 · kv 2", "H4 · kv 2", "H4"
        said = [f"head {head + 1}", f"H{head + 1}"]
        if group > 1:
            said = [f"head {head + 1} · kv {head // group + 1}", f"H{head + 1} · kv {head // group + 1}"] + said[1:]
        return next((n for n in said if 0.68 * font_size * len(n) <= tile_px * (s + gap) / s), said[-1])
    names = [[name(r * cols + c) if r * cols + c < heads else "" for c in range(cols)] for r in range(rows)]
    fig = tiled_heatmap(tiles.reshape(rows, cols, t, s), names, title=title, mask=mask, font_size=font_size,
                        tile_px=tile_px, queries=queries, keys=keys, token_ticks=True, grid_px=grid_px)
    if group > 1:
        _group_boxes(fig, heads, group, cols, rows, font_size)
    return fig


def _group_boxes(fig: go.Figure, heads: int, group: int, cols: int, rows: int, font_size: int) -> None:
    """A dotted box around each set of query heads that share a key/value head: columns of one row, or a whole row."""
    layout = fig._plain_parts()[1]
    grid = layout["meta"]["tile_grid"]
    step_x, step_y, width = grid["step_x"], grid["step_y"], grid["width"]
    gap = step_x - width
    boxes = []
    for first in range(0, heads, group):
        r, c0 = divmod(first, cols)
        c1 = min(c0 + group, cols) - 1
        boxes.append(dict(type="rect", x0=c0 * step_x - 0.5 - gap / 3, x1=c1 * step_x + width - 0.5 + gap / 3,
                          y0=r * step_y - 0.5, y1=(r + 1) * step_y - 0.5 - gap / 3, xref="x", yref="y",
                          line=dict(color=GROUP_LINE, width=2, dash="dot")))
    layout["shapes"] = list(layout.get("shapes") or []) + boxes
    layout["margin"]["t"] += 2 * font_size  # the sharing line under the title
    layout["height"] += 2 * font_size


def sizes_table(sizes) -> pd.DataFrame:
    """Narrow versus wide heads for a model's real sizes.

    sizes: model.sizes.HeadSizes (k, heads, wide, d_narrow, d_wide, params_narrow, params_wide, params_single)."""
    grouped = bool(getattr(sizes, "kv_heads", 0)) and sizes.kv_heads < sizes.heads
    used = "grouped" if grouped else "wide" if sizes.wide else "narrow"
    rows = [
        {"variant": "narrow (split k across heads)", "size of each head": f"k/h = {sizes.d_narrow}",
         "parameters per attention layer": sizes.params_narrow,
         "vs one full-size head": f"{sizes.params_narrow / sizes.params_single:.2f}×",
         "this model": "✓" if used == "narrow" else ""},
        {"variant": "wide (each head sees all of k)", "size of each head": f"k = {sizes.d_wide}",
         "parameters per attention layer": sizes.params_wide,
         "vs one full-size head": f"{sizes.params_wide / sizes.params_single:.2f}×",
         "this model": "✓" if used == "wide" else ""},
    ]
    if grouped:  # the model's own layer: narrow queries, keys and values computed for kv_heads heads only
        rows.append({"variant": f"narrow, {sizes.kv_heads} shared key/value head{'s' if sizes.kv_heads > 1 else ''}",
                     "size of each head": f"k/h = {sizes.d_narrow}", "parameters per attention layer": sizes.params_model,
                     "vs one full-size head": f"{sizes.params_model / sizes.params_single:.2f}×", "this model": "✓"})
    return pd.DataFrame(rows)
