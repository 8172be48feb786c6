"""The shared controls every tab builds against.

app.py creates one Context (ui.controls.build_controls) inside its gr.Blocks, then calls
each tab module's `build(ctx)` inside `with gr.Tabs():`. A tab creates its own
`ctx.tab(label, id=...)` and wires its listeners to the shared components below; it never
creates its own sentence box or model picker.
"""
from __future__ import annotations

import functools
import inspect
import logging
from dataclasses import dataclass, field
from typing import Callable

import gradio as gr

from ui.models import InputError, ModelRegistry

log = logging.getLogger(__name__)

FIGURE_FONT = {False: 12, True: 20}  # Plotly font size: normal, presenter mode


def figure_font(presenter) -> int:
    """Plotly font size for the current presenter setting (pass it to viz functions as font_size)."""
    return FIGURE_FONT[bool(presenter)]


def friendly(fn: Callable) -> Callable:
    """Wrap a handler so bad input reaches the viewer as a clear gr.Error, never a traceback."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except InputError as e:
            raise gr.Error(str(e), print_exception=False) from None
        except Exception as e:  # a bug: log it for us, say something useful to the viewer
            log.exception("handler %s failed", getattr(fn, "__name__", fn))
            raise gr.Error(f"Something went wrong ({type(e).__name__}: {e}). Try another sentence; "
                           "the rest of the demo keeps working.", print_exception=False) from None
    return wrapper


@dataclass
class Context:
    """Shared components and the model registry.

    demo       the gr.Blocks being built
    registry   ui.models.ModelRegistry: models loaded once; `registry.trace(name, text)`
               is cached and thread-safe and raises ui.models.InputError for empty/too long
               text or a model that failed to load (wrap handlers in `friendly` to show it)
    text       gr.Textbox: the sentence (str)
    model      gr.Dropdown: model name, one of registry.names ("lm", "mlm", "dates")
    analyze    gr.Button: "Show attention"; clicking it (or Enter in the text box) re-runs
    layer      gr.Slider: layer number, 1-based (1..layers of the current model and kind)
    head       gr.Slider: head number, 1-based (1..n_heads)
    kind       gr.Radio: attention kind for dates: "encoder", "decoder" or "cross"; hidden
               for lm/mlm (whose only kind is "self"), where its value means nothing. Pass it
               to registry.attention/layer_head: a kind the model lacks (or None) reads as
               the model's first kind.
    presenter  gr.Checkbox: True in presenter mode; use figure_font(presenter) for figures
    tabs       gr.Tabs holding every tab; give your gr.Tab an id (e.g. id="steps") so
               ?tab=steps in the URL opens it

    Wiring a tab:
        ctx.listen(fn, inputs=[ctx.text, ctx.model, ...], outputs=[...], api_name="steps")
    runs fn when the sentence is submitted, the button is clicked or presenter mode changes,
    and also (chained by app.py) after the model changes (once layer/head/kind fit the new
    model), after an example is chosen, and after the page loads with the URL's settings.
    For views that follow the chosen head pass `triggers=ctx.head_triggers`.
    Don't listen to ctx.model.change yourself: the controls may not fit the new model yet.
    The triggers are user actions (.input): when app code sets layer/head/kind/presenter it
    re-runs the listeners itself (ctx.run_after), so nothing runs twice.
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
    tabs: gr.Tabs | None = None
    current_tab: gr.State | None = None
    _listeners: list = field(default_factory=list, repr=False)
    _building_tab: str | None = field(default=None, repr=False)
    _tabs: dict = field(default_factory=dict, repr=False)
    _chains: list = field(default_factory=list, repr=False)

    # User actions only (.input, not .change): when app code sets these controls (URL, examples,
    # model switch, tile picker) it re-runs the listeners itself with run_after, exactly once.
    @property
    def triggers(self) -> list:
        """Events meaning "the sentence or presenter mode is new": redraw."""
        return [self.text.submit, self.analyze.click, self.presenter.input]

    @property
    def head_triggers(self) -> list:
        """Also when the viewer picks another layer, head or attention kind."""
        return self.triggers + [self.layer.input, self.head.input, self.kind.input]

    def tab(self, label: str, id: str) -> gr.Tab:
        """Create a tab (use as `with ctx.tab("Steps", id="steps"):`). Listeners registered after it
        belong to it: in the browser they compute only while their tab is open, and opening the tab
        runs them. API callers have no open tab and are never skipped."""
        tab = gr.Tab(label, id=id)
        self._building_tab = id
        self._tabs[id] = tab
        return tab

    def _only_when_open(self, fn: Callable, tab_id: str, n_outputs: int) -> Callable:
        def gated(current_tab, *args):
            if current_tab is not None and current_tab != tab_id:
                return gr.skip() if n_outputs == 1 else tuple(gr.skip() for _ in range(n_outputs))
            return fn(*args)
        gated.__name__ = getattr(fn, "__name__", "view")
        gated.__doc__ = fn.__doc__
        # keep the view's own parameter names in the API docs (the open tab is hidden state)
        own = list(inspect.signature(fn).parameters.values())
        first = inspect.Parameter("current_tab", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        gated.__signature__ = inspect.Signature([first] + own)
        return gated

    def listen(self, fn: Callable, inputs: list, outputs: list, api_name: str, triggers: list | None = None,
               **kwargs) -> None:
        """Register fn on `triggers` (default ctx.triggers) and for the chained runs (see the class doc)."""
        kwargs.setdefault("trigger_mode", "always_last")
        tab_id = self._building_tab
        if tab_id is not None and self.current_tab is not None:
            fn = self._only_when_open(fn, tab_id, len(outputs))
            inputs = [self.current_tab] + list(inputs)
        triggers = triggers or self.triggers
        gr.on(triggers=triggers, fn=fn, inputs=inputs, outputs=outputs, api_name=api_name, **kwargs)
        head_events = [self.layer.input, self.head.input, self.kind.input,
                       self.layer.change, self.head.change, self.kind.change]
        follows_head = any(self._same_event(t, e) for t in triggers for e in head_events)
        self._listeners.append((fn, inputs, outputs, api_name, kwargs, follows_head, tab_id))

    @staticmethod
    def _same_event(a, b) -> bool:
        return getattr(a, "__self__", None) is getattr(b, "__self__", None) and \
            getattr(a, "event_name", None) == getattr(b, "event_name", None)

    def run_after(self, event, suffix: str, head_only: bool = False) -> None:
        """Re-run the registered listeners after `event` (e.g. an event that sets ctx.layer/head).
        Applied by finish() once every tab is built; head_only: just the listeners following the head."""
        self._chains.append((event, suffix, head_only))

    def finish(self) -> None:
        """Wire every run_after chain (app.py calls this after all tabs are built), and make
        opening a tab draw its views."""
        for event, suffix, head_only in self._chains:
            self._chain(event, suffix, head_only)
        self._chains.clear()
        for tab_id, tab in self._tabs.items():
            if self.current_tab is not None:
                opened = tab.select(lambda t=tab_id: t, inputs=None, outputs=[self.current_tab],
                                    api_name=f"open_{tab_id}", api_visibility="private", queue=False)
                self._chain(opened, f"open_{tab_id}", head_only=False, only_tab=tab_id)

    def _chain(self, event, suffix: str, head_only: bool, only_tab: str | None = None) -> None:
        """One listener after another in registration order (the first tab's views appear first
        instead of every tab competing for the CPU at once). Endpoints: '<api_name>_<suffix>'."""
        for fn, inputs, outputs, api_name, kwargs, follows_head, tab_id in self._listeners:
            if head_only and not follows_head:
                continue
            if only_tab is not None and tab_id != only_tab:
                continue
            kwargs = {k: v for k, v in kwargs.items() if k not in ("api_visibility", "trigger_mode")}
            event = event.then(fn, inputs=inputs, outputs=outputs, api_name=f"{api_name}_{suffix}",
                               api_visibility="undocumented", **kwargs)
