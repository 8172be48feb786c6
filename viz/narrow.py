"""The every-head grid and the layer averages as a phone draws them: one layer's heads, or every layer's average,
in rows of tiles a finger can tap (TAP_PX), sent inside the figure (layout.meta.narrow) for a page under
ui.page.accessibility.PHONE_MAX_PX wide to draw instead (ui/page/phone.py). The server draws one answer for every
screen; a phone picks its own figure from it, and a wider screen (a phone turned) draws the whole grid again.

On a 390-px phone the whole grid of smollm2 (30 layers × 9 heads) drew 270 tiles of about 20 px whose names ran
together ("L1 H1L1 H2…"). One layer at a time reads: the layer of the head open in detail (the Layer slider picks
it), its heads in rows of three (a row a key/value group where the model shares them).
"""
from __future__ import annotations

import math
import textwrap

import numpy as np

from analysis.heads import head_name, sharing_sentence
from analysis.overview import PooledMaps, RowSummary
from viz.describe import carry_described, grid_alt
from viz.figure import Figure, as_hundredths
from viz.tiles import tiled_overview

PHONE_GRID_PX = 260  # the plot area a 390-px phone leaves tiles: the page's padding, the margins and a thin colour bar off
TAP_PX = 44  # the smallest thing a finger taps (STYLE.md)
MOST_COLUMNS = 4  # tiles a row: past four, names of "L12 H10" no longer fit above their tiles
TITLE_CHARS = 46  # characters a title line holds on a 390-px phone (16-px title: about 300 of its 320 px)
SUB_CHARS = 36  # and of its smaller second part (the page measures a line at the title's size, <sub> or not)


def columns_for(count: int, group: int = 1) -> int:
    """Tiles a row on a phone: a key/value group a row where that is 2-MOST_COLUMNS heads, else about a square
    (9 → 3, 4 → 2, 30 → 4), never so many that a tile is under TAP_PX."""
    if 2 <= group <= MOST_COLUMNS and count % group == 0:
        return group
    fits = max(1, int(PHONE_GRID_PX // (TAP_PX * 1.2)))
    return max(1, min(count, MOST_COLUMNS, fits, math.ceil(math.sqrt(count))))


def _rows(maps: PooledMaps, picks: list[int]) -> RowSummary:
    """The RowSummary of the maps numbered `picks` (row-major in maps), with their descriptions where the wide
    figure already wrote every map's (viz.describe.grid_alt keeps them: each map's is read from its rows alone)."""
    r = maps.rows
    picked = RowSummary(top=r.top[picks], weight=r.weight[picks], positive=r.positive[picks], live=r.live[picks],
                        width=r.width)
    return carry_described(r, picked, picks)


def _wrapped(maps: PooledMaps, picks: list[tuple[int, int]], names: list[str], columns: int):
    """The tiles at (row, column) `picks` of maps, in rows of `columns` (the last row's blank tiles unnamed)."""
    t, s = maps.tiles.shape[-2:]
    rows = math.ceil(len(picks) / columns)
    tiles = np.zeros((rows, columns, t, s), dtype=np.float32)
    grid = [[""] * columns for _ in range(rows)]
    for i, (r, c) in enumerate(picks):
        tiles[i // columns, i % columns] = maps.tiles[r, c]
        grid[i // columns][i % columns] = names[i]
    numbered = [r * maps.tiles.shape[1] + c for r, c in picks]
    return PooledMaps(tiles=tiles, block=maps.block, shape=maps.shape, rows=_rows(maps, numbered + numbered[:1]
                                                                                  * (rows * columns - len(picks)))), grid


def _inside(fig: Figure, narrow: Figure, alt: str) -> Figure:
    """fig with `narrow` in its layout.meta.narrow, as it travels (its weights as whole hundredths)."""
    data, layout = narrow._plain_parts()
    hundredths = narrow.__dict__.get("_hundredths") or {}
    layout["meta"] = {**layout.get("meta", {}), "alt": alt}
    sent = [as_hundredths(trace, hundredths[i]) if i in hundredths else trace for i, trace in enumerate(data)]
    outer = fig._plain_parts()[1]
    outer["meta"] = {**outer.get("meta", {}), "narrow": {"data": sent, "layout": layout}}
    return fig


def narrow_grid(fig: Figure, maps: PooledMaps, queries, keys, layer: int, kind: str, font_size: int = 12,
                selected: tuple[int, int] | None = None, kv_heads: int = 0) -> Figure:
    """fig (the every-head grid of maps: (L, H, t, s) pooled) with the phone's figure inside: layer `layer`'s
    heads (0-based), tiles named 'L3 H1' (a tap opens the head, as on the grid), the head open outlined."""
    n_layers, n_heads = maps.tiles.shape[:2]
    group = n_heads // kv_heads if 0 < kv_heads < n_heads else 1
    columns = columns_for(n_heads, group)
    names = [head_name(layer, head) for head in range(n_heads)]
    shown, grid = _wrapped(maps, [(layer, head) for head in range(n_heads)], names, columns)
    # lines a phone's figure holds whole (the page would break longer ones, the figure keeping its height: the
    # title's extra lines then took the tiles' room, 6 heads drawn 50 px wide); the margin makes room for each line
    lines = textwrap.wrap(f"Layer {layer + 1} of {n_layers}: its {n_heads} heads ({kind})", TITLE_CHARS,
                          break_on_hyphens=False)
    lines += ["tap a tile to open it; the Layer slider", "picks another (in the settings above)"]
    title = "<br>".join(lines)
    subs = []
    if group > 1:
        groups = [list(range(first, first + group)) for first in range(0, n_heads, group)]
        shared = sharing_sentence(groups, n_heads).split(';')[0]
        subs = textwrap.wrap(shared + ("; each row here is one group" if columns == group else ""), SUB_CHARS,
                             break_on_hyphens=False)
        title += "<br><sub>" + "<br>".join(subs) + "</sub>"
    at = None
    if selected is not None and selected[0] == layer:
        at = divmod(selected[1], columns)
    alt = grid_alt(title, _rows(maps, [layer * n_heads + head for head in range(n_heads)]), [names])
    narrow = tiled_overview(shown, grid, title, font_size=font_size, queries=queries, keys=keys, selected=at,
                            grid_px=PHONE_GRID_PX, alt=alt)
    added = 2 * font_size * (len(lines) - 1) + round(1.7 * font_size * len(subs))  # the title's lines past its first
    narrow._plain_parts()[1]["margin"]["t"] += added
    narrow._plain_parts()[1]["height"] += added
    return _inside(fig, narrow, alt)


def narrow_strip(fig: Figure, maps: PooledMaps, names: list[str], title: str, font_size: int = 12) -> Figure:
    """fig (a strip of tiles: maps (1, n, t, s), `names` its n tiles) with the phone's figure inside: the same
    tiles in rows that a phone's width holds."""
    count = maps.tiles.shape[1]
    columns = columns_for(count)
    shown, grid = _wrapped(maps, [(0, i) for i in range(count)], names, columns)
    alt = grid_alt(title, maps.rows, [names])  # the strip's own maps, as the wide figure described them
    narrow = tiled_overview(shown, grid, title, font_size=font_size, grid_px=PHONE_GRID_PX, alt=alt)
    return _inside(fig, narrow, alt)
