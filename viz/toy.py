"""Figures for a training watched live: loss and held-out accuracy, every head on one example,
one head in detail for a typed input, and wide against narrow heads.

Plain arrays in, Plotly figures (or a pandas table) out; the same input gives the same figure.
"""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.heads import head_name
from viz.figure import plain_figure
from viz.heatmap import attention_heatmap
from viz.tiles import tiled_heatmap

LOSS_COLOR, ACCURACY_COLOR, GUESS_COLOR, BLIND_COLOR = "#1f77b4", "#2ca02c", "#7f7f7f", "#d62728"
VARIANT_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd")


def _title(text: str, font_size: int) -> dict:
    return dict(text=text, x=0.01, y=1, yref="container", yanchor="top", pad=dict(t=12), font=dict(size=font_size + 4))


def _level(x_end: float, value: float, name: str, color: str, xaxis: str = "x", yaxis: str = "y") -> go.Scatter:
    """A dashed horizontal reference line drawn as a trace, so it is named in the legend."""
    return go.Scatter(x=[0, x_end], y=[value, value], mode="lines", name=name, xaxis=xaxis, yaxis=yaxis,
                      line=dict(color=color, dash="dash", width=1.5), hoverinfo="name")


def _check_curve(xs, ys, what: str) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = np.asarray(xs, np.float32), np.asarray(ys, np.float32)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError(f"{what}: need one value per step, got {xs.shape} steps and {ys.shape} values")
    return xs, ys


def _log_ticks(values: np.ndarray) -> dict:
    """Before the first step: 0.01 to 10. Over several decades: powers of ten only (Plotly's minor log labels,
    "2 5 2 5", read as values). Within one decade Plotly's own ticks, so the axis is never unlabelled."""
    values = values[values > 0]
    if not len(values):  # powers of ten only, the lowest clear of the corner where the step axis's 0 is written
        return {"range": [-2.3, 1.1], "dtick": 1}
    return {"dtick": 1} if np.log10(values.max() / values.min()) >= 1 else {}


def progress_figure(loss_steps, losses, eval_steps, accuracies, chance: float, blind_best: float | None = None,
                    title: str = "Training", font_size: int = 12, max_height: int | None = None) -> go.Figure:
    """Loss (left, log scale) and held-out accuracy (right, 0..1) against the training step.

    loss_steps, losses      the training loss, one point per stretch of steps (may be empty at step 0)
    eval_steps, accuracies  held-out accuracy at each evaluation
    chance                  accuracy of guessing (a dashed line); blind_best: the best any model without
                            positions can do, for tasks that need them (a second dashed line), or None
    max_height              the most the figure may take (presenter mode: the first screen)
    """
    loss_steps, losses = _check_curve(loss_steps, losses, "losses")
    eval_steps, accuracies = _check_curve(eval_steps, accuracies, "accuracies")
    x_end = float(max(loss_steps.max(initial=0), eval_steps.max(initial=0), 1))
    data = [
        go.Scatter(x=loss_steps, y=losses, mode="lines", name="training loss", line=dict(color=LOSS_COLOR),
                   hovertemplate="step %{x}: loss %{y:.3f}<extra></extra>"),
        go.Scatter(x=eval_steps, y=accuracies, mode="lines+markers", name="held-out accuracy", xaxis="x2", yaxis="y2",
                   line=dict(color=ACCURACY_COLOR), marker=dict(size=5),
                   hovertemplate="step %{x}: %{y:.1%} right<extra></extra>"),
        _level(x_end, chance, f"guessing ({chance:.0%})", GUESS_COLOR, "x2", "y2"),
    ]
    if blind_best is not None:
        data.append(_level(x_end, blind_best, f"best without positions ({blind_best:.0%})", BLIND_COLOR, "x2", "y2"))
    natural = 360 + 4 * font_size
    height = min(natural, max_height or natural)
    # the legend hangs below the step axis's labels and title, a distance in pixels: its place is a share of
    # the plot area, which a lower figure shrinks (the title, margins and the legend's rows stay)
    fixed = 70 + 6.5 * font_size
    legend_y = -(0.22 + font_size / 200) * (natural - fixed) / max(height - fixed, 1)
    layout = go.Layout(
        title=_title(title, font_size), height=height, font=dict(size=font_size),
        margin=dict(l=10, r=10, t=60 + 2 * font_size, b=10), paper_bgcolor="white", plot_bgcolor="white",
        legend=dict(orientation="h", x=0, y=legend_y, yanchor="top"),
        xaxis=dict(domain=[0, 0.44], title=dict(text="training step"), rangemode="tozero", gridcolor="#eee"),
        yaxis=dict(type="log", title=dict(text="loss (cross-entropy)"), gridcolor="#eee", automargin=True,
                   **_log_ticks(losses)),
        xaxis2=dict(domain=[0.56, 1], anchor="y2", title=dict(text="training step"), rangemode="tozero",
                    gridcolor="#eee"),
        yaxis2=dict(anchor="x2", range=[0, 1.04], tickformat=".0%", title=dict(text="held-out accuracy"),
                    gridcolor="#eee", automargin=True),
    )
    return plain_figure(go.Figure(data=data, layout=layout))


def _caption(text: str, output: str) -> str:
    return f"{html.escape(text)} → {html.escape(output)}"


def heads_figure(attention, text: str, output: str, title: str = "", font_size: int = 12) -> go.Figure:
    """Every head (rows: layers, columns: heads) on one input, one shared 0..1 scale.

    attention (L, H, t, t): each tile's rows are the places writing an answer (queries), its columns the
    places they read (keys); text is the input and output what the model writes, both t symbols."""
    attention = np.asarray(attention, np.float32)
    if attention.ndim != 4 or attention.shape[-1] != len(text) or attention.shape[-2] != len(text):
        raise ValueError(f"attention must be (layers, heads, {len(text)}, {len(text)}) for {text!r}, "
                         f"got shape {attention.shape}")
    layers, heads = attention.shape[:2]
    names = [[head_name(layer, head) for head in range(heads)] for layer in range(layers)]
    title = title or f"Every head on {_caption(text, output)}"
    return tiled_heatmap(attention, names, title=title, font_size=font_size, tile_px=150)


def sharpest_head(attention) -> tuple[int, int]:
    """(layer, head), 0-based: the head whose rows put the most weight on one position (a clear pattern
    shows best there). attention (L, H, t, t)."""
    attention = np.asarray(attention, np.float32)
    focus = attention.max(-1).mean(-1)  # (L, H)
    layer, head = np.unravel_index(int(np.argmax(focus)), focus.shape)
    return int(layer), int(head)


def head_detail(attention, text: str, output: str, layer: int, head: int, font_size: int = 12) -> go.Figure:
    """One head in detail: each row is labelled "read → written" at its position (from 1), each column by its
    symbol."""
    rows = [f"{i}: {a}→{b}" for i, (a, b) in enumerate(zip(text, output), start=1)]  # positions from 1
    keys = [f"{a}" for a in text]
    return attention_heatmap(np.asarray(attention, np.float32)[layer, head], rows, keys, font_size=font_size,
                             title=f"{head_name(layer, head)} in detail: {_caption(text, output)}")


def comparison_figure(runs: dict, chance: float, font_size: int = 12) -> go.Figure:
    """Held-out accuracy of several runs, against the step (left) and against the seconds each used (right).

    runs: label -> (eval_steps, eval_seconds, accuracies), for example {"narrow": ..., "wide": ...}."""
    data, x_end, t_end = [], 1.0, 1.0
    for n, (label, (steps, seconds, accuracies)) in enumerate(runs.items()):
        steps, accuracies = _check_curve(steps, accuracies, label)
        seconds, _ = _check_curve(seconds, accuracies, label)
        color = VARIANT_COLORS[n % len(VARIANT_COLORS)]
        data.append(go.Scatter(x=steps, y=accuracies, mode="lines", name=label, legendgroup=label, line=dict(color=color),
                               hovertemplate=f"{label}, step %{{x}}: %{{y:.1%}}<extra></extra>"))
        data.append(go.Scatter(x=seconds, y=accuracies, mode="lines", name=label, legendgroup=label, showlegend=False,
                               xaxis="x2", yaxis="y2", line=dict(color=color),
                               hovertemplate=f"{label}, %{{x:.1f}} s: %{{y:.1%}}<extra></extra>"))
        x_end, t_end = max(x_end, float(steps.max(initial=0))), max(t_end, float(seconds.max(initial=0)))
    data.append(_level(x_end, chance, f"guessing ({chance:.0%})", GUESS_COLOR))
    layout = go.Layout(
        title=_title("Held-out accuracy: per training step (left) and per second of computing (right)", font_size),
        height=340 + 4 * font_size, font=dict(size=font_size), paper_bgcolor="white", plot_bgcolor="white",
        margin=dict(l=10, r=10, t=60 + 2 * font_size, b=10),
        legend=dict(orientation="h", x=0, y=-0.22 - font_size / 200, yanchor="top"),
        xaxis=dict(domain=[0, 0.46], title=dict(text="training step"), rangemode="tozero", gridcolor="#eee"),
        yaxis=dict(range=[0, 1.04], tickformat=".0%", title=dict(text="held-out accuracy"), gridcolor="#eee"),
        xaxis2=dict(domain=[0.54, 1], anchor="y2", range=[0, t_end * 1.02], title=dict(text="seconds"),
                    gridcolor="#eee"),
        yaxis2=dict(anchor="x2", range=[0, 1.04], tickformat=".0%", gridcolor="#eee"),
    )
    return plain_figure(go.Figure(data=data, layout=layout))


def comparison_heads(attention: dict, text: str, font_size: int = 12) -> go.Figure:
    """Every head of several runs on the same input, one row per run: label -> (L, H, t, t)."""
    maps = [np.asarray(a, np.float32) for a in attention.values()]
    shapes = {m.shape for m in maps}
    if len(shapes) != 1 or maps[0].ndim != 4:
        raise ValueError(f"every run must give (layers, heads, t, t) of the same shape, got {sorted(shapes)}")
    layers, heads = maps[0].shape[:2]
    tiles = np.stack([m.reshape(layers * heads, *m.shape[2:]) for m in maps])  # (runs, L·H, t, t)
    names = [[f"{label} {head_name(layer, head)}" for layer in range(layers) for head in range(heads)]
             for label in attention]
    return tiled_heatmap(tiles, names, title=f"The heads side by side, reading {html.escape(text)}",
                         font_size=font_size, tile_px=130)


def steps_to(eval_steps, accuracies, goal: float) -> int | None:
    """The first evaluated step at which accuracy reached `goal` (None if it never did)."""
    for step, accuracy in zip(eval_steps, accuracies):
        if accuracy >= goal:
            return int(step)
    return None


def comparison_table(rows: list[dict]) -> pd.DataFrame:
    """One row per run: rows of dicts with label, parameters, steps, seconds, accuracy, eval_steps, accuracies."""
    table = []
    for row in rows:
        reached = steps_to(row["eval_steps"], row["accuracies"], 0.95)
        table.append({
            "heads": row["label"],
            "parameters": int(row["parameters"]),
            "steps": int(row["steps"]),
            "seconds": round(float(row["seconds"]), 1),
            "steps per second": round(row["steps"] / row["seconds"]) if row["seconds"] else 0,
            "steps to 95%": "not reached" if reached is None else reached,
            "held-out accuracy": f"{row['accuracy']:.1%}",
        })
    return pd.DataFrame(table)
