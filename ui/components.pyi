"""Gradio components that answer bad API input with a clear message.

Gradio checks a slider's range itself, but a value of the wrong type (a string, a list,
NaN) fails inside its preprocessing and reaches the caller as a bare "the app has raised
an exception". These subclasses say what was wrong instead.
"""
from __future__ import annotations

import math

import gradio as gr

from gradio.events import Dependency

class Slider(gr.Slider):
    """gr.Slider whose API value must be a finite number."""

    @classmethod
    def get_block_name(cls) -> str:
        return "slider"  # drawn by the browser exactly as a gr.Slider

    def preprocess(self, payload):
        label = self.label or "This slider"
        if isinstance(payload, bool) or not isinstance(payload, (int, float)) or not math.isfinite(payload):
            raise gr.Error(f"{label} must be a number between {self.minimum:g} and {self.maximum:g}, "
                           f"not {str(payload)[:40]!r}.", print_exception=False)
        return super().preprocess(payload)
    from typing import Callable, Literal, Sequence, Any, TYPE_CHECKING
    from gradio.blocks import Block
    if TYPE_CHECKING:
        from gradio.components import Timer
        from gradio.components.base import Component