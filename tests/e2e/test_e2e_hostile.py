"""Hostile text typed into the real page: either drawn with the literal text as tick labels or
refused with a clear message; never a script run (the page fixture fails on any dialog or page
error), never HTML injected, and the page keeps working afterwards."""
from __future__ import annotations

from harness.browser import (DETAIL, close_toasts, expected_labels, message_toasts, press_analyze,
                                       sentence_box, tick_labels, wait_for_figures, wait_for_ticks)
from tests.e2e.conftest import screenshot
from tests.hostile_strings import HOSTILE, expects_result
from harness.live_app import assert_clear_message

CANARY = '<img src=x onerror="window.__pwned = 1"><script>window.__pwned = 2</script>'
# Every string here makes the page re-run every tab, so the page gets a sample (the API test takes
# them all). One long string only: the box takes it whole and the server refuses it, saying its 2000-character limit.
PAGE_SAMPLE = ["empty", "whitespace-mix", "nul-inside", "ansi-escape", "zwj-family", "rtl-override", "cjk-chinese",
               "combining-marks", "img-onerror", "script-tag", "attr-breakout", "html-entities", "specials-mixed",
               "template-jinja", "100k-chars"]
NORMAL = "The cat sat on the mat"


CASE_WAIT_MS = 60_000


def submit(page, text: str) -> str:
    """Type text into the sentence box and click the button; returns what the box really holds
    (the browser may drop characters, e.g. past the box's maximum length)."""
    close_toasts(page)
    box = sentence_box(page)
    box.fill(text)
    held = box.input_value()
    press_analyze(page)
    return held


def wait_for_error(page) -> list[str]:
    """Refused input is one message (a warning: the views keep their last figures)."""
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=toast-text]')]"
                           ".some(e => /error|warning/.test(e.className))", timeout=CASE_WAIT_MS)
    return message_toasts(page)


def injected_markup(page) -> dict:
    """Elements that only exist if typed text was rendered as HTML."""
    return page.evaluate("""() => ({
        pwned: window.__pwned || null,
        images: document.querySelectorAll('img[src="x"]').length,
        svgs: [...document.querySelectorAll('svg')].filter(s => s.getAttribute('onload')).length,
        bold: [...document.querySelectorAll('#tokens b, #predictions b, #attention-notice b')].length,
    })""")


def test_hostile_text_in_the_page(page, live):
    page.goto(live.url)
    wait_for_figures(page, DETAIL)
    cases = dict(HOSTILE) | {"canary": CANARY}
    problems = []
    for case in PAGE_SAMPLE + ["canary"]:
        held = submit(page, cases[case])
        try:
            if expects_result(held):
                expected = expected_labels(held)
                wait_for_ticks(page, expected, timeout=CASE_WAIT_MS)
                shown = "".join(tick_labels(page)).replace("▁", " ")
                # the tags' "<" drawn as text (a long input labels every k-th token, so "<img" may be split)
                if "<img" in held and "<" not in shown.replace("<s>", "", 1):
                    problems.append(f"{case}: '<' not shown literally in the labels: {shown[:80]!r}")
            else:
                for message in wait_for_error(page):
                    assert_clear_message(message.strip(), case)
        except AssertionError as e:
            problems.append(str(e).splitlines()[0])
        except Exception as e:  # a timeout: neither drawn nor refused
            problems.append(f"{case}: {type(e).__name__}: {str(e).splitlines()[0]}")
            screenshot(page, f"hostile-{case}")
        markup = injected_markup(page)
        if any(markup.values()):
            problems.append(f"{case}: typed text became page markup: {markup}")
    screenshot(page, "hostile-after-canary")

    submit(page, NORMAL)
    wait_for_ticks(page, expected_labels(NORMAL))
    assert not problems, "\n".join(problems)


def test_a_links_hostile_parameters_are_quoted_literally(page, live):
    """A link's parameters come back in its warnings ("model '…' is not available"). Gradio renders a
    toast's text as HTML, sanitised: before escaping, such a link put an image and bold text in the page
    of whoever opened it."""
    from urllib.parse import urlencode

    model, layer = '<img src=x onerror="window.__pwned = 1">', "<b>2</b>"
    page.goto(live.url + "?" + urlencode({"model": model, "layer": layer, "text": NORMAL}))
    # the link's two warnings (another toast does not count), read while shown: a warning closes itself
    # after a few seconds, which a busy machine can spend drawing the figures
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=toast-text]')]"
                           ".filter(e => /error|warning/.test(e.className)).length >= 2")
    said = " ".join(message_toasts(page))
    toasts = page.eval_on_selector_all("[data-testid=toast-text]", "els => els.map(e => e.innerHTML).join('')")
    wait_for_ticks(page, expected_labels(NORMAL))
    from ui.page.messages import shown

    assert shown(model) in said and layer in said, said  # written out as in the link (a long one cut short)
    assert shown(model).endswith("…") and len(shown(model)) == 40
    assert "is not available" in said and "is not a number" in said
    assert "<img" not in toasts and "<b>" not in toasts, toasts
    assert not any(injected_markup(page).values())
