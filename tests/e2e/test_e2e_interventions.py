"""The Interventions tab as a lecturer uses it: a date, the month head knocked out, the importance
map, and attention beside rollout and attribution."""
from __future__ import annotations

from harness.browser import error_toasts, press_analyze, sentence_box, wait_for_figures
from tests.e2e.conftest import screenshot
from tests.e2e.test_e2e_browser import open_app


def test_knock_out_the_month_head_and_compare_explanations(page, live):
    open_app(page, live, "?model=dates&text=3+March+1999&tab=interventions", scope="#importance")
    summary = page.locator("#ablate-summary")
    month = page.locator("#ablate-month")
    month.wait_for(state="visible")
    # the view names the measured head in the button's label; the label may be drawn a frame after the button shows
    page.wait_for_function("() => document.querySelector('#ablate-month').innerText.includes('cross L')")
    assert "month head" in month.inner_text()
    month.click()
    page.wait_for_function("() => document.querySelector('#ablate-summary').innerText.includes('month digits')",
                           timeout=60_000)
    text = summary.inner_text()
    assert "cross L" in text and "1999-03-03" in text, text
    # the importance map names the three kinds of attention, and the explanations are three rows
    titles = page.eval_on_selector_all("#importance .annotation-text", "els => els.map(e => e.textContent)")
    assert {"encoder self-attention", "decoder self-attention", "cross-attention"} <= set(titles), titles
    wait_for_figures(page, "#explain")
    rows = page.eval_on_selector_all("#explain .ytick text", "els => els.map(e => e.textContent)")
    assert rows == ["attention (last layer)", "rollout", "|gradient × input|"], rows
    # a date where the month head matters: knocking it out breaks the month
    sentence_box(page).fill("21 November 2026")
    press_analyze(page)
    page.wait_for_function("() => document.querySelector('#ablate-summary').innerText.includes('2026-11-21')",
                           timeout=60_000)
    assert "the month broke" in summary.inner_text(), summary.inner_text()
    assert not error_toasts(page)
    screenshot(page, "interventions-dates", "[role=tabpanel]")
