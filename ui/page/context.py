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
from ui.page.gpu import LENT_GPU, on_gpu
from ui.page.messages import InputError, public_message, refusal, warn
from ui.runtime.events import on_event_loop
from ui.runtime.repeats import Repeats, is_pick
from ui.runtime.tab_select import opened_by_visitor
from ui.page.redraw import SHARED, Redraws, View, gated_follower, wire
from ui.page.outputs import Change, visible
from ui.page.page_link import LinkedControl
from ui.page.sections import inside
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
      - on the page a change to a shared control redraws the views that follow it, made by the visitor or
        by code (an event whose outputs set the sentence, model, layer, head, kind or presenter mode): one
        request per click, in which only the open tab's views compute (ui/page/redraw.py).

    The API is the views: fn's parameter names are the endpoint's (README, "Every endpoint", lists them
    and tests/app/server/test_hostile_input.py compares the list with the server's). An endpoint only API
    callers need goes through `ctx.api(fn, api_name)`. A tab's own controls (a button, a slider of its own,
    the quiz switch) are wired with `ctx.on(triggers, fn, ...)`: private unless public=True, as an event that
    only keeps the page in step (a slider being dragged, a tile picked) is no API; page_event gives a page
    handler and its public endpoint in one call. A tab setting that links keep is declared once
    (ui.page.links.Linked) and registered with its control by `ctx.link`. Tabs call no Gradio event method themselves.

    Handlers are plain functions: they return view data (figures, tables, text, and ui.page.outputs.Change for
    an output shown, hidden or refitted) and raise ui.page.messages.InputError for bad input. Every registration
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
    linked: list = field(default_factory=list)  # the tab settings links keep (ui.page.page_link.LinkedControl), by ctx.link
    # a setter's api_name -> view -> the view its redraw runs instead (ui/classroom: one computation for every follower)
    shared_redraws: dict = field(default_factory=dict)
    _building_tab: str | None = field(default=None, repr=False)
    _tabs: dict = field(default_factory=dict, repr=False)
    _sections: dict = field(default_factory=dict, repr=False)
    _section_of: dict = field(default_factory=dict, repr=False)  # id(component) -> the ctx.section it sits in
    _tab_followers: list = field(default_factory=list, repr=False)
    _hidden_button: gr.Button | None = field(default=None, repr=False)
    _redraws: Redraws | None = field(default=None, repr=False)
    _wired: bool = field(default=False, repr=False)  # finish() has wired the redraws: nothing may join them now
    repeats: Repeats = field(default_factory=Repeats, repr=False)  # a dropdown's second event (ui/runtime/repeats.py)

    def __post_init__(self):
        # an event for API-only endpoints to hang on (here, beside the controls: a gr.Tabs holds only tabs)
        self._hidden_button = gr.Button(visible=False, elem_id="api-only")
        sentence = [self.text.submit, self.analyze.click]
        self._redraws = Redraws(views=[], setters=[], events={
            "text": sentence, "model": sentence, "layer": [self.layer.input], "head": [self.head.input],
            "kind": [self.kind.input], "presenter": [self.presenter.input]})

    @property
    def triggers(self) -> list:
        """A new sentence, the button, presenter mode: redraw."""
        return [self.text.submit, self.analyze.click, self.presenter.input]

    @property
    def head_triggers(self) -> list:
        """Also another layer, head or attention kind."""
        return self.triggers + [self.layer.input, self.head.input, self.kind.input]

    def _shared(self, components) -> set[str]:
        """Which shared controls (ui.page.redraw.SHARED) are among these components."""
        ids = {id(c) for c in components or []}
        return {name for name in SHARED if id(getattr(self, name)) in ids}

    def _before_finish(self, what: str) -> None:
        """A view, tab, section or setter joins the redraws only until finish() wires them: one registered later
        would never be redrawn, with no error anywhere, so it is one here, as the page is built."""
        if self._wired:
            raise RuntimeError(f"{what} is registered after Context.finish() wired the redraws, so nothing would "
                               "redraw it: register it while the tabs are built (app.build_demo), before wire_page")

    def tab(self, spec: TabSpec) -> gr.Tab:
        """A tab (`with ctx.tab(TAB):`, TAB a ui.page.tabspec.TabSpec); the views registered after it belong to it.
        Its id is what ?tab=... in a link names."""
        self._before_finish(f"the tab {spec.id!r}")
        tab = gr.Tab(spec.label, id=spec.id)
        self._building_tab = spec.id
        self._tabs[spec.id] = tab
        return tab

    def link(self, setting, component, shown: Callable | None = None, read: Callable | None = None,
             also: dict | None = None, opens: gr.Accordion | None = None) -> None:
        """Keep a tab setting (a ui.page.links.Linked, declared beside its control) in links: a link sets `component`
        to shown(settings) (default: the setting's value), and the link box reads it back with read(value,
        settings) (default: a number, whole where the setting is). also: other components a link sets, each
        to fn(settings). opens: the folded section a link opens when it sets the setting (not at its default)."""
        if any(c.setting.name == setting.name for c in self.linked):
            raise ValueError(f"the link setting {setting.name!r} is registered twice")
        self.linked.append(LinkedControl(setting, component, shown, read, also or {}, opens))

    def listen(self, fn: Callable, inputs: list, outputs: list, api_name: str, triggers: list | None = None,
               quick: Callable[..., bool] | None = None, section: gr.Accordion | None = None, **kwargs) -> None:
        """Register a view (see the class docstring). section: the folded accordion the view sits in; on the page
        the view computes only while it is open, and when it is opened (an API caller always gets it).
        quick (given fn's arguments): whether this call is
        cheap enough to run on the server's event loop, where the request arrived. Gradio otherwise runs a
        handler in a worker thread, and on a 2-core server waking that thread, and the event loop again
        afterwards, cost about as much CPU as /analyze's forward pass. A ZeroGPU Space always uses the thread."""
        self._before_finish(f"the view /{api_name}")
        triggers = triggers or self.triggers
        shared = [t for t in triggers if t in self.head_triggers]
        picks = [t for t in triggers if t not in shared and is_pick(t)]  # sent twice by Gradio (ui/runtime/repeats.py)
        local = [t for t in triggers if t not in shared and t not in picks] or [self._hidden_button.click]
        # An endpoint only API callers reach reads its inputs in the handler's thread (ui/runtime/wire.py). A page
        # event keeps Gradio's preprocessing: it checks each value against the visitor's own copy of the
        # control (a slider whose maximum followed the model they chose), which only Gradio holds.
        inline = local == [self._hidden_button.click] and received_in_handler(inputs)
        view = _plain(fn)  # once, here: every way of running the view (endpoint, redraws) calls this one

        def answer(*values):
            return sent_all(outputs, view(*values))

        def read(values):
            return received(inputs, values) if inline else values

        @functools.wraps(fn)  # the endpoint's parameters keep fn's names (gradio_client reads them)
        def endpoint(*values):
            return answer(*read(values))

        if quick is not None and not LENT_GPU:  # ui/runtime/events.py
            endpoint = functools.wraps(fn)(on_event_loop(answer, quick, api_name, read))
        endpoint.__signature__ = inspect.signature(fn)  # Gradio reads it on every call: made once, not per call
        gr.on(triggers=local, fn=endpoint, inputs=inputs, outputs=outputs,
              api_name=api_name, postprocess=False, preprocess=not inline,
              **{"trigger_mode": "always_last", **kwargs})
        if picks:
            self._on_page(picks, answer, inputs, outputs, api_name, {"postprocess": False, **kwargs})
        if section is not None:
            self._sections[section.elem_id] = section
        where = section.elem_id if section is not None else \
            next((self._section_of[id(c)] for c in outputs if id(c) in self._section_of), None)
        self._redraws.views.append(View(view, list(inputs), list(outputs), self._building_tab, shared, where))

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
        ui.page.outputs.Change) and raises ui.page.messages.InputError for bad input, which the visitor reads as a
        message. public: the endpoint /<api_name> is part of the API; otherwise the event only keeps the
        page in step and is not published. fn None: a page script alone (js=...). Returns the event.
        An event that sets shared controls (its outputs hold the sentence, model, layer, head, kind or presenter
        mode) redraws the views that follow them when it is done, as the visitor's own change would."""
        options = dict(inputs=inputs, outputs=outputs, api_visibility="public" if public else "private", **kwargs)
        fn = None if fn is None else _plain(fn)
        listed = isinstance(triggers, list)
        event = gr.on(triggers=triggers, fn=fn, **options) if listed else triggers.then(fn, **options)
        sets = self._shared(outputs)
        if sets and fn is not None:  # the control whose pick triggered it changed too (the model picker's refit)
            self._before_finish(f"the event {kwargs.get('api_name') or fn.__name__!r}, which sets shared controls,")
            followed = self._shared(getattr(t, "__self__", None) for t in triggers) if listed else set()
            picked = listed and any(is_pick(t) for t in triggers)
            name = kwargs.get("api_name") or f"setter_{len(self._redraws.setters)}"
            self._redraws.setters.append((event, sets | followed, picked, name, triggers if listed else []))
        return event

    def _on_page(self, triggers: list, fn: Callable, inputs: list, outputs: list, api_name: str, kwargs: dict):
        """A page-only handler around fn (already lent a GPU by its caller, ui.page.gpu): a dropdown pick's second event is
        answered "unchanged" (ui/runtime/repeats.py; other triggers are computed every time), and bad input is one
        warning with the figures left as they were, as the redraws do (an error puts an "Error" badge over
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
        self._before_finish(f"the section {elem_id!r}")
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

    def after_tab_opened(self, fn: Callable, inputs: list, outputs: list, api_name: str, **kwargs) -> None:
        """Run fn(request, *inputs) whenever the viewer opens a tab, after ctx.current_tab names it (the link box)."""
        self._before_finish(f"the tab follower /{api_name}")
        self._tab_followers.append((fn, inputs, outputs, api_name, kwargs))

    def finish(self) -> None:
        """Wire the redraws once every tab has registered its views (ui.page.controls.wire_page, last): one event per
        visitor's change to a shared control, one after each event that sets them by code (ui/page/redraw.py), and
        one when a tab or a folded section is opened. Anything that would join them registered later is an error
        (_before_finish), never a view left stale."""
        self._before_finish("a second Context.finish()")
        self._wired = True
        redraws, state = self._redraws, dict(tab_state=self.current_tab, sections_state=self.open_sections)
        if self.current_tab is None:
            state = {}
        refitted = [t for *_, triggers in redraws.setters for t in triggers]
        groups: dict[tuple, list] = {}  # the views a visitor's event redraws -> the events that redraw exactly those
        for event in self.head_triggers:
            if event in refitted:  # it sets shared controls first (the model's or kind's refit): redrawn after it
                continue
            views = tuple(v for v in redraws.views if event in v.shared)
            if views:
                groups.setdefault(views, []).append(event)
        for n, (views, events) in enumerate(groups.items()):
            wire(events, list(views), f"redraw_{n}", self.repeats, **state)
        for event, controls, picked, name, _ in redraws.setters:
            views = [self.shared_redraws[name](v) for v in redraws.following(controls)] \
                if name in self.shared_redraws else redraws.following(controls)
            wire(event, views, f"redraw_after_{name}", self.repeats, picked=picked, **state)
        if self.current_tab is None:
            return
        # a tab's select redraws it only when the visitor opened it (ui/runtime/tab_select.py): Gradio sends one as
        # the page mounts, before the page load has set the view
        moved = gr.State(False)
        for tab_id, tab in self._tabs.items():
            opened = tab.select(opened_by_visitor(tab_id), inputs=[self.current_tab], outputs=[self.current_tab, moved],
                                api_name=f"open_{tab_id}", api_visibility="private", queue=False)
            wire(opened, [v for v in redraws.views if v.tab == tab_id], f"redraw_{tab_id}", self.repeats, gate=moved,
                 **state)
            for fn, inputs, outputs, api_name, kwargs in self._tab_followers:
                self.on(opened, gated_follower(fn), inputs=[moved, *inputs], outputs=outputs,
                        api_name=f"{api_name}_{tab_id}", **kwargs)
        for name, section in self._sections.items():
            kept = dict(inputs=[self.open_sections], outputs=[self.open_sections], queue=False)
            # the section opened last comes first in the list, and its views first in a redraw (ui/page/sections.py)
            opened = self.on([section.expand], lambda now, s=name: [s, *(x for x in (now or []) if x != s)], **kept)
            wire(opened, [v for v in redraws.views if v.section == name], f"redraw_{name}", self.repeats, **state)
            self.on([section.collapse], lambda now, s=name: [x for x in (now or []) if x != s], **kept)
