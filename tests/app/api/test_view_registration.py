"""A tab's handlers are plain functions: they return view data (ui.page.outputs.Change for an output shown, hidden or
refitted) and raise InputError for bad input; ui.page.context registers them with Gradio in one call (ctx.on, ctx.listen,
ctx.page_event) and is the one place that turns their data into Gradio's updates and their errors into messages."""
from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import gradio as gr
import pytest
from gradio.state_holder import SessionState

from ui.page.context import Context
from ui.page.messages import InputError
from ui.page.outputs import UNCHANGED, Change, hidden, show
from ui.page.tabspec import TabSpec

UI = Path(__file__).resolve().parents[3] / "ui"
# Gradio's event methods and update builders: only ui/page/context.py (and ui/runtime/) may call them
EVENTS = {"click", "change", "input", "release", "then", "submit", "select", "blur", "focus", "load", "upload",
          "success"}
BUILDERS = {("gr", "on"), ("gr", "api"), ("gr", "update"), ("gr", "skip")}
REGISTRAR = {"context.py", "redraw.py"}  # the registration layer and its redraws (ui/page/redraw.py)


def gradio_calls(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    imported = {(alias.asname or alias.name).split(".")[0] for node in tree.body
                if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}  # modules: experiments.interventions
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        if isinstance(owner, ast.Name) and (owner.id, node.func.attr) in BUILDERS:
            found.append(f"{path.name}:{node.lineno} gr.{node.func.attr}")
        elif node.func.attr in EVENTS and not (isinstance(owner, ast.Name) and owner.id in imported):
            found.append(f"{path.name}:{node.lineno} .{node.func.attr}(...)")
    return found


def test_no_tab_module_wires_a_gradio_event_or_builds_an_update_itself():
    tabs = [p for p in sorted(UI.glob("*/*.py")) if p.parent.name != "runtime" and p.name not in REGISTRAR and "import gradio" in p.read_text()]
    assert len(tabs) >= 15, [p.name for p in tabs]
    found = [call for p in tabs for call in gradio_calls(p)]
    assert found == [], "register through ui.page.context (ctx.on, ctx.listen, ctx.page_event) and return ui.page.outputs: " \
                        + ", ".join(found)


def test_the_scan_finds_a_direct_event_and_an_update(tmp_path):
    wired = tmp_path / "wired.py"
    wired.write_text("import gradio as gr\nb = gr.Button()\nb.click(lambda: gr.update(visible=True), outputs=[b])\n")
    assert gradio_calls(wired) == ["wired.py:3 .click(...)", "wired.py:3 gr.update"]


@pytest.fixture
def page():
    """A page with the shared controls and one tab's own button, box and plot."""
    with gr.Blocks() as demo:
        ctx = Context(demo, registry=None, text=gr.Textbox(), model=gr.Dropdown(choices=["lm"], value="lm"),
                      analyze=gr.Button(), layer=gr.Slider(1, 4), head=gr.Slider(1, 4), kind=gr.Radio(["self"]),
                      presenter=gr.Checkbox())
        button, box, number = gr.Button("go"), gr.Textbox(), gr.Number()
    return demo, ctx, button, box, number


def call(demo, api_name: str, *values):
    index = next(i for i, fn in demo.fns.items() if fn.api_name == api_name)
    return asyncio.run(demo.process_api(index, list(values), state=SessionState(demo)))["data"]


def test_a_plain_handler_is_registered_in_one_call_and_its_changes_reach_the_page_as_updates(page):
    demo, ctx, button, box, number = page

    def view(text: str):
        if not text:
            raise InputError("Type a sentence first.")
        return show(text.upper()), UNCHANGED if text == "same" else Change(value=len(text), interactive=False)

    with demo:
        ctx.on([button.click], view, inputs=[ctx.text], outputs=[box, number], api_name="shout", public=True)
        ctx.on([box.change], lambda text: hidden(), inputs=[box], outputs=[number], api_name="page_only")

    assert call(demo, "shout", "cat") == [{"__type__": "update", "value": "CAT", "visible": True},
                                          {"__type__": "update", "value": 3, "interactive": False}]
    assert call(demo, "shout", "same")[1] == {"__type__": "update"}  # unchanged: the page keeps what it shows
    with pytest.raises(gr.Error, match="Type a sentence first"):
        call(demo, "shout", "")
    named = demo.get_api_info()["named_endpoints"]
    assert "/shout" in named and [p["parameter_name"] for p in named["/shout"]["parameters"]] == ["text"]
    assert "/page_only" not in named, "an event that only keeps the page in step is not API"


def test_a_streamed_handler_sends_each_step_and_its_bad_input_as_a_message(page):
    demo, ctx, button, box, number = page

    def count(text: str):
        for n in range(1, 3):
            yield {box: show(f"{text} {n}"), number: n}
        raise InputError("Stopped: the count ran out.")

    with demo:
        ctx.on([button.click], count, inputs=[ctx.text], outputs=[box, number], api_name="count", public=True)
    fn = demo.fns[next(i for i, f in demo.fns.items() if f.api_name == "count")].fn
    steps = fn("go")
    assert next(steps) == {box: {"__type__": "update", "value": "go 1", "visible": True}, number: 1}
    assert next(steps)[number] == 2
    with pytest.raises(gr.Error, match="the count ran out"):
        next(steps)


def test_a_bug_in_a_handler_is_a_message_without_a_traceback_or_a_path(page):
    demo, ctx, button, box, number = page

    def broken(text: str):
        return {}["missing"]

    with demo:
        ctx.on([button.click], broken, inputs=[ctx.text], outputs=[box], api_name="broken", public=True)
    with pytest.raises(gr.Error) as raised:
        call(demo, "broken", "cat")
    assert "Something went wrong" in raised.value.message and "/" not in raised.value.message


def tabbed_context(demo) -> Context:
    """The shared controls, with the open tab and the open sections kept, as on the page."""
    return Context(demo, registry=None, text=gr.Textbox(), model=gr.Dropdown(choices=["lm"], value="lm"),
                   analyze=gr.Button(), layer=gr.Slider(1, 4), head=gr.Slider(1, 4), kind=gr.Radio(["self"]),
                   presenter=gr.Checkbox(), current_tab=gr.State(None), open_sections=gr.State([]))


def test_a_view_in_a_folded_section_computes_on_the_page_only_while_the_section_is_open():
    with gr.Blocks() as demo:
        ctx = tabbed_context(demo)
        with gr.Tabs():
            with ctx.tab(TabSpec(id="one", label="One")):
                always = gr.Textbox()
                with gr.Accordion("Folded", open=False, elem_id="folded") as folded:
                    inside = gr.Textbox()
        calls = []

        def seen(text: str):
            calls.append(text)
            return text.upper()

        ctx.listen(lambda text: text, inputs=[ctx.text], outputs=[always], api_name="always")
        ctx.listen(seen, inputs=[ctx.text], outputs=[inside], api_name="inside", section=folded)
        ctx.finish()
    redraw = next(f.fn for f in demo.fns.values() if f.api_name == "redraw_0")
    request = gr.Request(session_hash="student")
    closed = list(redraw(request, "one", [], "cat"))
    assert calls == [] and inside not in closed[-1] and closed[-1][always] == "cat"
    opened = list(redraw(request, "one", ["folded"], "dog"))
    assert calls == ["dog"] and opened[-1][inside] == "DOG"
    assert call(demo, "inside", "api") == ["API"], "an API caller always gets the view"
    expanded = [f for f in demo.fns.values() if f.api_name == "redraw_folded"]
    assert expanded, "opening the section draws its view"


def test_what_would_join_the_redraws_after_they_are_wired_is_an_error_not_a_stale_view():
    """A view, tab, section or setter registered after finish() would never be redrawn: building the page fails."""
    with gr.Blocks() as demo:
        ctx = tabbed_context(demo)
        with gr.Tabs():
            with ctx.tab(TabSpec(id="one", label="One")):
                early, late = gr.Textbox(), gr.Textbox()
        ctx.listen(lambda text: text, inputs=[ctx.text], outputs=[early], api_name="early")
        ctx.finish()
        with pytest.raises(RuntimeError, match=r"/late is registered after Context.finish\(\)"):
            ctx.listen(lambda text: text, inputs=[ctx.text], outputs=[late], api_name="late")
        with pytest.raises(RuntimeError, match="'pick', which sets shared controls, is registered after"):
            ctx.on([late.submit], lambda text: text, inputs=[late], outputs=[ctx.text], api_name="pick")
        with pytest.raises(RuntimeError, match="'two' is registered after"):
            ctx.tab(TabSpec(id="two", label="Two"))
        with pytest.raises(RuntimeError, match="second Context.finish"):
            ctx.finish()
        ctx.on([late.submit], lambda text: text, inputs=[late], outputs=[early])  # a tab's own event still may
