"""The class's answers to a question, beside the model's measured answer: one bar per choice, in the question's
order, the model's answer drawn in the accent colour and named.

    fig = class_answers(["L1", "L2"], {"L1": 3, "L2": 9}, model_answer="L2")
"""
from __future__ import annotations

import numpy as np

from viz.describe import with_alt
from viz.figure import figure
from viz.labels import token_label

CLASS_COLOUR = "#64748b"  # slate-500: the class's bars
MODEL_COLOUR = "#c2410c"  # orange-700, the page's accent (app.THEME): the model's answer


def class_answers(choices: list[str], answers: dict[str, int], model_answer: str = "", font_size: int = 12,
                  height: int | None = None):
    """A horizontal bar per choice (choices: the question's answers, in order; answers: {choice: how many}),
    on integer positions, so two choices that read alike (a token twice) stay two rows. The model's answer's bar
    is orange and its text says "the model's answer"."""
    if not choices:
        raise ValueError("class_answers needs the question's choices (a non-empty list)")
    counts = np.array([int(answers.get(c, 0)) for c in choices], dtype=np.float32)
    total = int(counts.sum())
    labels = [f'<span style="color:{MODEL_COLOUR};font-weight:bold">{token_label(c)}</span>' if c == model_answer else token_label(c)
              for c in choices]
    colours = [MODEL_COLOUR if c == model_answer else CLASS_COLOUR for c in choices]
    row = max(26, int(font_size * 2))  # a bar a label's height and a half: readable at 30 rows
    positions = np.arange(len(choices), dtype=np.float32)
    shares = [(f"{int(n)} ({n / total:.0%})" if total else "0") + (" · the model's answer" if c == model_answer else "")
              for n, c in zip(counts, choices)]
    data = [{"type": "bar", "orientation": "h", "x": counts, "y": positions, "marker": {"color": colours},
             "text": shares, "textposition": "outside", "cliponaxis": False, "hoverinfo": "text",
             "hovertext": [f"{token_label(c)}: {share}" for c, share in zip(choices, shares)], "name": "the class"}]
    layout = {
        "title": {"text": layout_title(total), "font": {"size": font_size + 2}},
        "height": height or 60 + 3 * font_size + row * len(choices),
        "margin": {"l": 10, "r": 10, "t": 50, "b": 3 * font_size + 10},  # the axis's numbers, then its title
        "font": {"size": font_size},
        "xaxis": {"title": {"text": "students"}, "rangemode": "tozero", "dtick": max(1, int(np.ceil(counts.max() / 5)))
                  if counts.max() > 0 else 1, "range": [0, max(1.0, float(counts.max())) * 1.9]},  # room for the text
        "yaxis": {"tickvals": positions, "ticktext": labels, "autorange": "reversed", "automargin": True},
        "showlegend": False, "bargap": 0.25,
        "meta": {"alt": f"{layout_title(total)}: " + ", ".join(f"{c!r} {int(n)}" for c, n in zip(choices, counts))
                 + (f". The model's answer: {model_answer!r}." if model_answer else ".")},
    }
    return figure(data, with_alt(layout, data))


def layout_title(total: int) -> str:
    return f"The class's {total} answer{'' if total == 1 else 's'}; in orange, the model's"
