"""The shared controls every tab builds against.

app.py creates one Context (ui.controls.build_controls) inside its gr.Blocks, then calls
each tab module's `build(ctx)` inside `with gr.Tabs():`. A tab creates its own
`ctx.tab(label, id=...)` and wires its listeners to the shared components below; it never
creates its own sentence box or model picker.
"""
from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field
from typing import Callable

import gradio as gr

from ui.models import InputError, ModelRegistry, public_message

log = logging.getLogger(__name__)

FIGURE_FONT = {False: 12, True: 20}  # Plotly font size: normal, presenter mode


def figure_font(presenter) -> int:
    """Plotly font size for the current presenter setting (pass it to viz functions as font_size)."""
    return FIGURE_FONT[bool(presenter)]


try:  # a Hugging Face ZeroGPU Space lends a GPU to each call decorated with spaces.GPU
    import spaces

    on_gpu = spaces.GPU
except ImportError:  # anywhere else (the package is only there on Spaces): run as is, on CUDA if present
    def on_gpu(fn: Callable) -> Callable:
        return fn


def friendly(fn: Callable) -> Callable:
    """Wrap a handler so bad input reaches the viewer as a clear gr.Error, never a traceback; on a
    ZeroGPU Space the handler runs with a GPU (every handler that runs a model goes through here)."""
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
            raise gr.Error(public_message(f"Something went wrong ({type(e).__name__}: {e}). Try another sentence; "
                                          "the rest of the demo keeps working."), print_exception=False) from None
    return functools.wraps(fn)(on_gpu(wrapper))


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
    In the browser one click is one event: the views of every tab that share a trigger are run
    by one dispatcher that computes only the open tab's views (ctx.finish). API callers call each
    view by its api_name and always get it computed.
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
    quiz: gr.Checkbox | None = None  # quiz mode: the one-head view hides its weights until revealed
    _listeners: list = field(default_factory=list, repr=False)
    _building_tab: str | None = field(default=None, repr=False)
    _tabs: dict = field(default_factory=dict, repr=False)
    _chains: list = field(default_factory=list, repr=False)
    _hidden_button: gr.Button | None = field(default=None, repr=False)
    _tab_followers: list = field(default_factory=list, repr=False)

    def __post_init__(self):
        # API-only endpoints need an event to hang on; this button is never shown (created here,
        # beside the controls, because a gr.Tabs may hold only tabs)
        self._hidden_button = gr.Button(visible=False, elem_id="api-only")

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

    def listen(self, fn: Callable, inputs: list, outputs: list, api_name: str, triggers: list | None = None,
               **kwargs) -> None:
        """Register fn on `triggers` (default ctx.triggers) and for the chained runs (see the class doc).

        fn becomes the API endpoint `/<api_name>` (always computed). In the browser the shared
        triggers (sentence, button, presenter, layer, head, kind) do not fire one event per view:
        finish() folds every view listening to the same shared events into one dispatcher event
        that computes only the open tab's views. Triggers of the tab's own controls (a slider
        inside the tab) fire fn directly."""
        triggers = triggers or self.triggers
        shared = [t for t in triggers if any(self._same_event(t, e) for e in self._shared_events)]
        local = [t for t in triggers if t not in shared]
        if not local:
            local = [self._hidden_button.click]
        gr.on(triggers=local, fn=fn, inputs=inputs, outputs=outputs, api_name=api_name,
              **{"trigger_mode": "always_last", **kwargs})
        head_events = [self.layer.input, self.head.input, self.kind.input]
        follows_head = any(self._same_event(t, e) for t in triggers for e in head_events)
        self._listeners.append(_Listener(fn, list(inputs), list(outputs), api_name, kwargs, follows_head,
                                         self._building_tab, shared))

    @property
    def _shared_events(self) -> list:
        return self.head_triggers

    @property
    def _direct_events(self) -> list:
        """Shared events that redraw at once; a new attention kind first refits the layer and head
        sliders (ui.controls runs the views after it with run_after(..., like=ctx.kind.input))."""
        return [e for e in self._shared_events if not self._same_event(e, self.kind.input)]

    @staticmethod
    def _same_event(a, b) -> bool:
        return getattr(a, "__self__", None) is getattr(b, "__self__", None) and \
            getattr(a, "event_name", None) == getattr(b, "event_name", None)

    def run_after(self, event, suffix: str, head_only: bool = False, like=None) -> None:
        """Re-run the registered listeners after `event` (e.g. an event that sets ctx.layer/head).
        Applied by finish() once every tab is built; head_only: just the listeners following the head;
        like: just the listeners triggered by that shared event."""
        self._chains.append((event, suffix, head_only, like))

    def after_tab_opened(self, fn: Callable, inputs: list, outputs: list, api_name: str, **kwargs) -> None:
        """Run fn after the viewer opens any tab, once ctx.current_tab names it (e.g. the link box).
        Applied by finish(); each tab's run is the endpoint `/<api_name>_<tab id>`."""
        self._tab_followers.append((fn, inputs, outputs, api_name, kwargs))

    def finish(self) -> None:
        """Wire the browser's events (app.py calls this after all tabs are built): one dispatcher
        event per group of shared triggers, one after each run_after event, one when a tab opens."""
        by_events: dict[tuple, list] = {}
        for event in self._direct_events:
            chosen = tuple(i for i, lst in enumerate(self._listeners)
                           if any(self._same_event(t, event) for t in lst.shared))
            if chosen:
                by_events.setdefault(chosen, []).append(event)
        for n, (chosen, events) in enumerate(by_events.items()):
            self._dispatch(events, [self._listeners[i] for i in chosen], f"redraw_{n}")
        for event, suffix, head_only, like in self._chains:
            chosen = [lst for lst in self._listeners if (lst.follows_head or not head_only)
                      and (like is None or any(self._same_event(t, like) for t in lst.shared))]
            self._dispatch(event, chosen, f"redraw_after_{suffix}")
        self._chains.clear()
        for tab_id, tab in self._tabs.items():
            if self.current_tab is not None:
                opened = tab.select(lambda t=tab_id: t, inputs=None, outputs=[self.current_tab],
                                    api_name=f"open_{tab_id}", api_visibility="private", queue=False)
                self._dispatch(opened, [lst for lst in self._listeners if lst.tab == tab_id], f"redraw_{tab_id}")
                for fn, inputs, outputs, api_name, kwargs in self._tab_followers:
                    opened.then(fn, inputs=inputs, outputs=outputs, api_name=f"{api_name}_{tab_id}", **kwargs)

    def _dispatch(self, trigger, listeners: list, api_name: str) -> None:
        """One event for many views: `trigger` is a list of events (fired together) or an event to
        follow with .then. In the browser only the open tab's views compute; each view's figures
        are sent as soon as they are ready (the handler is a generator), in registration order."""
        if not listeners:
            return
        inputs = list(dict.fromkeys(c for lst in listeners for c in lst.inputs))
        outputs = list(dict.fromkeys(c for lst in listeners for c in lst.outputs))
        where = {id(c): i for i, c in enumerate(inputs)}
        current_tab = self.current_tab

        def dispatch(open_tab, *values):
            first_error = None
            for lst in listeners:
                if open_tab is not None and lst.tab is not None and lst.tab != open_tab:
                    continue
                try:
                    result = lst.fn(*(values[where[id(c)]] for c in lst.inputs))
                except gr.Error as e:  # the same bad input fails every view: say it once
                    first_error = first_error or e
                    continue
                result = result if len(lst.outputs) > 1 else (result,)
                yield dict(zip(lst.outputs, result))
            if first_error is not None:
                # One message, and the views keep their last good figures: raising would put an
                # "Error" badge over every output of this event.
                gr.Warning(str(first_error.message))

        options = dict(inputs=[current_tab] + inputs if current_tab is not None else inputs, outputs=outputs,
                       api_name=api_name, api_visibility="private", show_progress="minimal")
        fn = dispatch if current_tab is not None else (lambda *values: (yield from dispatch(None, *values)))
        if isinstance(trigger, list):
            gr.on(triggers=trigger, fn=fn, trigger_mode="always_last", **options)
        else:
            trigger.then(fn, **options)


@dataclass
class _Listener:
    fn: Callable
    inputs: list
    outputs: list
    api_name: str
    kwargs: dict
    follows_head: bool
    tab: str | None
    shared: list
