"""The head finder's figure: every head of a model as one point, by two corpus scores, coloured by layer.

One scatter trace holds every head (270 points for smollm2 draw as fast as 16); each point's customdata is its
name ("L19 H7"), which a click sends to the server (ui/runtime/tile_click.py). The heads ranked first by the
chosen score are ringed and numbered by rank, so the ranking and the scatter point at the same heads.
"""
from __future__ import annotations

import numpy as np

from viz.figure import colorscale, figure
from viz.labels import kept_apart, plot_scale

RING_COLOR = "#d62728"

NAMED = 5  # the strongest heads ringed and numbered on the figure

def bar_below(font_size: int) -> int:
    """px from the plot's bottom to the colour bar's top: under the x axis's numbers and its title."""
    return 36 + 3 * font_size


def scatter(names: list[str], layers, x, y, x_label: str, y_label: str, ranked: list[str], title: str,
            font_size: int = 12, height: int = 460, selected: str | None = None) -> dict:
    """names (n,) head names; layers (n,) 1-based layers; x, y (n,) the two scores (NaN: the head has no such
    score, and is left out); ranked: head names strongest first by the ranking's score (its first NAMED are
    ringed and numbered); selected: the head open in the one-head view, outlined."""
    x, y, layers = (np.asarray(a, dtype=np.float32) for a in (x, y, layers))
    if not (len(names) == len(x) == len(y) == len(layers)):
        raise ValueError(f"one name, layer, x and y per head: got {len(names)}, {len(layers)}, {len(x)}, {len(y)}")
    shown = np.isfinite(x) & np.isfinite(y)
    kept = np.flatnonzero(shown)
    top_layer = float(layers.max()) if len(layers) else 1.0
    margin = dict(l=56, r=24, t=64, b=bar_below(font_size) + 24 + 2 * font_size)  # the bar, its numbers under it
    plot_height = max(height - margin["t"] - margin["b"], 80)
    hover = (f"%{{customdata}}<br>{x_label}: %{{x:.3f}}<br>{y_label}: %{{y:.3f}}<br>layer %{{marker.color}}"
             "<extra></extra>")
    data = [dict(type="scatter", mode="markers", name="heads", x=x[kept], y=y[kept],
                 customdata=[names[i] for i in kept], hovertemplate=hover,
                 marker=dict(color=layers[kept], colorscale=colorscale("Viridis"), cmin=1, cmax=max(top_layer, 2),
                             size=9 + font_size // 4, opacity=0.85, line=dict(width=0.5, color="white"),
                             # under the plot, across: on a 390 px phone a colour bar at the side took a third of
                             # the plot's width
                             colorbar=dict(title=dict(text="layer"), orientation="h", thickness=10, len=0.6,
                                           x=0.5, xanchor="center", y=-bar_below(font_size) / plot_height,
                                           yanchor="top")))]
    index = {name: i for i, name in enumerate(names)}
    top = [index[n] for n in ranked[:NAMED] if n in index and shown[index[n]]]
    if top:
        # each number beside its ring on the side where it meets no number placed before it (two heads on one spot
        # keep both numbers); kept apart for a plot at least as wide as it is tall
        scale = plot_scale(x[kept], y[kept], plot_height, plot_height)
        sides = ("middle right", "middle left", "top center", "bottom center", "top right", "bottom left")
        placed = kept_apart([(x[i], y[i]) for i in top], [str(k + 1) for k in range(len(top))], font_size, scale,
                            sides)
        data.append(dict(type="scatter", mode="markers+text", name=f"strongest {len(top)}", x=x[top], y=y[top],
                         # their ranks, not their names: the strongest heads often sit close together, and five
                         # names overlapped there (the ranking beside the figure names them; a hover too)
                         customdata=[names[i] for i in top],
                         text=[str(k + 1) if where else "" for k, where in enumerate(placed)],
                         textposition=[where or "middle right" for where in placed],
                         cliponaxis=False,
                         textfont=dict(size=font_size, color=RING_COLOR), hovertemplate=hover,
                         marker=dict(size=18 + font_size // 3, color="rgba(0,0,0,0)",
                                     line=dict(width=2, color=RING_COLOR))))
    if selected in index and shown[index[selected]]:
        i = index[selected]
        data.append(dict(type="scatter", mode="markers", name="open", x=x[[i]], y=y[[i]], customdata=[selected],
                         hovertemplate=hover, marker=dict(size=24 + font_size // 3, symbol="square-open",
                                                          color="black", line=dict(width=2.5))))
    layout = dict(title=dict(text=title, font=dict(size=font_size + 2)), height=height, showlegend=False,
                  font=dict(size=font_size), margin=margin, hovermode="closest",
                  xaxis=dict(title=dict(text=x_label), zeroline=False),
                  # the numbers of the two axes' lowest ticks met at the corner: the y axis's stand a character off
                  yaxis=dict(title=dict(text=y_label), zeroline=False, ticklabelstandoff=int(0.7 * font_size)),
                  meta=dict(alt=alt_text(names, x, y, x_label, y_label, ranked, title)))
    return figure(data, layout)


def alt_text(names, x, y, x_label: str, y_label: str, ranked: list[str], title: str) -> str:
    """The figure in words: how many heads, the highest on each axis, the strongest by the ranking's score."""
    finite = np.isfinite(x) & np.isfinite(y)
    if not finite.any():
        return f"{title}: no head has both scores."
    best_x = int(np.nanargmax(np.where(finite, x, np.nan)))
    best_y = int(np.nanargmax(np.where(finite, y, np.nan)))
    return (f"{title}: {int(finite.sum())} heads. Highest {x_label}: {names[best_x]} ({x[best_x]:.2f}); highest "
            f"{y_label}: {names[best_y]} ({y[best_y]:.2f}). Strongest by the ranking: {', '.join(ranked[:NAMED])}.")
