"""The lecture examples in a real browser: each shows what it claims, measured on the shipped weights; and the model
picker, closed without a pick or picked with the mouse (split from test_e2e_lecture.py)."""
from __future__ import annotations

import html
import re

import pytest

from harness.browser import (DETAIL, close_toasts, error_toasts, expected_labels, message_toasts, press_analyze,
                             sentence_box, type_number, wait_for_figures, wait_for_text, wait_for_ticks,
                             wait_for_title, wait_until_idle)
from tests.e2e.conftest import screenshot
from viz.labels import markdown_label


@pytest.fixture(scope="module")
def shipped(shipped_registry):
    return shipped_registry


def click_example(page, text: str, model: str) -> None:
    """Choose the example in the lecture-examples picker (its options read "model · sentence")."""
    close_toasts(page)
    page.locator("#examples input").first.click()
    page.get_by_role("option", name=f"{model} · {text}", exact=True).first.click()


def info_toast(page, pattern: str) -> str:
    page.wait_for_function("(pattern) => [...document.querySelectorAll('[data-testid=toast-text]')]"
                           ".some(e => new RegExp(pattern).test(e.innerText))", arg=pattern, timeout=60_000)
    return next(m for m in page.eval_on_selector_all("[data-testid=toast-text]", "els => els.map(e => e.innerText)")
                if re.search(pattern, m))


def test_examples_show_what_they_claim(page, live, shipped):
    from analysis import head_stats as stats
    from ui.page import lecture_examples

    page.goto(live.url + "?text=Hello+there")  # not an example: every pick below changes the view
    wait_for_figures(page, DETAIL)
    best = shipped.history("lm").head("previous_token_head")
    for text in [t for t, m in lecture_examples.EXAMPLES if m == "lm"]:
        click_example(page, text, "lm")
        message = info_toast(page, "previous-token head")
        att = shipped.attention("lm", text)
        frame = stats.head_stats(att.probs, att.mask).set_index("head")
        share = frame.loc[f"L{best.layer + 1} H{best.head + 1}", "previous"]
        assert f"layer {best.layer + 1}, head {best.head + 1}" in message and f"puts {share:.2f}" in message
        assert share >= 0.5, f"{text!r}: the head shown puts only {share:.2f} on the previous token"
        wait_for_ticks(page, expected_labels(text))
        title = page.eval_on_selector(f"{DETAIL} .gtitle", "e => e.textContent")
        assert f"Layer {best.layer + 1}, head {best.head + 1}" in title
        # the predictions are the last view to redraw: wait for this sentence's (measured here), so the
        # next pick is not made while this one is still drawing
        token, p = shipped.get("lm").next_tokens(text, 1)[0]
        predicted = wait_for_text(page, "#predictions", rf"{re.escape(html.unescape(markdown_label(token)))}\s+"
                                                        rf"{re.escape(f'{p:.1%}')}")
        assert "Greedy continuation" in predicted and "∅" not in predicted
        assert text not in predicted.split("Greedy continuation")[1], "the continuation only, not the input again"
        # every view is drawn: the dropdown's second event (ui/runtime/repeats.py) has come and said nothing
        said = page.eval_on_selector_all("[data-testid=toast-text]", "els => els.map(e => e.innerText)")
        assert said == [message], f"the pick's message once, and nothing else: {said}"
    for text, answer in lecture_examples.FILLS.items():
        click_example(page, text, "mlm")
        assert f"“{answer}”" in info_toast(page, "fills the blank")
        table = wait_for_text(page, "#predictions", rf"▁?{answer}\s+\d+\.\d%")
        first_row = re.search(r"([^\s▁]+)\s+\d+\.\d%", table)  # the first token row, best first
        assert first_row and first_row.group(1) == answer, table
    for text, iso in lecture_examples.DATES.items():
        click_example(page, text, "dates")
        assert iso in info_toast(page, "writes")
        assert iso in wait_for_text(page, "#predictions", re.escape(iso))
    assert not error_toasts(page)
    screenshot(page, "examples-claims")


def pick_model(page, name: str) -> None:
    """Choose a model with the mouse, as most people do (the path on which Gradio sends two events)."""
    page.locator("#model input").first.click()
    page.get_by_role("option", name=name, exact=True).first.click()


def test_closing_a_picker_without_a_pick_changes_nothing(page, live, shipped):
    """Gradio's dropdown sends `input` each time it loses the focus. The examples picker kept the last
    example as its value, so opening and closing it put that example back over what a student had typed
    since, and said its message again."""
    page.goto(live.url + "?text=Hello+there")
    wait_for_figures(page, DETAIL)
    click_example(page, "the United <mask> of America", "mlm")
    info_toast(page, "fills the blank")
    page.wait_for_function("() => document.querySelector('#sentence textarea, #sentence input').value"
                           ".includes('United')")
    wait_until_idle(page)  # both events of the pick answered (ui/runtime/repeats.py)
    typed = "The cat sat on the <mask>."
    close_toasts(page)
    sentence_box(page).fill(typed)
    press_analyze(page)
    wait_for_ticks(page, expected_labels(typed, shipped.get("mlm")))
    page.locator("#examples input").first.click()  # open the picker ...
    page.wait_for_selector("[role=option]")
    page.locator("h1, #intro").first.click()  # ... and close it by clicking elsewhere
    wait_until_idle(page)  # the event the closing sent has been answered
    assert sentence_box(page).input_value() == typed
    assert page.eval_on_selector_all("[data-testid=toast-text]", "els => els.length") == 0
    click_example(page, "the United <mask> of America", "mlm")  # the same example again is a pick
    page.wait_for_function("() => document.querySelector('#sentence textarea, #sentence input').value"
                           ".includes('United')")


def test_choosing_a_smaller_model_with_the_mouse_fits_the_sliders_without_an_error(page, live, shipped):
    """The model picker's second event carried the old layer; Gradio checked it against the range the
    first had just shrunk: "Error: Value 6 is greater than maximum value 2" on choosing lm after minilm."""
    page.goto(live.url + "?text=The+cat+sat+on+the+mat")
    wait_for_figures(page, DETAIL)
    pick_model(page, "minilm")
    layer = page.locator("#layer input[type=number]").first
    page.wait_for_function("() => document.querySelector('#layer input[type=number]').max === '6'")
    type_number(page, layer, "6")
    wait_for_title(page, DETAIL, "Layer 6")
    close_toasts(page)
    pick_model(page, "lm")
    layers = shipped.get("lm").config.n_layers
    page.wait_for_function("(n) => document.querySelector('#layer input[type=number]').max === String(n)", arg=layers)
    wait_for_title(page, DETAIL, f"Layer {layers}")
    wait_until_idle(page)  # the second event's answer has come
    assert error_toasts(page) == [] and message_toasts(page) == []
    assert layer.input_value() == str(layers)
