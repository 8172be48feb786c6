"""The next-token distribution before and after temperature, top-k and top-p (analysis.sampling), as bars."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.describe import plain
from viz.figure import figure
from viz.labels import token_labels

STAGES = (("before", "before (T = 1, every token)", "#c7c7c7"), ("tempered", "after the temperature", "#9ecae1"),
          ("top_k", "after top-k", "#4292c6"), ("after", "after top-p: sampled from", "#08519c"))
SHOWN = 12  # tokens drawn: the likeliest before or after the settings


def shown_tokens(before, after, n: int = SHOWN, include: int | None = None) -> np.ndarray:
    """The indices to draw: `include` (the token drawn), the likeliest after the settings, then before; n at most,
    likeliest first."""
    before, after = np.asarray(before), np.asarray(after)
    kept = np.argsort(-after, kind="stable")[: n // 2]
    kept = kept[after[kept] > 0]  # a token the settings cut is drawn only as one of the likeliest before them
    order = ([] if include is None else [include]) + list(kept) \
        + list(np.argsort(-before, kind="stable")[:n])
    picked = list(dict.fromkeys(int(i) for i in order))[:n]
    return np.array(sorted(picked, key=lambda i: (-after[i], -before[i])))


def distribution_figure(stages: dict, labels, title: str = "", font_size: int = 12,
                        sampled: int | None = None, only_before: bool = False) -> go.Figure:
    """stages: name -> (v,) probabilities (analysis.sampling.Distribution's fields); labels(token id) -> its label.
    sampled: the token id drawn, outlined. only_before: the first stage alone, its tokens chosen by it alone (quiz
    mode: what the settings keep is the question; `stages` may then hold "before" only). Bars sit on positions (two
    tokens may print alike)."""
    index = shown_tokens(stages["before"], stages["before" if only_before else "after"], include=sampled)
    names = token_labels([labels(int(i)) for i in index])
    x = np.arange(len(index))
    traces = [dict(type="bar", x=x, y=np.asarray(stages[key])[index].astype(np.float32), name=label, text=names,
                   marker=dict(color=color), hovertemplate="%{text}: %{y:.3f}<extra>" + label + "</extra>",
                   textposition="none")
              for key, label, color in (STAGES[:1] if only_before else STAGES)]
    annotations = []
    if sampled is not None and sampled in set(index.tolist()):
        at = int(np.where(index == sampled)[0][0])
        height = float(max(np.asarray(stages[key])[sampled] for key, _, _ in STAGES))
        annotations.append(dict(x=at, y=height, text="drawn", showarrow=True, arrowhead=2, ax=0, ay=-28,
                                font=dict(color="#ff7f0e", size=font_size + 1), arrowcolor="#ff7f0e"))
    layout = dict(
        title=dict(text=title, x=0.01, y=1, yref="container", yanchor="top", pad=dict(t=12), font=dict(size=font_size + 4)),
        barmode="group", height=360 + 6 * font_size, font=dict(size=font_size), paper_bgcolor="white",
        plot_bgcolor="white", annotations=annotations, legend=dict(orientation="h", x=0, y=1.0, yanchor="bottom"),
        margin=dict(l=50 + font_size, r=10, t=90 + 3 * font_size, b=20 + 5 * font_size),
        xaxis=dict(tickmode="array", tickvals=x, ticktext=names, tickangle=-45, automargin=False,
                   ticklabeloverflow="allow"),
        # up to the tallest bar, not 1: lm's usual top token has 0.015, and on 0..1 every bar drew as a flat line
        yaxis=dict(title=dict(text="probability"), range=[0, top_of(stages, index, only_before)], gridcolor="#eee"),
        hoverlabel=dict(font=dict(size=font_size + 2)),
    )
    layout["meta"] = dict(alt=distribution_alt(title, stages, index, names, sampled, only_before))
    return figure(traces, layout)


def top_of(stages: dict, index, only_before: bool = False) -> float:
    """The y axis's top: the tallest bar drawn and a margin for the "drawn" arrow, at most 1."""
    keys = ("before",) if only_before else tuple(key for key, _, _ in STAGES)
    tallest = max(float(np.max(np.asarray(stages[key])[index])) for key in keys)
    return min(1.0, max(tallest * 1.25, 0.01))


def distribution_alt(title: str, stages: dict, index, names, sampled=None, only_before: bool = False) -> str:
    """The bars in words, with the tokens: the likeliest before the settings and after them, how many of those
    shown can still be drawn, and the token drawn."""
    def likeliest(key: str) -> str:
        p = np.asarray(stages[key])[index]
        order = np.argsort(-p, kind="stable")[:3]
        return ", ".join(f"“{plain(names[i])}” {p[i]:.3f}" for i in order if p[i] > 0)
    said = f"{plain(title)}. {len(index)} tokens, the likeliest first. Before the settings: {likeliest('before')}."
    if only_before:
        return said
    kept = int((np.asarray(stages["after"])[index] > 0).sum())
    said += (f" After them: {likeliest('after')}; {kept} of the {len(index)} tokens shown can be drawn"
             f"{'' if kept else ' (none)'}.")
    if sampled is not None and sampled in set(int(i) for i in index):
        at = int(np.where(np.asarray(index) == sampled)[0][0])
        said += f" Drawn: “{plain(names[at])}”."
    return said
