"""A class in the room, in two browsers: the lecturer's projector (1280 x 720, presenter mode) starts a class on a
lesson, a student's phone (390 x 844) opens its link, follows the lecturer's step, answers the step's question with
a tap, the projector's count goes to 1, and Reveal shows the class's answers on both."""
from __future__ import annotations

import re

import pytest

from harness.browser import WAIT_MS
from tests.e2e.conftest import screenshot

LESSON = "causal-mask"  # step 1 asks nothing; step 2 asks a token question


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.page_errors = []
    page.on("pageerror", lambda error: page.page_errors.append(str(error)))
    yield page
    context.close()
    assert not page.page_errors, page.page_errors[:3]


@pytest.fixture
def projector(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.page_errors = []
    page.on("pageerror", lambda error: page.page_errors.append(str(error)))
    yield page
    context.close()
    assert not page.page_errors, page.page_errors[:3]


def text_of(page, selector: str) -> str:
    return page.locator(selector).inner_text()


def wait_for_text(page, selector: str, pattern: str) -> None:
    page.wait_for_function("([s, p]) => { const e = document.querySelector(s); return !!e && new RegExp(p)"
                           ".test(e.innerText); }", arg=[selector, pattern], polling=100)


def test_a_student_follows_the_lecturer_answers_and_both_see_the_class_after_reveal(projector, phone, live):
    projector.goto(live.url + f"?lesson={LESSON}&step=1&presenter=1", wait_until="load")
    projector.wait_for_selector("#class-start", state="visible")
    wait_for_text(projector, "#lesson-position", "step 1 of")
    projector.click("#class-start")
    projector.wait_for_selector("#class-qr img")
    join = text_of(projector, "#class-join-text")
    code = re.search(r"code\s+([A-Z0-9]{6})", join).group(1)
    link = re.search(r"(https?://\S+\?class=" + code + ")", join).group(1)
    assert "127.0.0.1" not in link  # a phone cannot reach the projector's own machine by that name
    box = projector.locator("#class-qr img").bounding_box()
    assert box["width"] >= 300 and box["height"] >= 300, f"the QR code is {box}: too small for the back of a hall"
    screenshot(projector, "classroom-projector-join")

    phone.goto(live.url + f"?class={code}", wait_until="load")  # the link, on this server
    phone.wait_for_selector(f"#class-status [data-class-code='{code}']")
    wait_for_text(phone, "#lesson-position", "step 1 of")
    assert not phone.locator("#class-choices").is_visible()  # step 1 asks the class nothing

    projector.click("#lesson-next")  # the lecturer's move
    wait_for_text(phone, "#lesson-position", "step 2 of")  # the phone follows on its own
    phone.wait_for_selector("#class-choices label")
    question = text_of(phone, "#class-question")
    assert "Which token" in question
    labels = phone.locator("#class-choices label")
    assert labels.count() >= 5
    first = labels.nth(0).bounding_box()
    assert first["height"] >= 44, f"a choice is {first['height']} px tall: under a thumb's 44 px"
    assert not phone.locator("#class-student-chart").is_visible()  # the class's answers only after Reveal
    screenshot(phone, "classroom-phone-question")

    labels.nth(1).tap()
    wait_for_text(phone, "#class-answered", "Your answer")
    labels.nth(2).tap()  # a change of mind: the last answer counts, once
    wait_for_text(phone, "#class-answered", "1 answered")
    projector.click("#class-join .label-wrap")  # the lecturer folds the code away
    wait_for_text(projector, "#class-count", r"1 of 1\b")  # the projector's count, live

    projector.click("#class-reveal")
    projector.wait_for_selector("#class-chart .js-plotly-plot .bars path", state="attached")
    phone.wait_for_selector("#class-student-chart .js-plotly-plot .bars path", state="attached")
    assert "model's answer" in text_of(projector, "#class-after")
    bars = phone.eval_on_selector_all("#class-student-chart .bars .point text",
                                      "els => els.map(e => e.textContent)")
    assert sum(int(t.split(" ")[0]) for t in bars if t[0].isdigit()) == 1, bars
    screenshot(projector, "classroom-projector-reveal")
    screenshot(phone, "classroom-phone-reveal")
