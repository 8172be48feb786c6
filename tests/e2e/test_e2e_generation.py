"""The Generation tab in a real browser: Play on lm steps on its own, and the cache grows by the bytes per token
the tab states."""
from __future__ import annotations

import re
from urllib.parse import urlencode

from harness.browser import error_toasts, wait_for_figures, wait_until_idle
from tests.e2e.conftest import screenshot

TEXT = "The cat sat on the mat and looked at the dog"


def shown_step(page) -> tuple[int, int]:
    """(the step shown, the cache's bytes after it) as the step's text says them."""
    text = page.locator("#generation-step").inner_text()
    step = int(re.search(r"Step (\d+) of", text).group(1))
    held = int(re.search(r"= ([\d,]+) bytes", text).group(1).replace(",", ""))
    return step, held


def test_play_steps_and_the_cache_grows_by_the_stated_bytes(page, live):
    page.goto(live.url + "?" + urlencode({"text": TEXT, "model": "lm", "tab": "generation"}))
    page.wait_for_function("() => /Step 1 of/.test((document.querySelector('#generation-step') || {}).innerText)")
    wait_until_idle(page)
    per_token = int(re.search(r"= ([\d,]+) bytes\s+to lm's cache",
                              page.locator("#generation-costs").inner_text()).group(1).replace(",", ""))
    first = shown_step(page)
    assert first[0] == 1
    page.locator("#generation-play").click()
    page.wait_for_function("() => { const m = /Step (\\d+) of/.exec(document.querySelector('#generation-step')"
                           ".innerText); return m && +m[1] >= 3; }")
    later = shown_step(page)
    assert later[0] >= 3
    assert later[1] - first[1] == (later[0] - first[0]) * per_token
    slider = int(page.locator("#generation-step-slider input[type=number]").input_value())
    assert slider >= later[0]  # the slider moves with the steps (it may be one tick ahead of the text read)
    page.locator("#generation-pause").click()
    # once the last streamed step has landed (gr.Plot swaps a figure's element as it redraws, so a count taken
    # mid-stream can read none: a fresh-clone run did), the row and the cache are both drawn
    wait_until_idle(page)
    for scope in ("#generation-row", "#generation-cache"):
        assert all(f["svg"] and f["marks"] for f in wait_for_figures(page, scope)), scope
    assert not error_toasts(page)
    screenshot(page, "generation-lm", "[role=tabpanel]")
