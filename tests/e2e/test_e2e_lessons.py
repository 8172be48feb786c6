"""Lessons in the browser: every shipped lesson walked with the keyboard alone in presenter mode on a 1280 × 720
projector, each step's text, question and Back/Next on the first screen beside its figure (the one it names), that
figure whole, and no claim flagged; every step on a 390 × 844 phone with its text right under the header, before the
figures; a lesson's link opens its step and the link box follows the player; quiz mode asks before it answers and
keeps the After: paragraph for Reveal; the handout leaves the player and the tab where they are."""
from __future__ import annotations

from pathlib import Path

import pytest

from analysis import lessons as fmt
from harness.browser import WAIT_MS, wait_until_idle, wait_until_settled
from tests.e2e.conftest import screenshot
from tests.e2e.test_e2e_lecture_hall import SCREEN, TABS
from ui.lessons import figures
from ui.lessons.library import SHIPPED, lesson_files
from ui.page.links import setting_names  # every tab's linked settings, and the view's own


def shipped() -> list[fmt.Lesson]:
    return [fmt.parse_lesson(p.read_text(encoding="utf-8"), p.name, setting_names()) for p in lesson_files(SHIPPED)]


@pytest.fixture
def projector(browser):
    context = browser.new_context(viewport=SCREEN)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    errors = page.script_errors = []
    page.on("pageerror", lambda e: errors.append(f"{e}: {getattr(e, 'stack', '')}"[:1500]))
    yield page
    context.close()
    assert not errors, errors


def focused_in(page, selector: str) -> bool:
    return page.evaluate("(s) => !!document.activeElement && !!document.activeElement.closest(s)", selector)


def tab_to(page, selector: str, backwards: bool = False, most: int = 80) -> None:
    """Press Tab (or Shift+Tab) until the focus is inside `selector`: the keyboard's way there."""
    for _ in range(most):
        if focused_in(page, selector):
            return
        if focused_in(page, "[role=combobox]"):  # Gradio 6.31 keeps a picker's list open when Tab leaves it
            page.keyboard.press("Escape")
        page.keyboard.press("Shift+Tab" if backwards else "Tab")
    at = page.evaluate("() => document.activeElement && document.activeElement.outerHTML.slice(0, 200)")
    raise AssertionError(f"{selector} is not reachable with the Tab key (the focus is on {at})")


def pick_lesson_by_keyboard(page, lesson: fmt.Lesson, first: bool) -> None:
    """From the top of the page (the first lesson), or back from the player's buttons, to the picker; type the
    title, pick it, and once its first step is open, on to Next (the picker keeps its own arrow keys)."""
    tab_to(page, "#lesson", backwards=not first)
    page.keyboard.press("Control+A")
    page.keyboard.type(lesson.title)
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    settled(page, f"step 1 of {len(lesson.steps)}", lesson.steps[0].title)
    tab_to(page, "#lesson-next")


def settled(page, position: str, title: str = "") -> None:
    """Wait until the player shows this step (its position and title) and every view has arrived."""
    page.wait_for_function("([p, t]) => (document.querySelector('#lesson-position') || {}).innerText?.trim() === p"
                           " && document.querySelector('#lesson-text').innerText.includes(t)", arg=[position, title])
    # every view in, and Plotly's last relayout (its drawn size) after the answer: the shown figures' boxes keep still
    wait_until_settled(page, "[...document.querySelectorAll('[role=tabpanel] .js-plotly-plot')]"
                             ".filter(e => e.offsetParent).map(e => { const r = e.getBoundingClientRect();"
                             " return [r.top, r.bottom, r.width]; })")


PHONE = {"width": 390, "height": 844}


def main_figure_box(page, tab: str, named: str = "") -> dict:
    """The box of the figure the step names (`figure: ...`), else of the tab's main figure."""
    selector = figures.selector(tab, named) or TABS[tab].figure
    page.wait_for_function("(s) => [...document.querySelectorAll(s)].some(e => e.offsetParent && "
                           "(e.matches('.js-plotly-plot') ? e : e.querySelector('.js-plotly-plot')))", arg=selector)
    return page.evaluate("""(s) => {
        const shown = [...document.querySelectorAll(s)].filter(e => e.offsetParent)[0];
        const plot = shown.matches('.js-plotly-plot') ? shown : shown.querySelector('.js-plotly-plot');
        const r = plot.getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, scrolled: window.scrollY};
    }""", selector)


def test_every_shipped_lesson_walked_with_the_keyboard_in_presenter_mode(projector, live):
    page = projector
    page.goto(f"{live.url}?presenter=1")
    page.wait_for_function("() => document.body.classList.contains('presenter')")
    wait_until_idle(page)
    for n, lesson in enumerate(shipped()):
        pick_lesson_by_keyboard(page, lesson, first=n == 0)
        for number, step in enumerate(lesson.steps, 1):
            if number > 1:
                page.keyboard.press("ArrowRight")
            settled(page, f"step {number} of {len(lesson.steps)}", step.title)
            tab = step.settings.get("tab", "attention")
            selected = page.evaluate("() => document.querySelector('[role=tab][aria-selected=true]').innerText")
            box = main_figure_box(page, tab, step.settings.get("figure", ""))
            name = f"lesson-{lesson.id}-{number}"
            screenshot(page, name)
            text = page.evaluate(TEXT_BOXES)
            for what in ("text", "question", "back", "next"):
                if text[what]:
                    assert 0 <= text[what]["top"] and text[what]["bottom"] <= SCREEN["height"], f"{name}: {what} {text}"
            # beside the figure (or above it), never over it
            assert text["text"]["left"] >= box["right"] or text["text"]["bottom"] <= box["top"], f"{name}: {text} {box}"
            assert step.title in page.inner_text("#lesson-text"), name
            assert not page.script_errors, f"{name}: {page.script_errors}"
            assert not page.locator("#lesson-warning").is_visible(), f"{name}: {page.inner_text('#lesson-warning')}"
            assert box["scrolled"] == 0, f"{name} ({selected}): the page scrolled by {box['scrolled']} px"
            assert 0 <= box["top"] and box["bottom"] <= SCREEN["height"], f"{name} ({selected}): {box}"
        page.keyboard.press("ArrowLeft")  # and back
        if len(lesson.steps) > 1:
            settled(page, f"step {len(lesson.steps) - 1} of {len(lesson.steps)}", lesson.steps[-2].title)


# where the step's text, its question (the "Question:" it starts with) and Back/Next are drawn; the panel scrolls on
# its own, so a question below its fold counts as below the screen
TEXT_BOXES = """() => {
    const box = (e) => { if (!e) return null; const r = e.getBoundingClientRect();
                         return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
    const panel = document.querySelector('#lesson-panel').getBoundingClientRect();
    const asked = [...document.querySelectorAll('#lesson-text strong')].find((e) => e.innerText.startsWith('Question'));
    const question = box(asked);
    if (question && question.top > panel.bottom) question.bottom = question.top = Infinity;
    return {text: box(document.querySelector('#lesson-text')), question, back: box(document.querySelector('#lesson-back')),
            next: box(document.querySelector('#lesson-next'))};
}"""


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    yield page
    context.close()


def test_every_shipped_step_on_a_phone_starts_with_its_text_under_the_header(phone, live):
    """Each lesson opened by its link, its later steps by Next on the same page (a page load is seconds of Chromium's
    CPU; a step opened by its own link is test_a_lessons_link_opens_its_step_and_the_link_box_follows)."""
    for lesson in shipped():
        for number, step in enumerate(lesson.steps, 1):
            if number == 1:
                phone.goto(f"{live.url}?lesson={lesson.id}&step=1")
            else:
                phone.locator("#lesson-next").click()
            settled(phone, f"step {number} of {len(lesson.steps)}", step.title)
            name = f"phone-lesson-{lesson.id}-{number}"
            screenshot(phone, name)
            found = phone.evaluate("""() => {
                const text = document.querySelector('#lesson-text').getBoundingClientRect();
                const plots = [...document.querySelectorAll('[role=tabpanel] .js-plotly-plot')].filter((e) => e.offsetParent)
                    .map((e) => e.getBoundingClientRect().top);
                const tabs = document.querySelector('.tab-wrapper, [role=tablist]').getBoundingClientRect();
                return {top: text.top + scrollY, tabs: tabs.top + scrollY, plots: plots.map((t) => t + scrollY)};
            }""")
            assert found["top"] < PHONE["height"], f"{name}: the text starts at {found['top']} px"
            assert found["top"] < found["tabs"] and all(found["top"] < t for t in found["plots"]), f"{name}: {found}"


def test_a_lessons_link_opens_its_step_and_the_link_box_follows(page, live):
    page.goto(f"{live.url}?lesson=causal-mask&step=2")
    settled(page, "step 2 of 2")
    assert page.input_value("#model input") == "mlm"
    assert page.evaluate("() => document.querySelector('[role=tab][aria-selected=true]').innerText").strip() \
        == "Every head"
    page.wait_for_function("() => document.querySelector('#view-link textarea, #view-link input').value"
                           ".includes('lesson=causal-mask&step=2')")
    page.click("#lesson-back")
    settled(page, "step 1 of 2")
    page.wait_for_function("() => document.querySelector('#view-link textarea, #view-link input').value"
                           ".includes('lesson=causal-mask&step=1')")
    assert page.evaluate("() => location.search").find("step=1") >= 0
    assert page.evaluate("() => document.querySelector('[role=tab][aria-selected=true]').innerText").strip() \
        == "Masking"


def test_quiz_mode_asks_the_question_before_its_answer(page, live):
    page.goto(f"{live.url}?lesson=what-attention-computes&step=1&quiz=1")
    settled(page, "step 1 of 4")
    text = page.inner_text("#lesson-text")
    assert "Where does" in text and "Answer" not in text and "Every row does the same" not in text  # After: kept
    wait_until_idle(page)
    page.click("#lesson-reveal")
    shown = ("[document.querySelector('#lesson-text').innerText.includes('Answer'),"
             " document.querySelector('#lesson-text').innerText.includes('Every row does the same'),"
             " !!(document.querySelector('#lesson-reveal') || {}).offsetParent]")
    # Gradio draws the text and hides the button in separate frames: wait for both, then for the page to keep still,
    # so that a late answer (the quiz switch's own event) that asked again would be seen
    page.wait_for_function(f"() => {{ const [answer, after, button] = {shown}; return answer && after && !button; }}")
    wait_until_settled(page, shown)
    assert page.evaluate(f"() => {shown}") == [True, True, False]


def test_a_lesson_downloads_as_one_html_page_with_its_text_and_figures_as_svg(page, live):
    page.goto(f"{live.url}?lesson=causal-mask&step=2")
    settled(page, "step 2 of 2", "Without a mask")
    with page.expect_download(timeout=WAIT_MS) as download:
        page.click("#lesson-handout")
    handout = Path(download.value.path()).read_text(encoding="utf-8")
    # made in frames of its own: the player and the tab the class sees stay where they were
    assert page.inner_text("#lesson-position").strip() == "step 2 of 2"
    assert page.evaluate("() => document.querySelector('[role=tab][aria-selected=true]').innerText").strip() \
        == "Every head"
    assert download.value.suggested_filename == "the-causal-mask.html"
    assert "<title>The causal mask</title>" in handout
    first, second = handout.split("<section>")[1:]
    assert "The mask" in first and "step 1 of 2" in first and "<svg" in first
    assert "Without a mask" in second and "step 2 of 2" in second and "<svg" in second
    assert "Open this view:" in first and "tab=masking" in first and "model=mlm" in second  # each step's link
    # self-contained: nothing to fetch, nothing to run (the SVGs name their XML namespaces, which is no fetch)
    assert "<script" not in handout and "<link" not in handout and 'src="http' not in handout
