"""Views that follow a change at once, in a real browser: nothing on the page describes the state before it."""
from __future__ import annotations

import pytest

from harness.browser import TOAST_TEXT, error_toasts, stop_training_if_running, wait_for_figures
from tests.e2e.conftest import screenshot

STATUS, ANSWER = "#toy-status", "#toy-answer"


def title_of(page, selector: str) -> str:
    return page.wait_for_function("(s) => { const t = document.querySelector(s + ' .gtitle');"
                                  " return t && t.textContent; }", arg=selector).json_value()


@pytest.mark.trains
def test_train_live_after_a_settings_change_the_old_model_is_neither_shown_nor_used(page, live):
    page.goto(live.url + "?tab=live")
    wait_for_figures(page, "#toy-heads-plot")
    page.locator("#toy-train").click()
    page.wait_for_function("(s) => /step [1-9]/.test((document.querySelector(s) || {}).textContent || '')",
                           arg="#toy-progress .gtitle")
    stop_training_if_running(page)  # reverse may be learned already
    page.wait_for_function("(s) => (document.querySelector(s) || {}).innerText?.includes('abcdefghij')", arg=ANSWER)
    wait_for_figures(page, "#toy-answer-detail")
    page.wait_for_function("() => !document.querySelector('#toy-train').disabled")

    page.locator("#toy-width label", has_text="64").click()  # another model: width 64
    page.wait_for_function("(s) => (document.querySelector(s) || {}).innerText?.includes('not the one set above')",
                           arg=ANSWER)
    assert "width 32" in page.inner_text(ANSWER)
    page.wait_for_function("() => !document.querySelector('#toy-answer-detail .js-plotly-plot')"
                           " || !document.querySelector('#toy-answer-detail').offsetParent")
    assert "Not trained yet" in page.inner_text(STATUS) and "width 64" in page.inner_text(STATUS)
    page.locator("#toy-predict").click()
    page.wait_for_function("(s) => [...document.querySelectorAll(s)].some(e => e.innerText.includes('press Train'))",
                           arg=TOAST_TEXT)
    screenshot(page, "live-stale", "[role=tabpanel]")

    page.locator("#toy-width label", has_text="32").click()  # back to the trained model: it answers again
    page.wait_for_function("(s) => (document.querySelector(s) || {}).innerText?.includes('Done')", arg=STATUS)
    page.locator("#toy-predict").click()
    page.wait_for_function("(s) => (document.querySelector(s) || {}).innerText?.includes('reads')", arg=ANSWER)
    assert not error_toasts(page)


def test_copying_another_head_drops_the_stripe_description(page, live):
    page.goto(live.url + "?tab=induction")
    wait_for_figures(page, "#copying-stripe")
    assert "the stripe," in title_of(page, "#copying-stripe")
    page.locator("#copying-head input").first.click()
    page.get_by_role("option", name="L1 H4", exact=True).first.click()
    page.wait_for_function("() => /^L1 H4/.test((document.querySelector('#copying-stripe .gtitle') || {})"
                           ".textContent || '')")
    title = title_of(page, "#copying-stripe")
    assert "no stripe" in title and "the stripe," not in title, title
    page.locator("#copying-method label", has_text="uniform").click()
    page.wait_for_function("() => (document.querySelector('#copying-table') || {}).innerText"
                           "?.includes('weights made uniform')")
    assert "zeroed" not in page.inner_text("#copying-table")
    screenshot(page, "copying-other-head", "[role=tabpanel]")
    assert not error_toasts(page)
