"""Multi-head attention: every head of one layer side by side, and what wide and
narrow heads cost."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.tiles import tiled_heatmap

PER_ROW = 4  # heads side by side: 12 in one strip left each tile too small to read its tokens


def heads_figure(probs, layer: int, mask=None, font_size: int = 12, title: str | None = None, queries=None,
                 keys=None) -> go.Figure:
    """probs (H, t, s) of one layer -> rows of at most PER_ROW tiles with a shared 0..1 scale, each tile's
    rows and columns labelled with the tokens. `layer` is 0-based. queries/keys (optional): token labels."""
    probs = np.asarray(probs, np.float32)
    if probs.ndim != 3:
        raise ValueError(f"probs must be (heads, t, s) for one layer, got shape {probs.shape}")
    heads, t, s = probs.shape
    cols = min(heads, PER_ROW)
    rows = -(-heads // cols)
    # a last row with fewer heads is padded with empty tiles (weight 0, no name)
    tiles = np.zeros((rows * cols, t, s), np.float32)
    tiles[:heads] = probs
    names = [[f"head {r * cols + c + 1}" if r * cols + c < heads else "" for c in range(cols)] for r in range(rows)]
    title = title or f"Layer {layer + 1}: every head on the same sentence"
    return tiled_heatmap(tiles.reshape(rows, cols, t, s), names, title=title, mask=mask, font_size=font_size,
                         tile_px=260, queries=queries, keys=keys, token_ticks=True)


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
