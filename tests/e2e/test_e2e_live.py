"""The "Train live" tab in a real browser: press Train, watch the figures update, Stop, try an input."""
from __future__ import annotations

import pytest

from harness.browser import (TOAST_TEXT, WAIT_MS, error_toasts, stop_training_if_running,
                                        type_number, wait_for_figures)
from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.trains  # afterwards the app's one training slot must be free (tests/trainings_left.py)

PROGRESS, HEADS, STATUS = "#toy-progress", "#toy-heads-plot", "#toy-status"


def plot_value(page, selector: str, expression: str):
    """`expression` of the drawn figure `plot` (gd), once one is on the page: Gradio swaps the plot element
    when a new figure arrives, so it may be missing for a moment."""
    return page.wait_for_function(f"""(s) => {{ const plot = document.querySelector(s + ' .js-plotly-plot');
        if (!plot || !plot.calcdata) return null; return {expression}; }}""", arg=selector).json_value()


def figure_title(page, selector: str) -> str:
    return plot_value(page, selector, "(plot.querySelector('.gtitle') || {}).textContent")


def heads_fingerprint(page) -> str:
    """The every-head figure's cells as drawn (to 0.01), to tell one drawing from another."""
    return plot_value(page, HEADS, "JSON.stringify(plot.calcdata[0][0].z)")


def held_out_accuracy(page) -> float:
    text = page.inner_text(STATUS)
    marker = "Held-out accuracy "
    return float(text.split(marker)[1].split("%")[0]) / 100 if marker in text else 0.0


def test_train_streams_the_figures_then_stop_and_predict(page, live):
    page.goto(live.url + "?tab=live")
    wait_for_figures(page, PROGRESS)
    wait_for_figures(page, HEADS)
    page.wait_for_function("(s) => (document.querySelector(s) || {}).textContent === 'Before training'",
                           arg=f"{PROGRESS} .gtitle")
    assert "Not trained yet" in page.inner_text(STATUS)
    untrained = heads_fingerprint(page)
    allow_a_minute(page)

    page.locator("#toy-train").click()
    stop_enabled_while(page, "Training")  # one training at a time: Train waits until this one ends
    # the figures are redrawn as the model trains: a later step each time, and more evaluations on the curve
    page.wait_for_function("(s) => /step [1-9]/.test((document.querySelector(s) || {}).textContent || '')",
                           arg=f"{PROGRESS} .gtitle")
    first = figure_title(page, PROGRESS)
    page.wait_for_function("([s, before]) => { const t = (document.querySelector(s) || {}).textContent || '';"
                           " return t !== before && /step [1-9]/.test(t); }", arg=[f"{PROGRESS} .gtitle", first])
    page.wait_for_function("""(s) => { const plot = document.querySelector(s + ' .js-plotly-plot');
        const curve = plot && plot.calcdata && plot.calcdata.find(c => c[0].trace.name === 'held-out accuracy');
        return curve && curve.length >= 2; }""", arg=PROGRESS)
    screenshot(page, "live-training", "[role=tabpanel]")

    # reverse with positions is learned within seconds; stop once it is well on its way (or done by itself)
    page.wait_for_function("""(s) => { const t = (document.querySelector(s) || {}).innerText || '';
        const m = t.match(/Held-out accuracy ([0-9.]+)%/); return t.includes('Done') || (m && +m[1] >= 50); }""",
                           arg=STATUS)
    stop_training_if_running(page)
    page.wait_for_function("(s) => (document.querySelector(s) || {}).innerText?.includes('Done')", arg=STATUS)
    assert "you stopped it" in page.inner_text(STATUS) or "every held-out answer" in page.inner_text(STATUS)
    assert held_out_accuracy(page) >= 0.5
    assert heads_fingerprint(page) != untrained, "the heads' attention should have changed as the model learned"
    page.wait_for_function("() => !document.querySelector('#toy-train').disabled")

    # the trained model answers a typed input, with every head and one head in detail
    box = page.locator("#toy-input textarea, #toy-input input").first
    box.fill("klmnopqrst")
    page.locator("#toy-predict").click()
    page.wait_for_function("() => (document.querySelector('#toy-answer') || {}).innerText?.includes('klmnopqrst')")
    wait_for_figures(page, "#toy-answer-detail")
    assert "in detail" in figure_title(page, "#toy-answer-detail")
    assert not error_toasts(page)
    screenshot(page, "live-trained", "[role=tabpanel]")
    # an input of the wrong length: one warning, and the last answer stays (it was an Error badge over it)
    box.fill("abcde")
    page.locator("#toy-predict").click()
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=toast-text]')]"
                           ".some(e => /warning/.test(e.className))")
    assert not error_toasts(page) and "klmnopqrst" in page.inner_text("#toy-answer")
    assert figure_title(page, "#toy-answer-detail")


def test_stop_ends_a_training_that_cannot_finish_and_keeps_what_it_learned(page, live):
    """Without positions reverse is never learned, so only Stop (or the time limit) can end it."""
    page.goto(live.url + "?tab=live")
    wait_for_figures(page, HEADS)
    page.locator("#toy-positions input").uncheck()
    page.wait_for_function("(s) => /positions off/.test((document.querySelector(s) || {}).innerText || '')",
                           arg=STATUS)
    page.locator("#toy-train").click()
    page.wait_for_function("(s) => /step [1-9]/.test((document.querySelector(s) || {}).textContent || '')",
                           arg=f"{PROGRESS} .gtitle")
    page.locator("#toy-stop").click()
    page.wait_for_function("(s) => (document.querySelector(s) || {}).innerText?.includes('Done')", arg=STATUS)
    status = page.inner_text(STATUS)
    assert "you stopped it" in status and "kept" in status, status
    assert "time is up" not in status
    assert not [t for t in page.locator(TOAST_TEXT).all_inner_texts() if "Nothing to stop" in t]
    # what it learned is the model below: it answers the task's example
    page.wait_for_function("() => (document.querySelector('#toy-answer') || {}).innerText?.includes('abcdefghij')")
    assert "positions off" in page.inner_text("#toy-answer")
    page.wait_for_function("() => !document.querySelector('#toy-train').disabled")
    screenshot(page, "live-stopped", "[role=tabpanel]")


def status_says(page, words: str) -> None:
    page.wait_for_function("([s, words]) => ((document.querySelector(s) || {}).innerText || '').includes(words)",
                           arg=[STATUS, words])


def stop_enabled_while(page, words: str) -> None:
    """When the status says `words`, Stop can be pressed and Train cannot (one update sets all three): read in one
    step in the page, the moment the status says it (a training may end by itself right after)."""
    state = page.wait_for_function("""([s, words]) => {
        if (!((document.querySelector(s) || {}).innerText || '').includes(words)) return null;
        return {stop: !document.querySelector('#toy-stop').disabled, train: !document.querySelector('#toy-train').disabled};
    }""", arg=[STATUS, words]).json_value()
    assert state == {"stop": True, "train": False}, f"while the status says {words!r}: {state}"


def allow_a_minute(page) -> None:
    """The most seconds a training may take (60): the tests' trainings end when learned or stopped, not at a time
    limit a slow machine could reach first."""
    type_number(page, page.locator("#toy-seconds input[type=number]").first, "60")
    page.wait_for_function("() => document.querySelector('#toy-seconds input[type=range]').value === '60'")


def test_stop_is_enabled_while_a_training_waits_for_the_slot_and_while_it_runs(page, browser, live):
    """The slot held by another visitor (a second browser, its own session): this visitor's training waits, with
    Stop enabled, and Stop leaves the queue. Then, the slot free: it runs, with Stop enabled, and Stop ends it.
    Reverse without positions is never learned, so each training runs until it is stopped (or its 60 s are up)."""
    other_context = browser.new_context(viewport={"width": 1400, "height": 1000})
    other = other_context.new_page()
    other.set_default_timeout(WAIT_MS)
    try:
        for visitor in (other, page):
            visitor.goto(live.url + "?tab=live")
            wait_for_figures(visitor, HEADS)
            visitor.locator("#toy-positions input").uncheck()
            status_says(visitor, "positions off")
            allow_a_minute(visitor)
        other.locator("#toy-train").click()
        stop_enabled_while(other, "Training")
        page.locator("#toy-train").click()
        stop_enabled_while(page, "Waiting for a free trainer")
        page.locator("#toy-stop").click()
        status_says(page, "Stopped")
        assert "before it started" in page.inner_text(STATUS)
        page.wait_for_function("() => document.querySelector('#toy-stop').disabled "
                               "&& !document.querySelector('#toy-train').disabled")

        stop_training_if_running(other)  # the slot comes free
        status_says(other, "Done")
        page.locator("#toy-train").click()
        stop_enabled_while(page, "Training")
        page.locator("#toy-stop").click()
        status_says(page, "Done")
        assert "you stopped it" in page.inner_text(STATUS)
        page.wait_for_function("() => document.querySelector('#toy-stop').disabled "
                               "&& !document.querySelector('#toy-train').disabled")
        assert not error_toasts(page) and not error_toasts(other)
    finally:
        other_context.close()
