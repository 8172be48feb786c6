"""One redraw path: how a change to a shared control reaches the views that read it.

The shared controls are the header's: the sentence, the model, the layer, the head, the attention kind and
presenter mode. Whoever changes one, the visitor (moving the head slider, pressing Enter) or code (the model
picker refitting the sliders, an example, the page load, a lesson step, a tile click picking a head), the same
rule picks the views to redraw, `Redraws.following`: the views that follow the controls changed. A visitor's
change runs them on its own event (`layer.input`); an event that sets shared controls by code (a ctx.on whose
outputs hold them: ui.page.context notices, nothing to remember) is followed by their redraw (`.then`). Either way
the page sends one request per click, in which only the open tab's views compute (and of a folded section,
only while it is open), each sent as soon as it is ready, and bad input is one message.

Gradio runs one event per trigger, and one request per event: so one event serves all the views a trigger
redraws, across tabs, and it is wired once every tab has registered its views (ui.page.context.Context.finish).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import gradio as gr

from ui.page.messages import warn
from ui.page.outputs import UNCHANGED
from ui.runtime.events import repeat_outputs
from ui.runtime.repeats import Repeats
from ui.runtime.wire import sent_all
from ui.page.sections import first_views

# the shared controls (ui.page.context.Context's fields), in the order a setter's redraw names them
SHARED = ("text", "model", "layer", "head", "kind", "presenter")


@dataclass(frozen=True, eq=False)
class View:
    """One registered view: what a redraw needs to run it."""

    fn: Callable
    inputs: list
    outputs: list
    tab: str | None
    shared: list  # the visitor's events on shared controls it follows (ctx.triggers, ctx.head_triggers, ...)
    section: str | None = None  # the folded section it sits in (elem_id): computed on the page only while open


def dispatcher(views: list[View], outputs: list, where: dict, api_name: str, repeats: Repeats, picked: bool):
    """The handler of one redraw event: (request, open tab, open sections, *the views' inputs in order).

    Only the open tab's views compute (not those of a closed section), each sent as soon as it is ready, in the
    order ui.page.sections.first_views gives: the tab's main view, the open sections' views, the rest. picked: the
    event follows a dropdown's pick, which Gradio sends twice (its repeat is answered "unchanged",
    ui/runtime/repeats.py); any other redraw makes the page differ from what the last pick drew."""

    @repeat_outputs
    def dispatch(request: gr.Request, open_tab, open_sections, *values):
        if not picked:
            repeats.forget(request)
        elif repeats.seen(request, api_name, (open_tab, values)):  # a dropdown's second event
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

    return dispatch


def wire(trigger, views: list[View], api_name: str, repeats: Repeats, tab_state=None, sections_state=None,
         picked: bool = False, gate=None) -> None:
    """One event for many views: `trigger` is a list of events, or an event to follow (.then). tab_state,
    sections_state: the gr.State naming the open tab and the open sections (None: every view computes).
    gate: a gr.State that says whether to redraw at all (a tab's select, ui/runtime/tab_select.py)."""
    if not views:
        return
    inputs = list(dict.fromkeys(c for v in views for c in v.inputs))
    outputs = list(dict.fromkeys(c for v in views for c in v.outputs))
    dispatch = dispatcher(views, outputs, {id(c): i for i, c in enumerate(inputs)}, api_name, repeats, picked)
    with_tab = tab_state is not None

    def without_tab(request: gr.Request, *values):
        yield from dispatch(request, None, None, *values)

    options = dict(inputs=([tab_state, sections_state] if with_tab else []) + inputs, outputs=outputs,
                   api_name=api_name, api_visibility="private", show_progress="minimal",
                   postprocess=False)  # see ui/runtime/wire.py
    fn = dispatch if with_tab else without_tab
    if gate is not None:
        options["inputs"] = [gate] + options["inputs"]
        fn = gated(fn, outputs)
    if isinstance(trigger, list):
        gr.on(triggers=trigger, fn=fn, trigger_mode="always_last", **options)
    else:
        trigger.then(fn, **options)


def gated(fn: Callable, outputs: list) -> Callable:
    """fn behind a gate: (request, go, *values), and when not go every output left as it is."""

    def run(request: gr.Request, go, *values):
        if go:
            yield from fn(request, *values)
        else:
            yield {output: gr.skip() for output in outputs}

    return run


def gated_follower(fn: Callable) -> Callable:
    """A plain handler fn(request, *values) behind a gate: (request, go, *values), and when not go unchanged."""

    def run(request: gr.Request, go, *values):
        return fn(request, *values) if go else UNCHANGED

    return run


@dataclass
class Redraws:
    """The views registered so far and the events that set shared controls by code (ui.page.context fills both)."""

    views: list[View]
    setters: list  # (event, the shared controls it sets or follows, whether a pick triggers it, name, its triggers)
    events: dict  # shared control -> the visitor's events on it whose views redraw it

    def following(self, controls) -> list[View]:
        """The views a change to these shared controls redraws: those that follow the visitor's event on any
        of them (a new sentence or model: every view that follows the sentence)."""
        events = [e for control in controls for e in self.events[control]]
        return [v for v in self.views if any(e in v.shared for e in events)]
