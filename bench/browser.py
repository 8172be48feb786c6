"""Click-to-drawn in headless Chromium: from clicking the button to the one-head heatmap being
redrawn with the new sentence's tokens as tick labels."""
from __future__ import annotations

import time

from bench.load import cpu_seconds
from harness.browser import (DETAIL, expected_labels, press_analyze, sentence_box, wait_for_figures,
                                       wait_for_ticks)
from harness.live_app import CHROMIUM_ARGS, require_chromium


IDLE_S = 2  # seconds of the idle server measured before each click or visit


def idle_rate(pid: int) -> float:
    """CPU seconds per second the server uses while nothing happens (Gradio's queue polls every millisecond;
    its cost drifts between 25 and 45 ms a second on this VM, hence a fresh reading before each measurement)."""
    before = cpu_seconds(pid)
    time.sleep(IDLE_S)
    return (cpu_seconds(pid) - before) / IDLE_S


def click_to_drawn(url: str, sentences: list[str], server_pid: int | None = None) -> tuple[list[float], list[float]]:
    """Seconds from click to the redrawn heatmap, for each sentence in turn on one open page; and with
    server_pid, the server's CPU milliseconds per click: from the click until a second after the heatmap
    was drawn (the open tab's other views finish meanwhile), less what the idle server uses in as long
    (idle_rate, read just before the click)."""
    from playwright.sync_api import sync_playwright

    seconds, cpu_ms = [], []
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
            time.sleep(0.3)  # typing's own events done
            idle_per_s = idle_rate(server_pid) if server_pid else 0.0
            cpu_before = cpu_seconds(server_pid) if server_pid else 0.0
            start = time.perf_counter()
            press_analyze(page)
            wait_for_ticks(page, expected)
            seconds.append(time.perf_counter() - start)
            time.sleep(1)  # the open tab's other views finish before the next click
            if server_pid:
                cpu_ms.append(1000 * (cpu_seconds(server_pid) - cpu_before - idle_per_s * (time.perf_counter() - start)))
        browser.close()
    return seconds, cpu_ms


def page_loads(url: str, n: int, server_pid: int) -> tuple[list[float], list[float]]:
    """A new visitor n times over (a fresh browser context each: nothing cached): seconds from opening the
    link to the one-head heatmap drawn, and the server's CPU milliseconds for the visit (until 3 s after the
    heatmap, less what the idle server uses in as long, read just before the visit). The first visit is the one that compresses the
    page's script files (ui/runtime/assets.py): the report gives it apart."""
    from playwright.sync_api import sync_playwright

    seconds, cpu_ms = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=require_chromium(), args=CHROMIUM_ARGS)
        time.sleep(3)  # what came before (another browser closing its page) is over
        for _ in range(n):
            idle_per_s = idle_rate(server_pid)
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(180_000)
            cpu_before, start = cpu_seconds(server_pid), time.perf_counter()
            page.goto(url)
            wait_for_figures(page, DETAIL)
            seconds.append(time.perf_counter() - start)
            time.sleep(3)  # the page's own first run of its views
            cpu_ms.append(1000 * (cpu_seconds(server_pid) - cpu_before - idle_per_s * (time.perf_counter() - start)))
            context.close()
        browser.close()
    return seconds, cpu_ms


# Every Plotly.react the page makes is timed: the tab is drawn when its last figure is.
REACT_HOOK = """() => {
    if (window.__reacts) return;
    window.__reacts = [];
    const plotly = window.Plotly, react = plotly.react;
    plotly.react = function (...args) {
        const result = react.apply(this, args);
        Promise.resolve(result).then(() => window.__reacts.push(performance.now()));
        return result;
    };
}"""
QUIET_S = 1.5  # no figure redrawn for this long: the tab is done


def tab_redrawn(url: str, cases: list[tuple[str, str, list[str]]]) -> dict[str, list[float]]:
    """Seconds from clicking "Show attention" to the last figure of the open tab redrawn.

    cases: (tab id, model name, sentences); the page opens on that tab and model through a deep
    link, then each sentence is typed and submitted in turn."""
    from urllib.parse import urlencode

    from playwright.sync_api import sync_playwright

    results = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=require_chromium(), args=CHROMIUM_ARGS)
        for tab, model, sentences in cases:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(180_000)
            page.goto(url + "?" + urlencode(dict(tab=tab, model=model)))
            wait_for_figures(page, "[role=tabpanel]")
            time.sleep(3)  # the first draw settles
            page.evaluate(REACT_HOOK)
            seconds = []
            for text in sentences:
                sentence_box(page).fill(text)
                start = page.evaluate("() => { window.__reacts.length = 0; return performance.now(); }")
                press_analyze(page)
                deadline = time.monotonic() + 120
                while True:
                    time.sleep(0.25)
                    reacts, now = page.evaluate("() => [window.__reacts.slice(), performance.now()]")
                    if reacts and now - reacts[-1] > QUIET_S * 1000:
                        break
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"tab {tab}: no figure redrawn within 120 s of the click")
                seconds.append((reacts[-1] - start) / 1000)
            results[tab] = seconds
            page.close()
        browser.close()
    return results
