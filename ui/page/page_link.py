"""The page's link: a link's settings opened on page load (and a lesson's step, opened as its link would be), and
the "link to this view" box that writes the view back as a link, kept in the address bar.

The view's own settings are the header's controls; each tab setting a link keeps is declared once beside its
control (ui.page.links.Linked) and registered with it by the tab (`ctx.link`, a LinkedControl here): the page load
sets it, the link box reads it, and a test app without that tab simply has no such setting.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import gradio as gr

from ui.page.components import fit_controls
from ui.page.lecture_examples import default_settings
from ui.page.links import Linked, ViewSettings, lesson_link, make_link, parse_query
from ui.page.messages import warn
from model.registry import MAX_CHARS
from ui.page.messages import InputError, clean_text
from ui.page.outputs import UNCHANGED, Change
from ui.page.tabspec import tab_ids
from ui.runtime.address import ADDRESS_JS


@dataclass(frozen=True)
class LinkedControl:
    """A Linked setting and the control that shows it on this page (ctx.link's arguments)."""

    setting: Linked
    component: gr.components.Component
    shown: Callable | None = None  # settings -> the component's value (default: the setting's value)
    read: Callable | None = None  # (value sent, settings) -> the setting's value (default: Linked.from_page)
    also: dict = field(default_factory=dict)  # other components a link sets: component -> fn(settings)
    opens: gr.Accordion | None = None  # the folded section a link opens when it sets this setting

    def values(self, settings: ViewSettings) -> dict:
        """What opening `settings` sets: this control and the others it names."""
        value = self.shown(settings) if self.shown else getattr(settings, self.setting.name)
        return {self.component: value, **{c: fn(settings) for c, fn in self.also.items()}}

    def link_value(self, value, settings: ViewSettings):
        """The setting's value in a link, from the control's value as the browser sent it."""
        return self.read(value, settings) if self.read else self.setting.from_page(value)

    def set_in(self, settings: ViewSettings) -> bool:
        return getattr(settings, self.setting.name) != self.setting.default


def wire_link(ctx, player, events: dict, classroom=None) -> None:
    """The page load, the lesson player's steps and the link box (ui.page.controls.wire_page calls it once every tab
    is built). events: the events that set the view by code, by name, which the link box follows."""
    registry, ids, linked = ctx.registry, tuple(tab_ids(ctx.tabs)), tuple(ctx.linked)
    defaults = default_settings(registry)
    settings_here = tuple(c.setting for c in linked)
    panels = list(dict.fromkeys(c.opens for c in linked if c.opens is not None))
    controls = [ctx.layer, ctx.head, ctx.kind]
    with gr.Row():
        link = gr.Textbox(label="Link to this view", interactive=False, buttons=["copy"], elem_id="view-link")

    def apply_view(settings: ViewSettings, notes: list[str]) -> dict:
        """What opening a view sets (the load's outputs below), from settings read as a link is: the page load's
        and a lesson step's (ui/lessons/player.py) one code path."""
        for note in notes:  # they quote the link's parameters, which anyone can write
            warn(note)
        fitted = fit_controls(registry, settings.model, settings.layer, settings.head, settings.kind) \
            if settings.model in registry.available else (UNCHANGED,) * 3
        # The view's tab is selected even when it is the one the page opened on: a visitor may have tapped another
        # tab while the load was on its way, and the page would show that tab, undrawn, while current_tab names
        # this one. The tab's own select that follows draws nothing (ui/runtime/tab_select.py): this view does.
        tab = Change(selected=settings.tab)
        view = {ctx.text: settings.text, ctx.model: settings.model, **dict(zip(controls, fitted)),
                ctx.presenter: settings.presenter, ctx.tabs: tab, ctx.current_tab: settings.tab, ctx.quiz: settings.quiz}
        for control in linked:
            view.update(control.values(settings))
        # a panel whose settings the link sets opens: they are what the link shows (the open sections stay open)
        opened = [p for p in panels if any(c.opens is p and c.set_in(settings) for c in linked)]
        view.update({p: Change(open=True) if p in opened else UNCHANGED for p in panels})
        view[ctx.open_sections] = [*(p.elem_id for p in opened), *ctx.open_sections.value] if opened else UNCHANGED
        return view

    def on_load(request: gr.Request):
        params = dict(request.query_params) if request is not None else {}
        if classroom is not None:  # a class's link (class=CODE) opens the lecturer's step, as its lesson link would
            params = classroom.from_link(params)
        # a lesson's link (lesson=...&step=...) opens its step's settings, read below as any link's
        params, lesson = player.from_link(params) if player is not None else (params, ())
        settings, notes = parse_query(params, registry, defaults, ids, settings_here)
        return {**apply_view(settings, notes), **dict(zip(player.outputs if player is not None else [], lesson))}

    view_outputs = [ctx.text, ctx.model, *controls, ctx.presenter, ctx.tabs, ctx.current_tab, ctx.quiz,
                    *(c for control in linked for c in (control.component, *control.also)), *panels,
                    ctx.open_sections]
    load_event = ctx.on([ctx.demo.load], on_load, inputs=None,
                        outputs=view_outputs + (player.outputs if player is not None else []), api_name="load_settings")
    events = {"load": load_event, **events}
    if player is not None:
        events.update({f"lesson_{n}": e for n, e in enumerate(player.wire(ctx, apply_view, view_outputs, settings_here))})
    if classroom is not None and player is not None:
        events.update(classroom.wire(ctx, player, apply_view, view_outputs, settings_here))

    header = [ctx.text, ctx.model, *controls, ctx.presenter, ctx.current_tab, ctx.quiz]
    lesson = [player.lesson, player.step] if player is not None else []

    def view_link(request: gr.Request, *values):
        text, name, layer, head, kind, presenter, tab, quiz = values[:len(header)]
        sent = values[len(header):len(header) + len(linked)]
        page = request.headers.get("referer") if request is not None else None
        if lesson and values[-2]:  # a lesson is open: the link opens it at its step
            return lesson_link(page, values[-2], values[-1], presenter, quiz)
        try:  # the link names the last view drawn: an empty or refused text leaves it as it was
            clean_text(text)
        except InputError:
            return UNCHANGED
        try:  # the values as the browser sent them (no preprocessing, below): numbers, or anything from a script
            settings = ViewSettings(str(text or "")[:MAX_CHARS], str(name), int(layer or 1), int(head or 1),
                                    str(kind or "self"), bool(presenter), str(tab or "attention"), bool(quiz))
            settings.values = {c.setting.name: c.link_value(v, settings) for c, v in zip(linked, sent)}
        except (TypeError, ValueError):
            return UNCHANGED
        if name not in registry.available or len(registry.kinds(name)) == 1:  # only one kind: leave it out
            settings.kind = ""
        return make_link(settings, page)

    link_inputs = header + [c.component for c in linked] + lesson
    # preprocess=False: a slider's range can change on the server a moment before the browser sends its old value
    # (a link to minilm opened on lm's 10th snapshot); Gradio would refuse it, view_link clamps it
    for name, event in events.items():
        ctx.on(event, view_link, inputs=link_inputs, outputs=[link], preprocess=False, api_name=f"link_{name}",
               show_progress="hidden")
    ctx.after_tab_opened(view_link, inputs=link_inputs, outputs=[link], api_name="link_tab", preprocess=False,
                         show_progress="hidden", queue=False)
    ctx.on([ctx.text.change, ctx.layer.change, ctx.head.change, ctx.kind.change, ctx.presenter.change, ctx.quiz.change]
           + [c.component.change for c in linked if hasattr(c.component, "change")],
           view_link, inputs=link_inputs, outputs=[link], api_name="link", show_progress="hidden",
           trigger_mode="always_last", queue=False, preprocess=False)
    # the address bar follows the view: a refresh, a copied address or the reload after a server restart keeps it
    ctx.on([link.change], None, inputs=[link], js=ADDRESS_JS)
