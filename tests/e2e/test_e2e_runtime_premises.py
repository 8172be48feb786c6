"""Upstream behaviour that only a browser shows, behind a workaround in ui/runtime/ (see its README.md):
Gradio's own components on a page of their own, without the app."""
from __future__ import annotations

import contextlib
import threading
import time

import gradio as gr
import pytest

from harness.browser import IDLE_JS


@contextlib.contextmanager
def served(demo: gr.Blocks):
    """A Gradio page of its own on a free local port, closed afterwards: yields its address."""
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, server_name="127.0.0.1")
    try:
        yield url
    finally:
        demo.close()


def wait_for_call(page, calls: list, name: str) -> None:
    """Wait until the server has recorded a call named `name` (a wait for state, not for time)."""
    deadline = time.monotonic() + 60  # only a failure waits this long
    while name not in calls:
        assert time.monotonic() < deadline, f"the call {name!r} never came: {calls}"
        page.wait_for_timeout(50)


@pytest.fixture
def picker_page():
    """A page with one dropdown whose `input` and `select` events, and a marker button, record their calls on
    the server. All three share one worker, first come first served: when the marker's call is recorded,
    every event the page sent before it has been too."""
    calls, lock = [], threading.Lock()

    def recorder(name):
        def on_event(value=None):
            with lock:
                calls.append((name, value))
            return len(calls)
        return on_event

    with gr.Blocks() as demo:
        picker = gr.Dropdown(choices=["first", "second", "third"], value="first", elem_id="picker")
        count = gr.Number(label="calls", elem_id="calls")
        mark = gr.Button("Mark", elem_id="mark")
        one_at_a_time = dict(outputs=count, concurrency_id="recorded", concurrency_limit=1)
        picker.input(recorder("input"), inputs=picker, trigger_mode="always_last", **one_at_a_time)
        picker.select(recorder("select"), inputs=picker, **one_at_a_time)
        mark.click(recorder("mark"), **one_at_a_time)
    with served(demo) as url:
        yield url, calls


def events_until_marked(page, calls: list) -> list:
    """The events recorded since the last mark, once a new mark is (a wait for state, not for time)."""
    marks = calls.count(("mark", None))
    page.locator("#mark").click()
    deadline = time.monotonic() + 60  # only a failure waits this long
    while calls.count(("mark", None)) == marks:
        assert time.monotonic() < deadline, f"the marker's call never came: {calls}"
        page.wait_for_timeout(50)
    last = len(calls) - 1 - calls[::-1].index(("mark", None))
    before = [i for i, call in enumerate(calls[:last]) if call == ("mark", None)]
    return sorted(calls[(before[-1] + 1 if before else 0):last])


def test_a_dropdown_sends_input_twice_for_one_pick(picker_page, page):
    """Delete ui/runtime/repeats.py (and the Repeats checks in ui.page.context and ui.page.controls) when this fails:
    Gradio 6.31's dropdown calls on_input when an option is picked with the mouse and again when its box
    loses the focus; a keyboard pick (Enter) sends `input` once and no `select`, so `select` cannot replace it."""
    url, calls = picker_page
    page.goto(url, wait_until="load")
    page.wait_for_selector("#picker input")
    page.locator("#picker input").first.click()
    page.get_by_role("option", name="second", exact=True).first.click()
    mouse = events_until_marked(page, calls)
    assert mouse.count(("input", "second")) == 2, (
        f"one pick sent {mouse}: Gradio no longer sends the dropdown's input twice, delete ui/runtime/repeats.py "
        "and its uses")
    assert mouse == [("input", "second"), ("input", "second"), ("select", "second")], mouse
    page.locator("#picker input").first.focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    keyboard = events_until_marked(page, calls)
    assert len(keyboard) == 1 and keyboard[0][0] == "input" and keyboard[0][1] != "second", (
        f"a keyboard pick sent {keyboard}: ui/runtime/repeats.py's reading of Gradio's dropdown is out of date")


@pytest.fixture
def empty_plot_and_copy_box_page():
    """A page with a figure not drawn yet and a read-only text box with a copy button."""
    with gr.Blocks() as demo:
        gr.Plot(elem_id="empty-plot")
        gr.Textbox(value="http://example.org/", label="Link to this view", interactive=False, buttons=["copy"],
                   elem_id="copy-box")
    with served(demo) as url:
        yield url


def test_gradio_names_a_roleless_placeholder_and_gives_a_copy_boxs_label_to_its_button(
        empty_plot_and_copy_box_page, page):
    """Delete ui/runtime/aria.py (and its call in app.launch_options) when this fails: Gradio 6.31 puts an
    aria-label on its empty-value div without a role, and a copy button first in a text box's <label>."""
    page.goto(empty_plot_and_copy_box_page, wait_until="load")
    page.wait_for_selector("#copy-box textarea, #copy-box input")
    roles = page.eval_on_selector_all("#empty-plot .empty[aria-label]", "els => els.map(e => e.getAttribute('role'))")
    unnamed = page.get_by_role("textbox", name="Link to this view").count() == 0
    assert roles == [None] or not unnamed, (
        "Gradio's empty-value box has a role or is gone, and its copy box is named: delete ui/runtime/aria.py")
    assert roles == [None], f"the empty-value box now has role {roles}: delete that half of ui/runtime/aria.py"
    assert unnamed, "a copy box is named by its label now: delete that half of ui/runtime/aria.py"


@pytest.fixture
def two_deferred_listeners_page():
    """A page with one slider whose `input` runs two always_last listeners, each recording its call: a slow one
    (1 s) and a quick one (0.2 s)."""
    calls, lock = [], threading.Lock()

    def recorder(name, seconds):
        def on_input(value):
            with lock:
                calls.append((name, value))
            time.sleep(seconds)
            return value
        return on_input

    with gr.Blocks() as demo:
        slider = gr.Slider(1, 11, value=1, step=1, elem_id="slider")
        slow, quick = gr.Number(elem_id="slow"), gr.Number(elem_id="quick")
        slider.input(recorder("slow", 1.0), inputs=slider, outputs=slow, trigger_mode="always_last")
        slider.input(recorder("quick", 0.2), inputs=slider, outputs=quick, trigger_mode="always_last")
    with served(demo) as url:
        yield url, calls


def test_a_deferred_listener_sends_its_whole_trigger_again(two_deferred_listeners_page, page):
    """Allow two always_last listeners on one trigger again (ui/runtime/README.md, "Rules") when this fails:
    Gradio 6.31's page, when a listener deferred while it ran ends, dispatches its whole trigger again, to every
    listener, instead of its own call. Two listeners of one trigger whose calls overlap so re-run each other (the
    decoding step's box sent two requests a second, for good). Here two digits typed in the slider's box while
    both run: the quick listener runs for "1", for "10" when it ends, and a third time when the slow one's
    deferred call starts, where each listener's call for the last value is all always_last asks for."""
    url, calls = two_deferred_listeners_page
    page.goto(url, wait_until="load")
    box = page.locator("#slider input[type=number]")
    box.click()
    box.press("Control+a")
    box.press_sequentially("10", delay=50)
    page.wait_for_function("() => document.querySelector('#slow input').value === '10'", timeout=20_000)
    page.wait_for_function(IDLE_JS, timeout=20_000)
    quick = [value for name, value in calls if name == "quick"]
    assert quick[-1] == 10 and len(quick) == 3, (
        f"two typed digits made the quick listener run {quick}: Gradio no longer sends a deferred listener's "
        "whole trigger again; the rule in ui/runtime/README.md can go")


@pytest.fixture
def tabs_page():
    """A page with two tabs whose `select` events record the tab selected, and a page load that records itself."""
    calls, lock = [], threading.Lock()

    def recorder(name):
        def on_event():
            with lock:
                calls.append(name)
        return on_event

    with gr.Blocks() as demo:
        with gr.Tabs():
            with gr.Tab("First", id="first") as first:
                gr.Markdown("one")
            with gr.Tab("Second", id="second") as second:
                gr.Markdown("two", elem_id="second-text")
        first.select(recorder("first"))
        second.select(recorder("second"))
        demo.load(recorder("load"))
    with served(demo) as url:
        yield url, calls


def test_gradio_tabs_send_select_as_the_page_mounts(tabs_page, page):
    """Delete ui/runtime/tab_select.py's gate (a tab's redraw and link run for every select) when this fails:
    Gradio 6.31's Tabs send the first tab's `select` as the page mounts, before anyone clicks, and before (or
    beside) the page's load event: a redraw following it reads the controls as they were before the load."""
    url, calls = tabs_page
    page.goto(url, wait_until="load")
    wait_for_call(page, calls, "load")
    page.get_by_role("tab", name="Second").click()
    wait_for_call(page, calls, "second")
    assert calls.count("first") == 1, (
        f"the page sent {calls}: Gradio no longer selects the first tab as the page mounts; "
        "ui/runtime/tab_select.py's gate can go")


def test_plotly_draws_a_title_on_one_line_past_a_narrow_figures_edge(page):
    """Delete ui/runtime/titles.py (the page script breaking a title to fit its figure) when this fails: Plotly.js,
    as gr.Plot draws it, keeps a title on one line however narrow the figure, and the line runs past the figure's
    edge, where it is cut."""
    import plotly.graph_objects as go

    title = "The top token after each layer (colour: its probability), as a phone shows it"
    with gr.Blocks() as demo:
        gr.Plot(go.Figure(go.Bar(y=[1, 2]), layout=dict(title=dict(text=title, x=0.01), height=300)),
                elem_id="narrow")
    with served(demo) as url:
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(url, wait_until="load")
        page.wait_for_selector("#narrow .gtitle")
        drawn = page.evaluate("""() => { const p = document.querySelector('#narrow .js-plotly-plot');
            const t = p.querySelector('.gtitle');
            return {lines: Math.max(1, t.querySelectorAll('.line').length), text: t.textContent,
                    past: t.getBoundingClientRect().right - p.getBoundingClientRect().right}; }""")
    assert drawn["text"] == title and drawn["lines"] == 1 and drawn["past"] > 0, (
        f"Plotly drew the title as {drawn}: it now fits a title to its figure; delete ui/runtime/titles.py")
