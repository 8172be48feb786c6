"""Positional encoding: the sinusoid table, chosen dimensions as waves, how similar
positions are, learned versus fixed vectors, and what a position adds to each token.

Tables are (positions n, dimensions k) float arrays; `t` is the current sentence's
length, marked on every figure.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figure import plain_figure
from viz.panels import Panel, heatmap_row

SENTENCE_COLOR = "#ff7f0e"
WAVE_COLORS = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"]  # no orange


def _mark_sentence(fig: go.Figure, t: int, n_cols: int, col: int = 1, col_from: int = 0):
    """An orange frame around the rows (positions, counted from 1) the current sentence uses, in panel `col`
    (its columns counted from col_from)."""
    axis = "" if col == 1 else str(col)
    fig.add_shape(type="rect", x0=col_from - 0.5, x1=col_from + n_cols - 0.5, y0=0.5, y1=t + 0.5, xref=f"x{axis}",
                  yref=f"y{axis}",
                  line=dict(color=SENTENCE_COLOR, width=2))
    return plain_figure(fig)


def robust_reach(table, share: float = 99.0, outlier: float = 2.0) -> tuple[float, bool]:
    """The colour range of a signed table: its largest |value|, or the `share` percentile of |values| where a
    few values reach `outlier` times past it (minilm's learned positions: one dimension would wash out the
    rest). Returns (reach, whether values beyond it are drawn at full colour)."""
    magnitude = np.abs(np.asarray(table, np.float64))
    largest = float(magnitude.max()) if magnitude.size else 1.0
    typical = float(np.percentile(magnitude, share)) if magnitude.size else 1.0
    if typical > 0 and largest > outlier * typical:
        return typical, True
    return (largest or 1.0), False


def tables_figure(tables: dict, t: int, font_size: int = 12) -> go.Figure:
    """Each named (n, k) table as a positions × dimensions heatmap, the sentence's positions framed."""
    if not tables:
        raise ValueError("tables_figure needs at least one table")
    panels = []
    for name, table in tables.items():
        table = np.asarray(table, np.float32)
        reach, clipped = robust_reach(table)
        if clipped:
            name += f"<br>(colours end at ±{reach:.2g}, where 99% of values lie)"
        panels.append(Panel(table, name, None, None, value="value", row_title="position", col_title="dimension",
                            zmax=reach, row_from=1))
    fig = heatmap_row(panels, title="Position vectors: one row per position (orange: this sentence)",
                      font_size=font_size, height=520)
    for i, table in enumerate(tables.values(), start=1):
        _mark_sentence(fig, min(t, len(table)), np.shape(table)[1], col=i)
    return plain_figure(fig)


def waves_figure(table, dims, t: int, font_size: int = 12) -> go.Figure:
    """PE[:, dim] against position for the chosen dimensions; dots on the sentence's positions."""
    table = np.asarray(table, np.float32)
    n, k = table.shape
    bad = [d for d in dims if not 0 <= d < k]
    if bad or not dims:
        raise ValueError(f"dimensions must be between 0 and {k - 1}; got {list(dims)}")
    fig = go.Figure()
    positions = np.arange(n)
    shown = positions[: min(t, n)]
    counted = positions + 1  # positions as every view counts them, from 1 (PE's row 0 is position 1)
    for i, d in enumerate(dims):
        # each dimension's dots in its own line's colour, outlined: one colour for all read as one line's
        color = WAVE_COLORS[i % len(WAVE_COLORS)]
        fig.add_trace(go.Scatter(x=counted, y=table[:, d], mode="lines", name=f"dim {d}", line=dict(color=color),
                                 legendgroup=f"dim {d}",
                                 hovertemplate=f"dim {d}<br>position %{{x}}: %{{y:.3f}}<extra></extra>"))
        fig.add_trace(go.Scatter(x=shown + 1, y=table[shown, d], mode="markers", name="this sentence's positions",
                                 showlegend=i == 0, legendgroup=f"dim {d}",
                                 marker=dict(color=color, size=7, line=dict(color="#222222", width=1)),
                                 hoverinfo="skip"))
    fig.update_layout(
        title=dict(text="Sinusoids: low dimensions wave fast, high dimensions slowly (dots: this sentence)", x=0.01,
                   font=dict(size=font_size + 4)),
        height=380, font=dict(size=font_size), xaxis_title="position", yaxis_title="value",
        margin=dict(l=10, r=10, t=60 + 2 * font_size, b=10), paper_bgcolor="white",
    )
    return plain_figure(fig)


def similarity_figure(similarities: dict, t: int, font_size: int = 12) -> go.Figure:
    """Named (n, n) cosine similarity matrices between positions, the sentence's block framed."""
    panels = [Panel(np.asarray(s, np.float32), name, None, None, value="cosine similarity", row_title="position",
                    col_title="position", row_from=1, col_from=1) for name, s in similarities.items()]
    fig = heatmap_row(panels, title="How alike are two positions? (cosine similarity of their vectors)",
                      font_size=font_size, height=520)
    for i, s in enumerate(similarities.values(), start=1):
        _mark_sentence(fig, min(t, len(s)), min(t, len(s)), col=i, col_from=1)
    return plain_figure(fig)


def addition_figure(token_embeddings, position_embeddings, tokens, font_size: int = 12, normed=None,
                    rotary: bool = False) -> go.Figure:
    """token embedding + position vector = what the first layer reads, for each token (t, k). normed: the
    sum after the model's embedding LayerNorm (BERT), which is then what the first layer reads.
    rotary: the model adds none (its zero vectors are drawn, and the title says why)."""
    tok = np.asarray(token_embeddings, np.float32)
    pos = np.asarray(position_embeddings, np.float32)
    if tok.shape != pos.shape:
        raise ValueError(f"token embeddings {tok.shape} and position vectors {pos.shape} must match")
    summed = "= sum" if normed is not None else "= input to layer 1"
    panels = [
        Panel(tok, "token embedding", tokens, None, value="value", col_title="dimension"),
        Panel(pos, "+ position vector (none: rotary, q and k turn)" if rotary else "+ position vector", tokens,
              None, value="value", col_title="dimension"),
        Panel(tok + pos, summed, tokens, None, value="value", col_title="dimension"),
    ]
    if normed is not None:
        normed = np.asarray(normed, np.float32)
        if normed.shape != tok.shape:
            raise ValueError(f"the normalised sum {normed.shape} must match the embeddings {tok.shape}")
        panels.append(Panel(normed, "LayerNorm(sum) = input to layer 1", tokens, None, value="value",
                            col_title="dimension"))
    return heatmap_row(panels, title="What the position adds to each token", font_size=font_size)


def _order_panels(demo) -> list[list[Panel]]:
    """For no positions and with positions: original, shuffled put back in order (beside the original, so
    the two compare cell by cell and share its labels), and the shuffled sentence's own weights. Columns
    follow the rows' order, so only rows are labelled (every label costs the browser drawing time)."""
    tokens, shuffled = demo.tokens, demo.shuffled_tokens
    rows = []
    for label, original, mixed in (("no positions", demo.plain, demo.plain_shuffled),
                                   ("with positions", demo.positioned, demo.positioned_shuffled)):
        top = float(max(np.max(original), np.max(mixed)))  # one scale per row, stretched so patterns show
        rows.append([
            Panel(original, f"{label}: original", tokens, tokens, signed=False, value="weight", zmax=top,
                  col_labels=False),
            Panel(demo.put_back(mixed), f"{label}: shuffled, put back", tokens, tokens, signed=False,
                  value="weight", zmax=top, col_labels=False),
            Panel(mixed, f"{label}: shuffled, as computed", shuffled, shuffled, signed=False, value="weight", zmax=top,
                  col_labels=False),
        ])
    return rows


def order_figures(demo, font_size: int = 12) -> tuple[go.Figure, go.Figure]:
    """Weights of one first-layer head without and with positions, for the original and the
    shuffled sentence, and the shuffled weights put back into the original order.

    demo: model.order.OrderDemo (tokens, shuffled_tokens, plain*, positioned*, put_back)."""
    rows = _order_panels(demo)
    where = f"{demo.layer_name}, head {demo.head + 1}"
    plain = heatmap_row(rows[0], title=f"Without positions ({where}): the same weights, permuted "
                                       f"(largest difference after putting back: {demo.plain_difference:.1e})",
                        font_size=font_size, colorbars=False)
    positioned = heatmap_row(rows[1], title=f"With positions: order changes the weights "
                                            f"(largest difference after putting back: {demo.positioned_difference:.2f})",
                             font_size=font_size, colorbars=False)
    return plain, positioned
