"""The app in a real browser: type a sentence, see the heatmaps with the tokens as tick labels,
presenter mode, and a deep link that reopens a view. Every tab is walked in test_e2e_accessibility.py."""
from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from harness.browser import (DETAIL, error_toasts, expected_labels, message_toasts, press_analyze,
                                       sentence_box, tick_labels, wait_for_figures, wait_for_ticks,
                                       wait_until_idle)
from tests.e2e.conftest import screenshot

SENTENCE = "Mary gave roses to Susan because she loves her"


# Records, from the page's first moment, the tick labels of every one-head figure drawn and every address the page
# writes into the address bar (ui/page/page_link.py keeps the view there)
RECORD_VIEWS_JS = """
window.__heads_drawn = []; window.__addresses = [];
const replace = history.replaceState.bind(history);
history.replaceState = (state, title, url) => { window.__addresses.push(String(url)); return replace(state, title, url); };
new MutationObserver(() => {
    const ticks = [...document.querySelectorAll('#head-detail .xtick text')].map(e => e.textContent).join(' ');
    if (ticks && ticks !== window.__heads_drawn[window.__heads_drawn.length - 1]) window.__heads_drawn.push(ticks);
}).observe(document, {childList: true, subtree: true, characterData: true});
"""


def open_app(page, live, query: str = "", scope: str = DETAIL):
    page.goto(live.url + query)
    wait_for_figures(page, scope)


def tab_names(page) -> list[str]:
    return page.eval_on_selector_all("button[role=tab]", "els => els.map(e => e.textContent.trim())")


def selected_tab(page) -> str:
    return page.eval_on_selector("button[role=tab][aria-selected=true]", "e => e.textContent.trim()")


def test_sentence_draws_heatmaps_with_token_labels(page, live):
    open_app(page, live)
    sentence_box(page).fill(SENTENCE)
    press_analyze(page)
    expected = expected_labels(SENTENCE)
    wait_for_ticks(page, expected)
    assert tick_labels(page, axis="y") == expected, "rows (queries) should be the same tokens"
    for scope in ("#all-heads", "#layer-average"):
        figures = wait_for_figures(page, scope)
        assert all(f["svg"] and f["marks"] for f in figures), f"{scope} not drawn: {figures}"
    assert not error_toasts(page)
    screenshot(page, "core-tab", "[role=tabpanel]")


def figure_font_px(page) -> float:
    sizes = page.eval_on_selector_all(f"{DETAIL} .xtick text", "els => els.map(e => parseFloat(e.style.fontSize))")
    assert sizes, "no tick labels drawn"
    return max(sizes)


def test_presenter_mode_enlarges_text(page, live):
    open_app(page, live)
    normal = figure_font_px(page)
    page.locator("#presenter input[type=checkbox]").check()
    page.wait_for_function("() => document.body.classList.contains('presenter')")
    page.wait_for_function(
        """([selector, before]) => [...document.querySelectorAll(selector)]
               .some(e => parseFloat(e.style.fontSize) > before)""",
        arg=[f"{DETAIL} .xtick text", normal])
    assert figure_font_px(page) >= normal * 1.4, "presenter mode should make figure text clearly larger"
    link = page.locator("#view-link textarea, #view-link input").first
    page.wait_for_function("() => /presenter=1/.test((document.querySelector('#view-link textarea, "
                           "#view-link input') || {}).value || '')")
    assert "presenter=1" in link.input_value()
    screenshot(page, "presenter-mode")


@pytest.mark.parametrize("view", [
    dict(text="Mary gave <mask> to Susan", model="mlm", layer="2", head="3", tab="multihead", presenter="1"),
    dict(text="The cat sat on the mat", model="lm", layer="4", head="2", tab="attention", presenter="0"),
], ids=["mlm-multihead-presenter", "lm-attention"])
def test_deep_link_opens_the_same_view(page, live, view):
    from app import tab_specs
    from model import api
    from model.registry import assets_dir

    tab_order = [spec.id for spec in tab_specs()]
    page.add_init_script(RECORD_VIEWS_JS)
    open_app(page, live, "?" + urlencode(view), scope="[role=tabpanel]")
    names = tab_names(page)
    assert selected_tab(page) == names[tab_order.index(view["tab"])], "the link's tab is not the one shown"
    assert sentence_box(page).input_value() == view["text"]
    assert page.locator("#model input").first.input_value() == view["model"]
    assert page.locator("#layer input[type=number]").input_value() == view["layer"]
    assert page.locator("#head input[type=number]").input_value() == view["head"]
    presenter = page.evaluate("() => document.body.classList.contains('presenter')")
    assert presenter == (view["presenter"] == "1")
    assert page.locator("#presenter input[type=checkbox]").is_checked() == presenter

    # The link box reproduces the view it was opened with.
    page.wait_for_function("() => ((document.querySelector('#view-link textarea, #view-link input') || {}).value "
                           "|| '').includes('text=')")
    shared = parse_qs(urlsplit(page.locator("#view-link textarea, #view-link input").first.input_value()).query)
    assert {k: shared.get(k, [None])[0] for k in view} == view
    screenshot(page, f"deep-link-{view['model']}-{view['tab']}")

    # The core tab shows that model's tokens and the chosen head.
    if view["tab"] != "attention":
        page.get_by_role("tab", name=names[0], exact=True).click()
    expected = expected_labels(view["text"], api.load(view["model"], assets_dir()))
    wait_for_ticks(page, expected)
    title = page.eval_on_selector(f"{DETAIL} .gtitle", "e => e.textContent")
    assert f"Layer {view['layer']}, head {view['head']}" in title, f"detail title: {title!r}"

    # Nothing on the way showed the default view: Gradio selects the first tab as the page mounts, and the redraw
    # and link that followed that select used to read the default controls (ui/runtime/tab_select.py)
    drawn, addresses = page.evaluate("() => [window.__heads_drawn, window.__addresses]")
    assert drawn and all(ticks == " ".join(expected) for ticks in drawn), drawn
    assert addresses and all(parse_qs(urlsplit(a).query).get("text") == [view["text"]] for a in addresses), addresses


def test_a_tab_clicked_before_the_page_load_answers_leaves_a_drawn_page(page, live):
    """A visitor on a slow phone taps a tab while the page load is still on its way: the page then shows the tab
    the load opened (the link's), drawn with the link's view, and later redraws compute that tab. It used to keep
    the tapped tab on screen, never drawn, while the server took the link's tab as the open one."""
    import json
    import time
    import urllib.request

    with urllib.request.urlopen(live.url + "config", timeout=30) as response:
        config = json.loads(response.read())
    load = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "load_settings")
    held = []

    def hold_the_load(route):
        if json.loads(route.request.post_data or "{}").get("fn_index") == load and not held:
            held.append(route)
        else:
            route.continue_()

    page.route("**/gradio_api/queue/join*", hold_the_load)
    page.goto(live.url + "?" + urlencode({"text": SENTENCE}))
    page.locator("button[role=tab][data-tab-id=positions]").click()
    deadline = time.monotonic() + 60
    while not held:  # the load is sent once the page has mounted; the tab buttons come first
        assert time.monotonic() < deadline, "the page never sent its load"
        page.wait_for_timeout(50)
    assert selected_tab(page) == "Positions", "the tap came before the load: the page shows the tapped tab"
    held[0].continue_()
    page.unroute("**/gradio_api/queue/join*")

    wait_for_ticks(page, expected_labels(SENTENCE))
    wait_until_idle(page)
    assert selected_tab(page) == tab_names(page)[0], "the page shows another tab than the one the load opened"
    assert page.locator("#head-detail").is_visible()
    # the server's open tab is the one shown: a new head redraws it
    page.locator("#head input[type=number]").fill("2")
    page.locator("#head input[type=number]").press("Enter")
    page.wait_for_function("() => /head 2\\b/.test((document.querySelector('#head-detail .gtitle') || {}).textContent)")
    assert not error_toasts(page)


def test_enter_submits_as_the_placeholder_says(page, live):
    """The box's placeholder tells the reader to press Enter: Enter must redraw."""
    open_app(page, live)
    placeholder = sentence_box(page).get_attribute("placeholder") or ""
    assert "Enter" in placeholder, f"the placeholder no longer mentions Enter: {placeholder!r}"
    sentence_box(page).fill("The cat sat on the mat")
    sentence_box(page).press("Enter")
    wait_for_ticks(page, expected_labels("The cat sat on the mat"), timeout=60_000)


def test_an_empty_sentence_gets_one_clear_message_and_the_page_keeps_working(page, live):
    """One click is one request: the message appears once, not once per view."""
    open_app(page, live)
    sentence_box(page).fill("")
    press_analyze(page)
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=toast-text]')]"
                           ".some(e => /error|warning/.test(e.className))", timeout=60_000)
    wait_until_idle(page)  # every view answered: a second message, were they still asked one by one, is in
    messages = message_toasts(page)
    assert len(messages) == 1 and "empty" in messages[0].lower(), messages
    sentence_box(page).fill(SENTENCE)
    press_analyze(page)
    wait_for_ticks(page, expected_labels(SENTENCE), timeout=60_000)
