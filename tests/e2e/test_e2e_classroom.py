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


def test_a_students_page_shows_the_new_step_and_takes_an_answer_before_its_own_view_has_followed(projector, phone,
                                                                                                  live):
    """The page's script shows the lecturer's new step at once (/class/step) and answers from it (/class/answer):
    here the page's own round trip (class_step) is held back until the answer is in, then let through, and the
    page's view follows, showing the answer it gave."""
    projector.goto(live.url + f"?lesson={LESSON}&step=1&presenter=1", wait_until="load")
    projector.wait_for_selector("#class-start", state="visible")
    wait_for_text(projector, "#lesson-position", "step 1 of")
    projector.click("#class-start")
    projector.wait_for_selector("#class-qr img")
    code = re.search(r"code\s+([A-Z0-9]{6})", text_of(projector, "#class-join-text")).group(1)
    phone.goto(live.url + f"?class={code}", wait_until="load")
    phone.wait_for_selector(f"#class-status [data-class-code='{code}']")
    wait_for_text(phone, "#lesson-position", "step 1 of")
    step_fn = phone.evaluate("() => window.gradio_config.dependencies.find((d) => d.api_name === 'class_step').id")
    held = []

    def hold(route):
        if (route.request.post_data_json or {}).get("fn_index") == step_fn:
            held.append(route)  # answered below, once the page has answered from what its script showed
        else:
            route.continue_()

    phone.route(re.compile(r"/gradio_api/run/predict"), hold)
    projector.click("#lesson-next")  # the lecturer's move
    phone.wait_for_selector("#class-now-box .class-now-choices button")
    shown = text_of(phone, "#class-now-box")
    assert "step 2 of" in shown and "Which token" in shown, shown
    assert "step 1 of" in phone.locator("#lesson-position").text_content()  # the page's own view: not yet
    buttons = phone.locator("#class-now-box .class-now-choices button")
    labels = buttons.all_text_contents()
    assert labels[0] == '"<s>"' and phone.locator("#class-now-box s").count() == 0  # written as text
    assert buttons.nth(0).bounding_box()["height"] >= 44
    screenshot(phone, "classroom-phone-shown-at-once")
    buttons.nth(2).tap()
    wait_for_text(phone, "#class-now-box .class-now-answered", "Your answer")
    projector.click("#class-join .label-wrap")
    wait_for_text(projector, "#class-count", r"1 of 1\b")  # counted before the page's view followed
    assert held, "the page sent no class_step to hold back"
    for route in held:
        route.continue_()
    phone.unroute(re.compile(r"/gradio_api/run/predict"))
    wait_for_text(phone, "#lesson-position", "step 2 of")  # the page's own view follows
    phone.wait_for_selector("#class-now-box", state="hidden")
    wait_for_text(phone, "#class-answered", "Your answer")
    assert phone.locator("#class-choices input:checked").get_attribute("value") == labels[2]
    screenshot(phone, "classroom-phone-followed")
