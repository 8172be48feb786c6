"""Everyone in the room, in a real browser: every tab drawn, with a text alternative on every figure made from the
numbers it draws; a name for every control, and a lecture walked with the keyboard alone, the focus visible at every
step. axe-core (WCAG 2.1 A and AA) on every tab, with and without presenter mode, runs in test_e2e_each_tab.py, on the
page each tab's link opens for the lecture hall's check."""
from __future__ import annotations

import re

from axe_playwright_python.sync_playwright import Axe

from app import tab_specs
from harness.browser import (DETAIL, PLOT, error_toasts, expected_labels, wait_for_figures, wait_for_ticks,
                             wait_until_idle)
from tests.e2e.conftest import screenshot
from harness.live_app import ROOT

# axe-core as the Makefile installs it (make test; by hand: npm install --prefix .axe axe-core@<version>): the
# newest release, not the older one axe-playwright-python bundles (4.12 passed what 4.14 finds)
AXE_VERSION = "4.14.1"
AXE_JS = ROOT / ".axe" / "node_modules" / "axe-core" / "axe.min.js"

TABS = [spec.id for spec in tab_specs()]  # every tab of the page (ui.tabs.TABS)
WCAG_21_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
              "resultTypes": ["violations"]}
SHOWN_PLOTS = f"[role=tabpanel] {PLOT}"


def open_settled(page, live, tab: str, query: str = "") -> None:
    page.goto(f"{live.url}?tab={tab}{query}")
    settled_now(page)


def settled_now(page) -> None:
    """Every view in and no fade still running: a view that has just arrived fades back in from Gradio's
    "pending" (0.15 s), and axe measured the Causal tracing summary's contrast mid-fade on a loaded run."""
    wait_for_figures(page, "[role=tabpanel]")
    wait_until_idle(page)
    page.wait_for_function("() => !document.getAnimations().some(a => a instanceof CSSTransition)")


def the_head_in_detail_says_what_it_draws(page) -> None:
    """The one head in detail: the number said is the one drawn (each row's largest weight, averaged)."""
    wait_for_figures(page, DETAIL)
    alt = page.get_attribute(f"{DETAIL} {PLOT}", "aria-label")
    assert re.match(r"Layer 1, head 4\b.*each token puts most of its attention \(0\.\d\d on average\) on the "
                    r"previous token\.", alt, re.I), alt
    drawn = page.evaluate(f"""() => {{ const z = document.querySelector('{DETAIL} {PLOT}').calcdata[0][0].z;
        const rows = [...Array(z.length).keys()].slice(1).map(i => Math.max(...[...z[i]].filter(Number.isFinite)));
        return rows.reduce((a, b) => a + b, 0) / rows.length; }}""")
    assert re.search(r"\((0\.\d\d) on average\)", alt)[1] == f"{drawn:.2f}", (alt, drawn)


def the_open_tab_is_drawn(page, tab: str) -> None:
    """The link box names the open tab (a lecturer shares exactly this view), and every figure shown has drawn
    data and no error is shown."""
    page.wait_for_function("""(id) => new URLSearchParams(((document.querySelector(
        '#view-link textarea, #view-link input') || {}).value || '').split('?')[1] || '').get('tab') === id""", arg=tab)
    figures = [f for f in wait_for_figures(page, "[role=tabpanel]") if f["visible"]]
    assert figures, f"tab {tab!r} shows no figure"
    undrawn = [f for f in figures if not (f["svg"] and f["marks"])]
    assert not undrawn, f"tab {tab!r}: figures without drawn data: {undrawn}"
    assert not error_toasts(page), f"tab {tab!r} showed errors: {error_toasts(page)}"


def every_figure_is_named(page, tab: str) -> None:
    """Each figure shown is a role=figure named by its title, then more: a text alternative from its numbers."""
    page.wait_for_function("(sel) => [...document.querySelectorAll(sel)].filter(p => p.getBoundingClientRect()"
                           ".width > 0).every(p => p.getAttribute('aria-label'))", arg=SHOWN_PLOTS)
    named = page.eval_on_selector_all(SHOWN_PLOTS, """els => els.filter(p => p.getBoundingClientRect().width > 0)
        .map(p => ({role: p.getAttribute('role'), alt: p.getAttribute('aria-label'),
                    title: (p.querySelector('.gtitle') || {}).textContent || ''}))""")
    assert named, f"{tab}: no figure shown"
    for figure in named:
        assert figure["role"] == "figure", (tab, figure)
        title = re.sub(r"[\s\u200b]+", "", figure["title"])  # Plotly writes sub- and superscripts apart
        assert re.sub(r"[\s\u200b]+", "", figure["alt"]).startswith(title[:30]), (tab, figure)  # the title first
        assert len(figure["alt"]) > len(title) + 10, (tab, figure)  # and more than the title


def test_every_tab_is_drawn_by_its_button_with_its_figures_named(page, live):
    """One walk of the tab bar holds what two walks checked (the other opened the page once per tab, and a page
    load is seconds of Chromium's CPU): every tab drawn, and every figure named from its numbers."""
    page.goto(live.url)
    page.wait_for_selector("[role=tab]")
    labels = page.eval_on_selector_all("button[role=tab]", "els => els.map(e => e.textContent.trim())")
    assert labels == [spec.label for spec in tab_specs()], f"the tab bar is not ui.tabs.TABS: {labels}"
    the_head_in_detail_says_what_it_draws(page)
    for tab in TABS[1:] + TABS[:1]:  # end back on the first tab, opened by its button as well
        page.locator(f"[role=tab][data-tab-id={tab}]").click()
        the_open_tab_is_drawn(page, tab)
        wait_until_idle(page)
        every_figure_is_named(page, tab)
        screenshot(page, f"tab-{tab}", "[role=tabpanel]")


def test_train_lives_status_line_keeps_its_contrast_while_pending(page, live):
    """Gradio fades a Markdown whose next value is on its way (class "pending": opacity 0.2); the status line
    says what training is doing, so it stays readable then. Its pending state is set here, as Gradio sets it,
    instead of caught in the moment it lasts."""
    open_settled(page, live, "live")
    page.wait_for_function("() => document.querySelector('#toy-status p')")
    wrapper = "#toy-status [data-testid=markdown-wrapper]"
    # reading the style starts Gradio's fade (0.15 s); it has ended when the wrapper runs no transition
    page.evaluate("(s) => { const e = document.querySelector(s); e.classList.add('pending');"
                  " getComputedStyle(e).opacity; }", wrapper)
    page.wait_for_function("(s) => document.querySelector(s).getAnimations({subtree: true}).length === 0", arg=wrapper)
    response = Axe.from_file(AXE_JS).run(page, context="#toy-status", options=WCAG_21_AA).response
    # the page as Gradio left it: a "pending" that no answer clears keeps the page busy (its close waits for idle)
    page.evaluate("(s) => document.querySelector(s).classList.remove('pending')", wrapper)
    assert response["testEngine"]["version"] == AXE_VERSION
    assert not [v["id"] for v in response["violations"] if v["impact"] in ("serious", "critical")]


def test_every_control_has_a_name_and_the_header_says_what_each_is(page, live):
    open_settled(page, live, "attention")
    assert page.get_by_role("textbox", name="Sentence").count() == 1
    assert page.get_by_role("combobox", name="Model").count() == 1
    assert page.get_by_role("button", name="Show attention").count() == 1
    unnamed = page.evaluate("""() => [...document.querySelectorAll(
            'input, textarea, select, button, [role=combobox], [role=slider], [role=tab], [role=checkbox]')]
        .filter(e => e.getBoundingClientRect().width > 0 && e.type !== 'hidden')
        .filter(e => {
            const labelled = (e.getAttribute('aria-label') || '').trim()
                || (e.getAttribute('aria-labelledby') || '').split(' ').some(id => (document.getElementById(id) || {}).textContent)
                || (e.labels && [...e.labels].some(l => l.textContent.trim()))
                || (e.tagName === 'BUTTON' && (e.textContent.trim() || e.title));
            return !labelled; })
        .map(e => e.outerHTML.slice(0, 120))""")
    assert not unnamed, unnamed
    # Gradio's generic names are no name: a screen reader would say "Textbox", "Dropdown"
    generic = page.evaluate("() => [...document.querySelectorAll('[aria-label]')].map(e => e.getAttribute("
                            "'aria-label')).filter(n => /^(Textbox|Dropdown|Slider|Number|Checkbox)$/.test(n))")
    assert not generic, generic


def focus_ring(page) -> dict:
    return page.evaluate("""() => { const e = document.activeElement, s = getComputedStyle(e);
        return {tag: e.tagName, id: (e.closest('[id]') || {}).id, style: s.outlineStyle,
                width: parseFloat(s.outlineWidth), box: e.getBoundingClientRect().width > 0}; }""")


def tab_to(page, selector: str, presses: int = 120, backwards: bool = False) -> None:
    """Press Tab (or Shift+Tab) until the focus is in `selector`, then check that the focus is visible."""
    for _ in range(presses):
        page.keyboard.press("Shift+Tab" if backwards else "Tab")
        if page.evaluate("(sel) => !!document.activeElement.closest(sel)", selector):
            ring = focus_ring(page)
            assert ring["box"] and ring["style"] != "none" and ring["width"] >= 2, (selector, ring)
            return
    raise AssertionError(f"{presses} Tab presses never reached {selector}")


def test_a_lecture_walked_with_the_keyboard_alone(page, live):
    page.goto(live.url)
    wait_for_figures(page, DETAIL)
    wait_until_idle(page)
    # type a sentence, Enter
    tab_to(page, "#sentence")
    page.keyboard.press("Control+a")
    page.keyboard.type("The cat sat on the mat")
    page.keyboard.press("Enter")
    wait_for_ticks(page, expected_labels("The cat sat on the mat"))
    wait_until_idle(page)
    # choose a model: type in the picker to narrow its options, Enter takes the first
    tab_to(page, "#model")
    page.keyboard.press("Control+a")
    page.keyboard.type("mlm")
    page.keyboard.press("Enter")
    page.wait_for_function("() => /model=mlm/.test(document.querySelector('#view-link textarea, #view-link input')"
                           ".value)")
    wait_until_idle(page)
    # open a head from the overview's picker
    tab_to(page, "#tile-picker")
    page.keyboard.type("L2 H3")
    page.keyboard.press("Enter")
    page.wait_for_function("() => /^Layer 2, head 3/.test((document.querySelector('#head-detail .gtitle') || {})"
                           ".textContent || '')")
    wait_until_idle(page)
    # move through the tabs (each tab is a stop on the Tab key's way), and open one with Enter
    tab_to(page, "[role=tab][data-tab-id=steps]", backwards=True)
    page.keyboard.press("Enter")
    wait_for_figures(page, "[role=tabpanel]")
    page.wait_for_function("() => /Temperature 1,/.test((document.querySelector('#steps-caption') || {}).innerText)")
    wait_until_idle(page)
    # change a slider: the temperature, with the arrow keys
    tab_to(page, "#temperature input[type=range]")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("() => /Temperature 0\\.891,/.test(document.querySelector('#steps-caption').innerText)")
