"""Gradio components that answer bad API input with a clear message, and cheap component values.

Gradio checks a slider's range itself, but a value of the wrong type (a string, a list,
NaN) fails inside its preprocessing and reaches the caller as a bare "the app has raised
an exception". These subclasses say what was wrong instead.
"""
from __future__ import annotations

import math

import gradio as gr
import pandas as pd

from ui.wire import toast


class Slider(gr.Slider):
    """gr.Slider whose API value must be a finite number."""

    @classmethod
    def get_block_name(cls) -> str:
        return "slider"  # drawn by the browser exactly as a gr.Slider

    def preprocess(self, payload):
        if payload is None:  # the browser sends no value for a slider on a tab it has not drawn yet
            return None
        label = self.label or "This slider"
        if isinstance(payload, bool) or not isinstance(payload, (int, float)) or not math.isfinite(payload):
            raise gr.Error(toast(f"{label} must be a number between {self.minimum:g} and {self.maximum:g}, "
                                 f"not {str(payload)[:40]!r}."), print_exception=False)
        return super().preprocess(payload)


class ClampedSlider(Slider):
    """A Slider that takes a number past its ends as the nearest end, as the browser's slider does when its
    box loses the focus. For sliders redrawn as their box is typed in: typing "30" sends 3 first, which
    Gradio refused below a minimum of 4, and after that refusal the page dropped the 30 that followed."""

    def preprocess(self, payload):
        if isinstance(payload, (int, float)) and not isinstance(payload, bool) and math.isfinite(payload):
            payload = min(max(payload, self.minimum), self.maximum)
        return super().preprocess(payload)


def table(frame: pd.DataFrame | dict[str, list]) -> dict:
    """A DataFrame, or plain columns (name -> values), as gr.Dataframe's value, {"headers": [...],
    "data": [[...], ...]}, missing values as None. Handing Gradio the DataFrame itself costs ~15 ms of
    server time for a 16-row table (it inspects every cell for styling); this costs ~0.1 ms, and plain
    columns (analysis.head_stats.head_columns) skip pandas altogether."""
    if isinstance(frame, pd.DataFrame):
        headers, rows = [str(c) for c in frame.columns], frame.to_numpy(dtype=object).tolist()
    else:
        headers, rows = [str(c) for c in frame], zip(*frame.values())
    data = [[None if isinstance(v, float) and v != v else v for v in row] for row in rows]  # NaN -> None
    return {"headers": headers, "data": data}
