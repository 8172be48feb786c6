"""Click-to-drawn in headless Chromium: from clicking the button to the one-head heatmap being
redrawn with the new sentence's tokens as tick labels."""
from __future__ import annotations

import time

from tests.e2e.browser_helpers import (DETAIL, expected_labels, press_analyze, sentence_box, wait_for_figures,
                                       wait_for_ticks)
from tests.live_app import CHROMIUM_ARGS, require_chromium


def click_to_drawn(url: str, sentences: list[str]) -> list[float]:
    """Seconds from click to the redrawn heatmap, for each sentence in turn on one open page."""
    from playwright.sync_api import sync_playwright

    seconds = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=require_chromium(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(180_000)
        page.goto(url)
        wait_for_figures(page, DETAIL)
        time.sleep(2)  # let the page's own first run of every tab settle
        for text in sentences:
            expected = expected_labels(text)
            sentence_box(page).fill(text)
            start = time.perf_counter()
            press_analyze(page)
            wait_for_ticks(page, expected)
            seconds.append(time.perf_counter() - start)
            time.sleep(1)  # the other tabs' listeners finish before the next click
        browser.close()
    return seconds
