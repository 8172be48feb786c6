"""Figures for the interventions view: head importance, guesses before and after, and
attention beside rollout and gradient × input."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figure import plain_figure
from viz.heatmap import _layout
from viz.labels import token_label
from viz.panels import Panel, heatmap_row

KNOCKED_OUT = {"zero": "zeroed", "uniform": "made uniform"}  # short: the title fits a presenter-mode panel
KIND_TITLES = {"self": "self-attention", "encoder": "encoder self-attention",
               "decoder": "decoder self-attention", "cross": "cross-attention"}


def importance_figure(maps: dict, what: str, font_size: int = 12, title: str = "", method: str = "",
                      estimated: bool = False, max_height: int | None = None) -> go.Figure:
    """One layers × heads panel per attention kind: how much knocking out that head alone moves
    the output (`what`, e.g. "drop in log-probability"). maps: kind -> (L, H) array. method: how the
    heads were knocked out ("zero" or "uniform"), named in the title (the ranking depends on it).
    estimated: the maps are an estimate (experiments/importance.py), and the title says so. max_height: the most
    the figure may take (presenter mode's first screen): a layer label on every k-th row where 30 do not fit."""
    if not maps:
        raise ValueError("importance_figure needs at least one kind of attention: {kind: (layers, heads) array}")
    panels = []
    reach = max(float(np.abs(np.asarray(m, dtype=np.float32)).max()) for m in maps.values()) or 1.0
    for kind, effect in maps.items():
        effect = np.asarray(effect, dtype=np.float32)
        if effect.ndim != 2:
            raise ValueError(f"{kind}: the effect map must be (layers, heads), got shape {effect.shape}")
        layers, heads = effect.shape
        panels.append(Panel(effect, KIND_TITLES.get(kind, kind), rows=[f"L{i + 1}" for i in range(layers)],
                            cols=[f"H{j + 1}" for j in range(heads)], signed=True, value=what,
                            row_title="layer", zmax=reach))  # one scale: the kinds compare by colour
    n_rows = max(np.shape(m)[0] for m in maps.values())
    height = int(220 + 48 * n_rows * (1 + font_size / 40))
    how = KNOCKED_OUT.get(method, "knocked out") + (", estimated" if estimated else "")
    # short: fits a presenter-mode panel; "estimated" made minilm's run past its right edge, so it takes two lines
    return heatmap_row(panels, title=title or f"One head {how}:{'<br>' if estimated else ' '}{what}",
                       font_size=font_size, height=height, max_height=max_height)


def guesses_figure(before: list, after: list, what: str, font_size: int = 12) -> go.Figure:
    """The top guesses before and after the intervention, as paired horizontal bars.
    before / after: [(label, probability), ...], most likely first."""
    labels = list(dict.fromkeys([label for label, _ in before] + [label for label, _ in after]))
    if not labels:
        raise ValueError("guesses_figure needs at least one (label, probability) pair")
    b, a = dict(before), dict(after)
    y = [token_label(label) for label in labels]
    bars = [go.Bar(name="before", y=y, x=[b.get(label, 0.0) for label in labels], orientation="h",
                   marker_color="#4c78a8", hovertemplate="%{y}: %{x:.1%} before<extra></extra>"),
            go.Bar(name="after", y=y, x=[a.get(label, 0.0) for label in labels], orientation="h",
                   marker_color="#f58518", hovertemplate="%{y}: %{x:.1%} after<extra></extra>")]
    layout = _layout(f"Top guesses for the {what}, before and after", int(140 + 26 * len(labels) * (1 + font_size / 30)),
                     font_size, barmode="group",
                     xaxis=dict(range=[0, 1], tickformat=".0%", title=dict(text="probability")),
                     yaxis=dict(autorange="reversed", ticklabeloverflow="allow"),
                     legend=dict(orientation="h", y=-0.2))
    layout["plot_bgcolor"] = "white"
    return plain_figure(go.Figure(data=bars, layout=layout))


def explanations_figure(tokens, rows: dict, font_size: int = 12, title: str = "") -> go.Figure:
    """Each explanation (name -> (t,) shares of the input tokens, summing to 1) as one row of a
    heatmap over the same tokens, on one colour scale so they compare cell by cell."""
    tokens = list(tokens)
    names = list(rows)
    if not names:
        raise ValueError("explanations_figure needs at least one row: {name: (tokens,) shares}")
    z = np.stack([np.asarray(rows[name], dtype=np.float32) for name in names])
    if z.shape[1] != len(tokens):
        raise ValueError(f"{z.shape[1]} values per row for {len(tokens)} tokens: pass one value per token")
    panel = Panel(z, "", rows=names, cols=tokens, signed=False, value="share", zmax=float(max(z.max(), 1e-6)))
    return heatmap_row([panel], title=title or "Which input tokens the output draws on, three ways",
                       font_size=font_size, height=int(240 + 40 * len(names) * (1 + font_size / 40)))
