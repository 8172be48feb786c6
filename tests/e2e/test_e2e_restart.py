"""A restart mid-lecture (issue 58): the server stops and starts again under an open page on a lesson step; Gradio's
page reconnects and reloads itself, and the reload draws the same step, because the address bar carries it
(ui/runtime/address.py). Also the premise that makes it work: Gradio 6.31 reloads the page, address and all, once
the server answers again."""
from __future__ import annotations

import os

from harness.live_app import ARTIFACTS, free_port, start_app, stop_app
from tests.e2e.test_e2e_lessons import settled

LESSON, STEP = "causal-mask", 2  # its step 2 opens mlm on Every head; step 1 is on Masking


def test_a_page_on_a_lesson_step_comes_back_to_it_after_the_server_restarts(page, model_assets):
    port = free_port()
    env = {"ATTENTION_ASSETS": str(model_assets), "GRADIO_SERVER_PORT": str(port)}
    log = ARTIFACTS / "logs" / f"restart-{os.getpid()}.log"
    app = start_app(log, env)
    try:
        page.goto(f"{app.url}?lesson={LESSON}&step=1")
        settled(page, "step 1 of 2")
        page.click("#lesson-next")  # the step the visitor moved to, not the one the link opened
        settled(page, "step 2 of 2")
        page.wait_for_function("(s) => location.search.includes(s)", arg=f"step={STEP}")
        page.evaluate("() => { window.__before_restart = true; }")  # gone once the page has reloaded
        stop_app(app)
        app = start_app(log, env)
        assert app.url.rstrip("/").endswith(f":{port}"), app.url  # the same address: the page's to find again
        # Gradio's page asks every 2 s whether the server is back, then reloads itself
        page.wait_for_function("() => window.__before_restart === undefined")
        settled(page, "step 2 of 2")
        assert page.evaluate("() => location.search").find(f"lesson={LESSON}") >= 0
        assert page.input_value("#model input") == "mlm"
        assert page.evaluate("() => document.querySelector('[role=tab][aria-selected=true]').innerText").strip() \
            == "Every head"
    finally:
        stop_app(app)
