"""The logit lens as layers × positions: what each layer would predict at each position.

Rows are layers, the first at the bottom (the residual stream rises through the stack, as it is drawn in
the lecture notes); columns are the positions, labelled with the token each has just read. Each cell names
the top token read there and is coloured by a probability: the top token's own, or the one given to the
model's final answer at that position (the last row's token). Numbers come from experiments.lens.LensReading.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.describe import plain
from viz.figure import colorscale, figure
from viz.heatmap import HIGHLIGHT, row_label_margin
from viz.labels import axis_ticks, every_labelled, label_step, smallest_text, token_label, token_labels

COLORSCALE = colorscale("Greens")
CELL_TEXT_MAX = 40  # past this many positions the cells are too narrow to name their token: the hover does
# The plot area a 390-px phone leaves the Lens (px). A 1-px white line between cells narrower than 6 px hides them:
# at 120 positions the phone drew an empty figure. Gaps only where even that width leaves 6 px a cell (as heatmap.py).
PHONE_PLOT_PX = 140


def labelled_layers(layers: int, step: int) -> list[int]:
    """The layers (0-based) labelled every step-th, counted down from the last, so the final answer's row always is."""
    return sorted(range(layers - 1, -1, -step))


def window_sentence(first: int, shown: int, total: int) -> str:
    """What a long input's lens reads, in words ("" where it reads every position): first (0-based) the first
    position read, shown how many, total the input's length (experiments.lens.LensReading.start, n_positions)."""
    if first == 0:
        return ""
    return (f"A long input: the Lens reads the last {shown} of its {total} positions "
            f"(positions {first + 1}–{total}); shorten the text to see earlier ones.")


def lens_heatmap(z, top_tokens, tokens, alternatives=None, alt_probs=None, title: str = "", value: str = "probability",
                 font_size: int = 12, mark: tuple[int, int] | None = None, numbers: bool = False,
                 max_height: int | None = None, first: int = 0) -> go.Figure:
    """z (L, t) in 0..1; top_tokens L lists of t labels (written in the cells, or with numbers=True the value z);
    tokens: the t positions' labels. alternatives/alt_probs (L, t, n): the hover lists them. mark (layer, position),
    0-based: outlined. max_height: the most the figure may take (presenter mode's first screen): where a layer's row
    is then too low for its label, every k-th layer is labelled and written in (from the last down), and the axis
    title says so; every layer stays on hover and in the text alternative. first (0-based): the position of the first
    column, where the lens read a long input's last positions only (LensReading.start): columns sit at their true
    positions, the axis title names the range and the text alternative says so (window_sentence); mark's position
    counts from the first column."""
    z = np.asarray(z, dtype=np.float32)
    layers, t = z.shape
    if len(tokens) != t or len(top_tokens) != layers or any(len(row) != t for row in top_tokens):
        raise ValueError(f"labels do not match the reading's shape {z.shape}")
    cells = [[token_label(token) for token in row] for row in top_tokens]
    positions = token_labels(tokens)
    if alternatives is not None:
        hover = [[f"layer {l + 1} · position {first + i + 1}, after {positions[i]}<br>" + "<br>".join(
            f"{token_label(a)}: {p:.2f}" for a, p in zip(alternatives[l][i], alt_probs[l][i]))
            for i in range(t)] for l in range(layers)]
    else:
        hover = [[f"layer {l + 1} · position {first + i + 1}, after {positions[i]}: {cells[l][i]}" for i in range(t)]
                 for l in range(layers)]
    cell_px = min(6 * font_size, max(12, 1100 / max(t, 1)))
    height = int(max(260, layers * max(34, 2.6 * font_size) + 170 + 4 * font_size))
    top_margin, bottom_margin = 60 + 2 * font_size, 10 + 5 * font_size
    if max_height and height > max_height:  # the rows share what the title and the position labels leave
        height, top_margin = max_height, 30 + 2 * font_size
    row_px = (height - top_margin - bottom_margin) / layers
    # a label (of a layer, or in a cell) in the smallest readable text needs 1.25 of its size: past that, every k-th
    small = smallest_text(font_size)
    tick_size = int(min(font_size, max(small, row_px / 1.25)))
    layer_step = max(1, int(np.ceil(1.25 * tick_size / row_px)))
    shown_layers = labelled_layers(layers, layer_step)
    trace = dict(type="heatmap", z=z, x=first + np.arange(t), y=np.arange(layers), zmin=0.0, zmax=1.0,
                 colorscale=COLORSCALE,
                 text=np.array(hover, dtype=object), hovertemplate=f"%{{text}}<br>{value}: %{{z:.2f}}<extra></extra>",
                 xgap=1 if PHONE_PLOT_PX / max(t, 1) >= 6 else 0, ygap=1 if row_px >= 6 else 0,
                 colorbar=dict(title=dict(text=value), thickness=12, len=0.9))
    traces = [trace]
    if t <= CELL_TEXT_MAX:  # the top token written in its cell, dark on light cells and light on dark ones
        written = [(l, i) for l in shown_layers for i in range(t)]
        # a label as wide as its cell leaves (a character ~0.62 em; the plot is ~900 px of a 1280-px screen)
        longest = max((len(f"{z[l, i]:.2f}" if numbers else plain(cells[l][i])) for l, i in written), default=1)
        cell_size = max(small, min(font_size, int(min(cell_px, 900 / max(t, 1)) / (0.62 * min(longest, 12) + 0.6)),
                                   int(layer_step * row_px / 1.25)))
        traces.append(dict(type="scatter", mode="text", x=[first + i for _, i in written], y=[l for l, _ in written],
                           text=[f"{z[l, i]:.2f}" if numbers else cells[l][i] for l, i in written],
                           textfont=dict(size=cell_size, color=["white" if z[l, i] > 0.6 else "black"
                                                                for l, i in written]),
                           hoverinfo="skip", showlegend=False))
    shapes = []
    if mark is not None:
        l, i = mark
        shapes.append(dict(type="rect", x0=first + i - 0.5, x1=first + i + 0.5, y0=l - 0.5, y1=l + 0.5,
                           line=dict(color=HIGHLIGHT, width=3)))
    step = label_step(t)
    # a window's range, short: a phone's 330 px hold it on one line (ui/page/phone.py puts its "every k-th" below)
    x_title = ("position (the token it has just read)" if first == 0
               else f"positions {first + 1}–{first + t} of {first + t}")
    layer_names = [f"layer {l + 1}" for l in shown_layers]
    layout = dict(
        title=dict(text=title, x=0.01, y=1, yref="container", yanchor="top", pad=dict(t=12), font=dict(size=font_size + 4)),
        height=height, font=dict(size=font_size), paper_bgcolor="white", plot_bgcolor="white", shapes=shapes,
        margin=dict(l=row_label_margin(layer_names, tick_size), r=10, t=top_margin, b=bottom_margin),
        hoverlabel=dict(font=dict(size=font_size + 2)),
        xaxis=dict(**axis_ticks(tokens, offset=first), side="bottom", tickangle=-45, automargin=False, showgrid=False,
                   title=dict(text=x_title + every_labelled(step))),
        yaxis=dict(tickmode="array", tickvals=shown_layers, ticktext=layer_names, showgrid=False, automargin=False,
                   tickfont=dict(size=tick_size), title=dict(text="after layer" + every_labelled(layer_step),
                                                             font=dict(size=tick_size))),
    )
    # cell_labels: the page script leaves the cells' labels out (and says so) where they would overlap, as on a
    # phone, where the figure is a third as wide as the 1100 px their size is chosen for (ui/page/accessibility.py);
    # thin_x: it labels every k-th position where their labels would overlap, and titles the axis with this name and
    # which are labelled (the whole title would not fit a phone's width; a long input's window keeps its range)
    layout["meta"] = dict(alt=lens_alt(title, z, cells, positions, value, mark, first), cell_labels=t <= CELL_TEXT_MAX,
                          thin_x="position" if first == 0 else f"positions {first + 1}–{first + t}")
    return figure(traces, layout)


def lens_alt(title: str, z, cells, positions, value: str, mark=None, first: int = 0) -> str:
    """The lens in words, with the tokens: at the outlined position (else the last), the top token after each
    layer from layer 1 up with the value coloured, and where the final answer holds from; a long input's window
    said first (window_sentence)."""
    layers, t = z.shape
    i = mark[1] if mark is not None else t - 1
    column = "; ".join(f"layer {l + 1}: “{plain(cells[l][i])}” {z[l, i]:.2f}" for l in range(layers))
    window = window_sentence(first, t, first + t)
    said = (f"{plain(title)}. {window + ' ' if window else ''}{layers} layers by {t} positions. "
            f"After “{plain(positions[i])}” (position {first + i + 1}) "
            f"the top token and its {plain(value)}, layer 1 up: {column}.")
    if mark is not None:
        said += f" Outlined: layer {mark[0] + 1}, from which the final answer “{plain(cells[-1][i])}” stays on top."
    return said
