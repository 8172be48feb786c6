"""The shared controls every tab builds against.

app.py creates one Context inside its gr.Blocks, then calls each tab module's
`build(ctx)` inside `with gr.Tabs():`. A tab creates its own `gr.Tab(label, id=...)`
and wires its listeners to the shared components below; it never creates its own
sentence box or model picker.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import gradio as gr

from ui.models import ModelRegistry

FIGURE_FONT = {False: 12, True: 20}  # Plotly font size: normal, presenter mode


def figure_font(presenter) -> int:
    """Plotly font size for the current presenter setting (pass it to viz functions as font_size)."""
    return FIGURE_FONT[bool(presenter)]


@dataclass
class Context:
    """Shared components and the model registry.

    demo       the gr.Blocks being built (for demo.load and friends)
    registry   ui.models.ModelRegistry: models loaded once; `registry.trace(name, text)`
               is cached and thread-safe and raises ui.models.InputError (turn it into
               gr.Error) for empty/too long text or a model that failed to load
    text       gr.Textbox: the sentence (str)
    model      gr.Dropdown: model name, one of registry.names ("lm", "mlm", "dates")
    analyze    gr.Button: "Show attention"; clicking it (or Enter in the text box) re-runs
    layer      gr.Slider: layer number, 1-based (integer, 1..n_layers of the current model/kind)
    head       gr.Slider: head number, 1-based (1..n_heads)
    kind       gr.Radio: attention kind: "self" for lm/mlm; "encoder", "decoder" or
               "cross" for dates (hidden for lm/mlm, whose only kind is "self")
    presenter  gr.Checkbox: True in presenter mode; use figure_font(presenter) for figures
    tabs       gr.Tabs holding every tab; give your gr.Tab an id (e.g. id="steps") so
               ?tab=steps in the URL opens it

    Wiring a tab:
        ctx.listen(fn, inputs=[ctx.text, ctx.model, ...], outputs=[...], api_name="steps")
    runs fn when the sentence is submitted, the model or presenter mode changes, and
    once after the page loads with the URL's settings applied. For views that follow the
    chosen head, add `triggers=ctx.head_triggers`.
    """

    demo: gr.Blocks
    registry: ModelRegistry
    text: gr.Textbox
    model: gr.Dropdown
    analyze: gr.Button
    layer: gr.Slider
    head: gr.Slider
    kind: gr.Radio
    presenter: gr.Checkbox
    tabs: gr.Tabs
    _listeners: list = field(default_factory=list, repr=False)

    @property
    def triggers(self) -> list:
        """Events meaning "the sentence, model or presenter mode is new": redraw."""
        return [self.text.submit, self.analyze.click, self.model.change, self.presenter.change]

    @property
    def head_triggers(self) -> list:
        """Also when the chosen layer, head or attention kind changes."""
        return self.triggers + [self.layer.change, self.head.change, self.kind.change]

    def listen(self, fn: Callable, inputs: list, outputs: list, api_name: str, triggers: list | None = None,
               **kwargs) -> None:
        """Register fn on `triggers` (default ctx.triggers) and on the page load (URL settings applied first)."""
        gr.on(triggers=triggers or self.triggers, fn=fn, inputs=inputs, outputs=outputs, api_name=api_name,
              **kwargs)
        self._listeners.append((fn, inputs, outputs, api_name, kwargs))

    def run_after(self, event) -> None:
        """Chain every registered listener after `event` (app.py passes the URL-settings load event)."""
        for fn, inputs, outputs, api_name, kwargs in self._listeners:
            kwargs = {k: v for k, v in kwargs.items() if k not in ("api_visibility",)}
            event.then(fn, inputs=inputs, outputs=outputs, api_name=f"{api_name}_on_load",
                       api_visibility="undocumented", **kwargs)
