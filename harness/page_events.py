"""A page's events as Gradio's browser sends them, driven without a browser (tests/app/api/test_dispatch.py and
test_dropdown_repeats.py): the handlers an event on a component runs, read from the page's config, and a dispatcher
run with the open tab and the controls' values."""
from __future__ import annotations

import gradio as gr


def component_id(demo, elem_id: str) -> int:
    found = [c["id"] for c in demo.get_config_file()["components"] if c.get("props", {}).get("elem_id") == elem_id]
    assert len(found) == 1, f"{len(found)} components with elem_id {elem_id!r}"
    return found[0]


def listeners_of(demo, elem_id: str, event: str) -> list:
    """The handlers the browser runs when `event` happens on the component, read from the page's config
    as the browser reads it: each event it may send lists its targets."""
    target = (component_id(demo, elem_id), event)
    return [demo.fns[dep["id"]] for dep in demo.get_config_file()["dependencies"] if target in map(tuple, dep["targets"])]


def endpoint(demo, api_name: str):
    return next(fn for fn in demo.fns.values() if fn.api_name == api_name)


def run(fn, open_tab: str, request: gr.Request | None = None, open_sections=None, **overrides
        ) -> tuple[list[dict], Exception | None]:
    """Drive a dispatcher as Gradio would: the visitor's request, the open tab, the folded sections open on the
    page (None: those open as a page opens), then every input's value."""
    values = [overrides.get(getattr(c, "elem_id", None), c.value) for c in fn.inputs[2:]]
    if open_sections is None:
        open_sections = fn.inputs[1].value
    updates, error = [], None
    try:
        for update in fn.fn(request, open_tab, list(open_sections), *values):
            updates.append(update)
    except gr.Error as e:
        error = e
    return updates, error


def is_skip(value) -> bool:
    return isinstance(value, dict) and value == gr.skip()
