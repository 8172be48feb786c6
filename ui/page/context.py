"""The shared controls every tab builds against.

app.py creates one Context (ui.page.controls.build_controls) inside its gr.Blocks, then calls
each tab module's `build(ctx)` inside `with gr.Tabs():`. A tab creates its own
`ctx.tab(TAB)` and wires its listeners to the shared components below; it never
creates its own sentence box or model picker.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import logging
from dataclasses import dataclass, field
from typing import Callable

import gradio as gr

from training.toy_tasks import SettingsError
from model.registry import ModelRegistry
from ui.page.messages import InputError, public_message, refusal, warn
from ui.page.gpu import LENT_GPU, on_gpu
from ui.runtime.events import on_event_loop, repeat_outputs
from ui.runtime.repeats import Repeats, is_pick
from ui.page.outputs import Change, visible
from ui.page.sections import first_views, inside
from ui.page.tabspec import TabSpec
from ui.runtime.wire import received, received_in_handler, sent_all

log = logging.getLogger(__name__)

# what a handler raises for input it cannot use: the visitor reads its message (anything else is a bug, logged)
VISITOR_ERRORS = (InputError, SettingsError)

FIGURE_FONT = {False: 12, True: 20}  # Plotly font size: normal, presenter mode


def figure_font(presenter) -> int:
    """Plotly font size for the current presenter setting (pass it to viz functions as font_size)."""
    return FIGURE_FONT[bool(presenter)]


# A tab's main figure (and what it needs beside it) is drawn first in presenter mode, above the tab's settings,
# so that on a 1280 x 720 projector it is on the first screen (order only moves it on screen: ui.page.controls.CSS).
PRESENTER_FIRST = "presenter-first"
PRESENTER_SECOND = "presenter-second"  # right under the main figure (its controls, when the figure needs the room)

# Presenter mode on a 1280 x 720 projector: a tab's main figure lies whole on the first screen, under the
# header and the row of tabs (tests/e2e/test_e2e_presenter.py measures every tab)
SCREEN_FIGURE_PX = 440


def screen_height(presenter, above: int = 0) -> int | None:
    """The most a tab's main figure may take: in presenter mode what the first screen leaves it under the
    tab's controls drawn above it (`above` px), else None."""
    return SCREEN_FIGURE_PX - above if presenter else None


def friendly(fn: Callable) -> Callable:
    """Wrap a handler (a generator too) so bad input reaches the viewer as a clear gr.Error, never a
    traceback (ui.page.gpu lends it a GPU on ZeroGPU, where it is registered)."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def streamed(*args, **kwargs):
            with _as_messages(fn):
                yield from fn(*args, **kwargs)
        return streamed

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _as_messages(fn):
            return fn(*args, **kwargs)
    return wrapper


@contextlib.contextmanager
def _as_messages(fn: Callable):
    """The one place a handler's exception becomes what the visitor reads."""
    try:
        yield
    except gr.Error:
        raise
    except VISITOR_ERRORS as e:
        raise refusal(e) from None
    except Exception as e:  # a bug: log it for us, say something useful to the viewer
        log.exception("handler %s failed", getattr(fn, "__name__", fn))
        raise refusal(public_message(f"Something went wrong ({type(e).__name__}: {e}). Try another "
                                     "sentence; the rest of the demo keeps working.")) from None


def as_gradio(result):
    """A handler's view data as Gradio takes it: each ui.page.outputs.Change (alone, in a tuple, or in a
    {component: value} dict) becomes Gradio's update; everything else is a value, passed as it is."""
    if isinstance(result, Change):
        return gr.update(**result.props)
    if isinstance(result, tuple):
        return tuple(gr.update(**r.props) if isinstance(r, Change) else r for r in result)
    if isinstance(result, dict) and result and all(isinstance(key, gr.blocks.Block) for key in result):
        return {key: gr.update(**v.props) if isinstance(v, Change) else v for key, v in result.items()}
    return result


def _plain(fn: Callable) -> Callable:
    """fn (a plain handler: view data, errors as messages) as Gradio calls it."""
    fn = friendly(fn)
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)  # Gradio reads fn's parameters (gr.Request) through __wrapped__
        def streamed(*args, **kwargs):
            for result in fn(*args, **kwargs):
                yield as_gradio(result)
        return on_gpu(streamed)

    @functools.wraps(fn)
    def run(*args, **kwargs):
        return as_gradio(fn(*args, **kwargs))
    return on_gpu(run)


@dataclass
class Context:
    """The shared controls every tab builds against, and the wiring of their events.

    A tab module's build(ctx) opens `with ctx.tab(TAB)`, builds its components and
    registers each view with `ctx.listen(fn, inputs, outputs, api_name, triggers=...)`:
      - fn becomes the endpoint /<api_name>, which an API caller always gets computed;
      - triggers defaults to ctx.triggers (new sentence, button, presenter mode); views that follow
        the chosen layer, head or kind pass ctx.head_triggers; a tab's own controls may be added;
      - in the browser one click is one request: finish() gives each group of shared triggers a
        single dispatcher that runs only the open tab's views, sending each view's outputs as soon
        as they are ready, and runs a tab's views when the tab is opened.
    Code that sets the shared controls itself (model switch, example, page load, tile picker) re-runs
    the views with run_after, since the triggers are user actions (.input) and would not fire.

    The API is the views: fn's parameter names are the endpoint's (README, "Every endpoint", lists them
    and tests/app/server/test_hostile_input.py compares the list with the server's). An endpoint only API
    callers need goes through `ctx.api(fn, api_name)`. A tab's own controls (a button, a slider of its own,
    the quiz switch) are wired with `ctx.on(triggers, fn, ...)`: private unless public=True, as an event that
    only keeps the page in step (a slider being dragged, a tile picked) is no API; page_event gives a page
    handler and its public endpoint in one call. Tabs call no Gradio event method themselves.

    Handlers are plain functions: they return view data (figures, tables, text, and ui.page.outputs.Change for
    an output shown, hidden or refitted) and raise ui.models.InputError for bad input. Every registration
    turns both into Gradio's terms here (`_plain`: as_gradio, friendly, and on ZeroGPU a GPU, once); the
    messages are cut and escaped by ui/page/messages.py. Framework workarounds live in ui/runtime/ (its README), never in a tab.
    """

    demo: gr.Blocks
    registry: ModelRegistry
    text: gr.Textbox
    model: gr.Dropdown
    analyze: gr.Button
    layer: gr.Slider
    head: gr.Slider
    kind: gr.Radio  # "encoder" / "decoder" / "cross" for dates; hidden (and ignored) for one-kind models
    presenter: gr.Checkbox
    tabs: gr.Tabs | None = None
    current_tab: gr.State | None = None  # the open tab's id (None for API callers: nothing is skipped)
    open_sections: gr.State | None = None  # the elem_ids of the folded sections open on the page (see listen)
    quiz: gr.Checkbox | None = None  # quiz mode: each view that quizzes hides its answer until revealed
    _views: list = field(default_factory=list, repr=False)
    _building_tab: str | None = field(default=None, repr=False)
    _tabs: dict = field(default_factory=dict, repr=False)
    _sections: dict = field(default_factory=dict, repr=False)
    _section_of: dict = field(default_factory=dict, repr=False)  # id(component) -> the ctx.section it sits in
    _chains: list = field(default_factory=list, repr=False)
    _tab_followers: list = field(default_factory=list, repr=False)
    _hidden_button: gr.Button | None = field(default=None, repr=False)
    _after_picks: list = field(default_factory=list, repr=False)  # the events a dropdown pick runs (run twice)
    repeats: Repeats = field(default_factory=Repeats, repr=False)  # a dropdown's second event (ui/runtime/repeats.py)

    def __post_init__(self):
        # an event for API-only endpoints to hang on (here, beside the controls: a gr.Tabs holds only tabs)
        self._hidden_button = gr.Button(visible=False, elem_id="api-only")

    @property
    def triggers(self) -> list:
        """A new sentence, the button, presenter mode: redraw."""
        return [self.text.submit, self.analyze.click, self.presenter.input]

    @property
    def head_triggers(self) -> list:
        """Also another layer, head or attention kind."""
        return self.triggers + [self.layer.input, self.head.input, self.kind.input]

    def tab(self, spec: TabSpec) -> gr.Tab:
        """A tab (`with ctx.tab(TAB):`, TAB a ui.page.tabspec.TabSpec); the views registered after it belong to it.
        Its id is what ?tab=... in a link names."""
        tab = gr.Tab(spec.label, id=spec.id)
        self._building_tab = spec.id
        self._tabs[spec.id] = tab
        return tab

    def listen(self, fn: Callable, inputs: list, outputs: list, api_name: str, triggers: list | None = None,
               quick: Callable[..., bool] | None = None, section: gr.Accordion | None = None, **kwargs) -> None:
        """Register a view (see the class docstring). section: the folded accordion the view sits in; on the page
        the view computes only while it is open, and when it is opened (an API caller always gets it).
        quick (given fn's arguments): whether this call is
        cheap enough to run on the server's event loop, where the request arrived. Gradio otherwise runs a
        handler in a worker thread, and on a 2-core server waking that thread, and the event loop again
        afterwards, cost about as much CPU as /analyze's forward pass. A ZeroGPU Space always uses the thread."""
        triggers = triggers or self.triggers
        shared = [t for t in triggers if t in self.head_triggers]
        picks = [t for t in triggers if t not in shared and is_pick(t)]  # sent twice by Gradio (ui/runtime/repeats.py)
        local = [t for t in triggers if t not in shared and t not in picks] or [self._hidden_button.click]
        # An endpoint only API callers reach reads its inputs in the handler's thread (ui/runtime/wire.py). A page
        # event keeps Gradio's preprocessing: it checks each value against the visitor's own copy of the
        # control (a slider whose maximum followed the model they chose), which only Gradio holds.
        inline = local == [self._hidden_button.click] and received_in_handler(inputs)
        view = _plain(fn)  # once, here: every way of running the view (endpoint, dispatchers) calls this one

        def answer(*values):
            return sent_all(outputs, view(*values))

        def read(values):
            return received(inputs, values) if inline else values

        @functools.wraps(fn)  # the endpoint's parameters keep fn's names (gradio_client reads them)
        def endpoint(*values):
            return answer(*read(values))

        if quick is not None and not LENT_GPU:  # ui/runtime/events.py
            endpoint = functools.wraps(fn)(on_event_loop(answer, quick, api_name, read))
        gr.on(triggers=local, fn=endpoint, inputs=inputs, outputs=outputs,
              api_name=api_name, postprocess=False, preprocess=not inline,
              **{"trigger_mode": "always_last", **kwargs})
        if picks:
            self._on_page(picks, answer, inputs, outputs, api_name, {"postprocess": False, **kwargs})
        if section is not None:
            self._sections[section.elem_id] = section
        where = section.elem_id if section is not None else \
            next((self._section_of[id(c)] for c in outputs if id(c) in self._section_of), None)
        self._views.append(_View(view, list(inputs), list(outputs), self._building_tab, shared, where))

    def api(self, fn: Callable, api_name: str, **kwargs) -> None:
        """fn as the API-only endpoint /<api_name> (gr.api: its parameters and type hints are the API's), its
        bad input a message (friendly), lent a GPU on ZeroGPU. Call it inside a tab or beside the controls (a
        gr.Tabs holds only tabs)."""
        gr.api(on_gpu(friendly(fn)), api_name=api_name, **kwargs)

    def page_event(self, triggers: list, fn: Callable, inputs: list, outputs: list, api_name: str, **kwargs):
        """fn as the endpoint /<api_name> for API callers (bad input: an error, as everywhere in the API),
        and as what `triggers` run on the page (_on_page). Returns the page's event."""
        fn = _plain(fn)
        gr.on(triggers=[self._hidden_button.click], fn=fn, inputs=inputs, outputs=outputs, api_name=api_name,
              **kwargs)
        return self._on_page(triggers, fn, inputs, outputs, api_name, kwargs)

    def on(self, triggers, fn: Callable | None, inputs: list | None = None, outputs: list | None = None,
           public: bool = False, **kwargs):
        """A tab's own event (its button, its slider, the quiz switch), in one call. `triggers`: a list of
        events, or one event to follow (.then). fn is a plain handler: it returns view data (values,
        ui.page.outputs.Change) and raises ui.models.InputError for bad input, which the visitor reads as a
        message. public: the endpoint /<api_name> is part of the API; otherwise the event only keeps the
        page in step and is not published. fn None: a page script alone (js=...). Returns the event."""
        options = dict(inputs=inputs, outputs=outputs, api_visibility="public" if public else "private", **kwargs)
        fn = None if fn is None else _plain(fn)
        if isinstance(triggers, list):
            event = gr.on(triggers=triggers, fn=fn, **options)
            if any(is_pick(t) for t in triggers):  # what run_after chains to it runs twice too
                self._after_picks.append(event)
            return event
        return triggers.then(fn, **options)

    def _on_page(self, triggers: list, fn: Callable, inputs: list, outputs: list, api_name: str, kwargs: dict):
        """A page-only handler around fn (already lent a GPU by its caller, ui.page.gpu): a dropdown pick's second event is
        answered "unchanged" (ui/runtime/repeats.py; other triggers are computed every time), and bad input is one
        warning with the figures left as they were, as the dispatchers do (an error puts an "Error" badge over
        every output and blanks the figures)."""
        picked = any(is_pick(t) for t in triggers)

        def on_page(request: gr.Request, *values):
            if picked and self.repeats.seen(request, api_name, values):
                return gr.skip()
            try:
                return fn(*values)
            except gr.Error as e:
                warn(e.message, escaped=True)
                return gr.skip()

        return gr.on(triggers=triggers, fn=on_page, inputs=inputs, outputs=outputs,
                     **{"trigger_mode": "always_last", **kwargs, "api_name": f"{api_name}_page",
                        "api_visibility": "private"})

    def reveal_button(self, elem_id: str, label: str = "Reveal") -> gr.Button:
        """A view's Reveal button, shown only in quiz mode: the view's quiz form leaves its answer out (not even
        sent), and the tab wires this button to draw the view in full; the next redraw asks again. A second quiz
        on one tab names its button apart (a screen reader lists the buttons by name)."""
        button = gr.Button(label, variant="primary", size="sm", visible=False, elem_id=elem_id, scale=0,
                           min_width=120)
        if self.quiz is not None:
            self.on([self.quiz.change], visible, inputs=[self.quiz], outputs=[button], queue=False)
        return button

    @contextlib.contextmanager
    def section(self, title: str, elem_id: str, intro: str):
        """A quizzed section inside a tab (`with ctx.section(...) as (numbers, reveal):`): an open accordion with
        its intro, then a row with the section's numbers (Markdown, `<elem_id>-numbers`) and its Reveal button."""
        with gr.Accordion(title, open=True, elem_id=elem_id) as accordion:
            gr.Markdown(intro, elem_classes=["tab-intro"])
            with gr.Row(equal_height=True):
                numbers = gr.Markdown(elem_id=f"{elem_id}-numbers")
                reveal = self.reveal_button(f"{elem_id}-reveal")
            yield numbers, reveal
        # A section is one the viewer may fold: its views (those drawing into it) compute only while it is open,
        # and first when a shared control redraws the tab (ui/page/sections.py). It opens open.
        self._sections[elem_id] = accordion
        self._section_of.update({id(block): elem_id for block in inside(accordion)})
        if self.open_sections is not None:
            self.open_sections.value = [*(self.open_sections.value or []), elem_id]

    def run_after(self, event, suffix: str, head_only: bool = False, like=None) -> None:
        """Re-run the views after `event` (one that sets the shared controls): all of them, those that
        follow the head (head_only), or those triggered by the shared event `like`."""
        self._chains.append((event, suffix, head_only, like))

    def after_tab_opened(self, fn: Callable, inputs: list, outputs: list, api_name: str, **kwargs) -> None:
        """Run fn whenever the viewer opens a tab, after ctx.current_tab names it (the link box)."""
        self._tab_followers.append((fn, inputs, outputs, api_name, kwargs))

    def finish(self) -> None:
        """Wire the browser's events, once every tab is built (app.py calls it)."""
        head = [self.layer.input, self.head.input, self.kind.input]
        groups: dict[tuple, list] = {}  # the views a shared event runs -> the events that run exactly those
        for event in self.head_triggers:
            if event == self.kind.input:  # a new kind refits the sliders first (ui.page.controls chains the views)
                continue
            views = tuple(v for v in self._views if event in v.shared)
            if views:
                groups.setdefault(views, []).append(event)
        for n, (views, events) in enumerate(groups.items()):
            self._dispatch(events, list(views), f"redraw_{n}")
        for event, suffix, head_only, like in self._chains:
            views = [v for v in self._views if (not head_only or any(e in v.shared for e in head))
                     and (like is None or like in v.shared)]
            self._dispatch(event, views, f"redraw_after_{suffix}", picked=any(event is e for e in self._after_picks))
        self._chains.clear()
        if self.current_tab is None:
            return
        for tab_id, tab in self._tabs.items():
            opened = tab.select(lambda t=tab_id: t, inputs=None, outputs=[self.current_tab],
                                api_name=f"open_{tab_id}", api_visibility="private", queue=False)
            self._dispatch(opened, [v for v in self._views if v.tab == tab_id], f"redraw_{tab_id}")
            for fn, inputs, outputs, api_name, kwargs in self._tab_followers:
                self.on(opened, fn, inputs=inputs, outputs=outputs, api_name=f"{api_name}_{tab_id}", **kwargs)
        for name, section in self._sections.items():
            state = dict(inputs=[self.open_sections], outputs=[self.open_sections], queue=False)
            # the section opened last comes first in the list, and its views first in a redraw (ui/page/sections.py)
            opened = self.on([section.expand], lambda now, s=name: [s, *(x for x in (now or []) if x != s)], **state)
            self._dispatch(opened, [v for v in self._views if v.section == name], f"redraw_{name}")
            self.on([section.collapse], lambda now, s=name: [x for x in (now or []) if x != s], **state)

    def _dispatch(self, trigger, views: list, api_name: str, picked: bool = False) -> None:
        """One event for many views: `trigger` is a list of events or an event to follow with .then.
        Only the open tab's views compute (not those of a closed section), each sent as soon as it is ready, in
        the order ui.page.sections.first_views gives: the tab's main view, the open sections' views, the rest. picked: `trigger` follows a dropdown's pick, which Gradio sends twice (its repeat
        is answered "unchanged"); any other redraw makes the page differ from what the last pick drew."""
        if not views:
            return
        inputs = list(dict.fromkeys(c for v in views for c in v.inputs))
        outputs = list(dict.fromkeys(c for v in views for c in v.outputs))
        where = {id(c): i for i, c in enumerate(inputs)}

        @repeat_outputs
        def dispatch(request: gr.Request, open_tab, open_sections, *values):
            if not picked:
                self.repeats.forget(request)
            elif self.repeats.seen(request, api_name, (open_tab, values)):  # a dropdown's second event (ui/runtime/repeats.py)
                yield {output: gr.skip() for output in outputs}
                return
            first_error, sent = None, False
            for view in first_views(views, open_sections):
                if open_tab is not None and view.tab is not None and view.tab != open_tab:
                    continue
                if open_sections is not None and view.section is not None and view.section not in open_sections:
                    continue
                try:
                    result = view.fn(*(values[where[id(c)]] for c in view.inputs))
                except gr.Error as e:  # the same bad input fails every view: say it once
                    first_error = first_error or e
                    continue
                yield sent_all(view.outputs, dict(zip(view.outputs, result if len(view.outputs) > 1 else (result,))))
                sent = True
            if first_error is not None:
                # one message, and the views keep their last good figures: raising would put an
                # "Error" badge over every output of this event
                warn(first_error.message, escaped=True)
                if not sent:  # a generator that yields nothing clears every output: say "unchanged"
                    yield {output: gr.skip() for output in outputs}

        with_tab = self.current_tab is not None
        options = dict(inputs=([self.current_tab, self.open_sections] if with_tab else []) + inputs, outputs=outputs,
                       api_name=api_name, api_visibility="private", show_progress="minimal",
                       postprocess=False)  # see ui/runtime/wire.py
        def without_tab(request: gr.Request, *values):
            yield from dispatch(request, None, None, *values)

        fn = dispatch if with_tab else without_tab
        if isinstance(trigger, list):
            gr.on(triggers=trigger, fn=fn, trigger_mode="always_last", **options)
        else:
            trigger.then(fn, **options)


@dataclass(frozen=True, eq=False)
class _View:
    """One registered view: what the dispatchers need to run it."""

    fn: Callable
    inputs: list
    outputs: list
    tab: str | None
    shared: list
    section: str | None = None  # the folded section it sits in (elem_id): computed on the page only while open
