"""Upstream behaviour that only a browser shows, behind a workaround in ui/runtime/ (see its README.md):
Gradio's own components on a page of their own, without the app."""
from __future__ import annotations

import threading
import time

import gradio as gr
import pytest


@pytest.fixture
def picker_page():
    """A page with one dropdown whose `input` event counts its calls on the server."""
    calls, lock = [], threading.Lock()

    def on_input(value):
        with lock:
            calls.append(value)
        return len(calls)

    with gr.Blocks() as demo:
        picker = gr.Dropdown(choices=["first", "second"], value="first", elem_id="picker")
        count = gr.Number(label="calls", elem_id="calls")
        picker.input(on_input, inputs=picker, outputs=count, trigger_mode="always_last")
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, server_name="127.0.0.1")
    try:
        yield url, calls
    finally:
        demo.close()


def test_a_dropdown_sends_input_twice_for_one_pick(picker_page, page):
    """Delete ui/runtime/repeats.py (and the Repeats checks in ui.context and ui.controls) when this fails:
    Gradio 6.31's dropdown calls on_input when an option is picked and again when its box loses the focus."""
    url, calls = picker_page
    page.goto(url, wait_until="load")
    page.wait_for_selector("#picker input")
    page.locator("#picker input").first.click()
    page.get_by_role("option", name="second", exact=True).first.click()
    deadline = time.monotonic() + 20
    while len(calls) < 2 and time.monotonic() < deadline:  # the second call follows within milliseconds
        page.wait_for_timeout(100)
    page.wait_for_timeout(500)  # and no third comes
    assert calls == ["second", "second"], (
        f"one pick sent `input` {len(calls)} time(s) ({calls}): Gradio no longer sends the dropdown's input "
        "twice, delete ui/runtime/repeats.py and its uses")


@pytest.fixture
def empty_plot_and_copy_box_page():
    """A page with a figure not drawn yet and a read-only text box with a copy button."""
    with gr.Blocks() as demo:
        gr.Plot(elem_id="empty-plot")
        gr.Textbox(value="http://example.org/", label="Link to this view", interactive=False, buttons=["copy"],
                   elem_id="copy-box")
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, server_name="127.0.0.1")
    try:
        yield url
    finally:
        demo.close()


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
