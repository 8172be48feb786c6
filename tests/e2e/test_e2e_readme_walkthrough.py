"""The README's five-minute walkthrough, its first item followed in a browser with the mouse, as a newcomer reads it
(issue 53): tick Presenter mode, pick the lesson by the title the README gives, see the tab, layer and head it
names, and Next ▶ opens Step by step on the same head. The names clicked and checked are read from the README, so a
README that drifts from the page fails here."""
from __future__ import annotations

import re
from pathlib import Path

from harness.browser import DETAIL, wait_for_figures, wait_for_title, wait_until_idle
from tests.e2e.conftest import screenshot

README = Path(__file__).resolve().parents[2] / "README.md"


def first_item() -> str:
    """The walkthrough's first numbered item ("1. **A lesson in presenter mode.** ..."), its lines joined."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Five minutes before the lecture", 1)[1]
    item = re.search(r"^1\. (.*?)(?=^2\. )", section, re.S | re.M)
    assert item, "the README's walkthrough has no first item"
    return " ".join(item.group(1).split())


def test_the_readmes_first_walkthrough_item_reaches_a_lesson_in_presenter_mode(page, live):
    item = first_item()
    checkbox, lesson, forward = (re.search(pattern, item).group(1) for pattern in (
        r"Tick \*\*(.+?)\*\* in the header", r"pick \*\*(.+?)\*\*", r"\*\*(Next ▶)\*\*"))
    tab, layer, head = re.search(r"opens the (.+?) tab on `lm`, layer (\d+), head (\d+)", item).groups()
    next_tab = re.search(r"step 2 opens (.+?) on the same head", item).group(1)

    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live.url)
    wait_for_figures(page, DETAIL)
    page.get_by_label(checkbox, exact=True).check()
    page.wait_for_function("() => document.body.classList.contains('presenter')")
    page.locator("#lesson input").first.click()
    page.get_by_role("option", name=lesson, exact=True).first.click()
    page.wait_for_function("() => /step 1 of \\d+/.test((document.querySelector('#lesson-position') || {}).innerText)")
    wait_for_title(page, DETAIL, rf"^Layer {layer}, head {head}\b")
    wait_until_idle(page)
    selected = "() => document.querySelector('[role=tab][aria-selected=true]').innerText.trim()"
    assert page.evaluate(selected) == tab
    assert page.locator("#lesson-text").is_visible() and page.inner_text("#lesson-text").strip()
    screenshot(page, "readme-walkthrough-step-1")

    page.get_by_role("button", name=forward).click()
    page.wait_for_function("() => /step 2 of \\d+/.test((document.querySelector('#lesson-position') || {}).innerText)")
    page.wait_for_function("(want) => document.querySelector('[role=tab][aria-selected=true]').innerText.trim() === want",
                           arg=next_tab)
    wait_until_idle(page)
    shown = [page.locator(f"#{name} input[type=number]").input_value() for name in ("layer", "head")]
    assert shown == [layer, head], f"step 2 is on layer {shown[0]}, head {shown[1]}, not the same head"
    screenshot(page, "readme-walkthrough-step-2")
