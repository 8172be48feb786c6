"""Reading the page as a person sees it: drawn Plotly figures, their SVG tick labels, toasts.

Plain functions of a Playwright page, shared by the browser tests and `python -m bench`.
"""
from __future__ import annotations

import html
import json

import numpy as np

from model.registry import assets_dir
from ui.page.context import FIGURE_FONT
from ui.page.messages import clean_text
from viz.heatmap import attention_heatmap

WAIT_MS = 120_000  # generous: CI shares two cores with everything else
PLOT = ".js-plotly-plot"
DETAIL = "#head-detail"  # the one-head heatmap of the core tab
TOAST_TEXT = "[data-testid=toast-text]"

_lm = None


def lm():
    """The shipped causal model, loaded once in the test process, to know which tokens to expect."""
    global _lm
    if _lm is None:
        from model import api

        _lm = api.load("lm", assets_dir())
    return _lm


def expected_labels(text: str, model=None) -> list[str]:
    """The tick labels a reader should see for `text`: the model's tokens, as Plotly draws them
    (the app escapes them for Plotly; the SVG text shows the unescaped characters). Long inputs
    label every k-th token only, as the figure itself does (viz.labels.label_fit)."""
    model = model or lm()
    tokens = model.encode(clean_text(text)).tokens
    # the one-head figure the page draws for these tokens (outside presenter mode), read for its key labels: the
    # labels every k-th where they would not fit are the figure's own rule (viz.labels.label_fit), not a copy of it
    count = len(tokens)
    figure = attention_heatmap(np.full((count, count), 1 / max(count, 1), np.float32), tokens, tokens,
                               font_size=FIGURE_FONT[False])
    return [html.unescape(str(label)) for label in json.loads(figure.to_json())["layout"]["xaxis"]["ticktext"]]


def tick_labels(page, plot_selector: str = DETAIL, axis: str = "x") -> list[str]:
    return page.eval_on_selector_all(f"{plot_selector} .{axis}tick text", "els => els.map(e => e.textContent)")


def wait_for_ticks(page, expected: list[str], plot_selector: str = DETAIL, axis: str = "x",
                   timeout: float = WAIT_MS) -> None:
    """Wait until the figure is (re)drawn with exactly these tick labels, in order."""
    page.wait_for_function(
        """([selector, want]) => {
            const got = [...document.querySelectorAll(selector)].map(e => e.textContent);
            return got.length === want.length && got.every((label, i) => label === want[i]);
        }""",
        arg=[f"{plot_selector} .{axis}tick text", list(expected)],
        timeout=timeout, polling=50)


def drawn_figures(page, scope: str = "body") -> list[dict]:
    """Every Plotly figure under `scope` that is on the page: whether it has an SVG and drawn data."""
    return page.eval_on_selector_all(
        f"{scope} {PLOT}",
        """els => els.map(e => ({
            id: (e.closest('[id]') || {}).id || '',
            svg: !!e.querySelector('svg.main-svg'),
            marks: e.querySelectorAll('.heatmaplayer image, canvas, .scatterlayer path, .barlayer path, '
                                      + '.trace path, .cartesianlayer .point').length,
            visible: e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().height > 0,
        }))""")


def wait_for_figures(page, scope: str, count: int = 1, timeout: float = WAIT_MS) -> list[dict]:
    """Wait until at least `count` visible figures under `scope` have an SVG with data marks drawn."""
    page.wait_for_function(
        """([selector, count]) => {
            const plots = [...document.querySelectorAll(selector)];
            const drawn = plots.filter(p => p.getBoundingClientRect().width > 0
                && p.querySelector('svg.main-svg') && p.querySelectorAll(
                '.heatmaplayer image, canvas, .scatterlayer path, .barlayer path, .trace path').length > 0);
            return drawn.length >= count;
        }""",
        arg=[f"{scope} {PLOT}", count], timeout=timeout, polling=100)
    return drawn_figures(page, scope)


def error_toasts(page) -> list[str]:
    return page.eval_on_selector_all(TOAST_TEXT, "els => els.filter(e => e.className.includes('error'))"
                                                 ".map(e => e.innerText)")


def message_toasts(page) -> list[str]:
    """Every error and warning toast: bad input is one warning (the views keep their last figures)."""
    return page.eval_on_selector_all(TOAST_TEXT, "els => els.filter(e => /error|warning/.test(e.className))"
                                                 ".map(e => e.innerText)")


def close_toasts(page) -> None:
    """Close every toast and wait until none is left on the page. A closed toast fades out for a moment
    while its text is still in the page, so a test reading the next toast could read the old one (CI once
    read the first date example's "writes 2026-11-21" after picking "3 March 1999"). A toast that arrives
    while closing is closed on the next round."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(10):
        page.evaluate("() => document.querySelectorAll('[data-testid=toast-close]').forEach(b => b.click())")
        try:
            page.wait_for_function("() => !document.querySelector('[data-testid=toast-body]')", timeout=3000)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError("toasts kept coming back after being closed")


def press_analyze(page) -> None:
    """Click "Show attention". The click is dispatched on the button itself: a stack of error
    toasts from an earlier input can lie over it (see test_e2e_hostile)."""
    close_toasts(page)
    page.locator("#analyze").dispatch_event("click")


def type_number(page, box, value: str) -> None:
    """Type into a number box as a person does: select what is there, type the digits, press Enter."""
    box.click()
    box.press("Control+a")
    box.press_sequentially(value, delay=80)
    box.press("Enter")


def sentence_box(page):
    return page.locator("#sentence textarea, #sentence input").first


# Gradio marks every output an event is still computing: a status tracker without "hide", a pending block. A
# tracker that shows an event's error (its "error" badge, kept until the next event) is not computing: counted as
# busy, a page whose last answer was an error never settled, and each such test's page waited 30 s at its close.
IDLE_JS = ("() => !document.querySelector('.pending') && ![...document.querySelectorAll("
           "'[data-testid=status-tracker]')].some(e => !/\\bhide\\b/.test(e.className) && !e.querySelector('.error'))")


def stop_training_if_running(page) -> bool:
    """Press Train live's Stop if it is enabled, checked and pressed in one step in the page. A training that
    ends by itself disables Stop: a click on a Stop found enabled a moment before waits for it for good.
    Whether it was pressed."""
    return page.evaluate("() => { const stop = document.querySelector('#toy-stop');"
                         " if (!stop || stop.disabled) return false; stop.click(); return true; }")


def wait_until_idle(page, timeout: float = WAIT_MS) -> None:
    """Wait until no output on the page is still being computed: what the page asked for has arrived.
    A test that acts before its page has settled races the page's own answers (the load's views may
    set a control back after the test moved it), and a page closed while work is in flight leaves that
    work queued on the shared app for the next test."""
    page.wait_for_function(IDLE_JS, timeout=timeout, polling=100)


def wait_until_settled(page, watch: str = "null", quiet_ms: int = 500, timeout: float = WAIT_MS) -> None:
    """Wait until nothing on the page has been computing for quiet_ms, and the JavaScript expression `watch`
    (a scroll position, a figure's box, a count of toasts) has kept one value all that time.

    For a check that something does NOT happen (no second message, no scroll, no later redraw): it returns as
    soon as the page is quiet, where a fixed sleep waited its whole length and still raced a slow machine."""
    page.evaluate("() => { window.__settled = null; }")
    page.wait_for_function(
        f"""(quiet) => {{
            const idle = ({IDLE_JS})();
            const value = JSON.stringify({watch});
            const now = performance.now(), last = window.__settled;
            if (!idle || !last || last.value !== value) {{
                window.__settled = idle ? {{value, since: now}} : null;
                return false;
            }}
            return now - last.since >= quiet;
        }}""", arg=quiet_ms, timeout=timeout, polling=50)


def text_of(page, selector: str) -> str:
    return page.eval_on_selector(selector, "e => e.innerText")


def wait_for_text(page, selector: str, pattern: str, timeout: float = 60_000) -> str:
    """Wait until the element's text matches the regular expression; returns the text that matched (read in the
    same look: a figure redrawn right after may have no text for a moment)."""
    return page.wait_for_function("([sel, pattern]) => { const t = (document.querySelector(sel) || {}).innerText || '';"
                                  " return new RegExp(pattern).test(t) ? t : false; }",
                                  arg=[selector, pattern], timeout=timeout, polling=100).json_value()


def plot_title(page, plot: str) -> str:
    return page.eval_on_selector(f"{plot} .gtitle", "e => e.textContent")


def wait_for_title(page, plot: str, pattern: str, timeout: float = 60_000) -> str:
    """Wait until the figure's title matches; returns the title that matched, read in the same look (a CI run found
    the title gone between a match and a second read: the step's views were redrawing the figure)."""
    return page.wait_for_function("([sel, pattern]) => { const t = (document.querySelector(sel) || {}).textContent || '';"
                                  " return new RegExp(pattern).test(t) ? t : false; }",
                                  arg=[f"{plot} .gtitle", pattern], timeout=timeout, polling=100).json_value()
