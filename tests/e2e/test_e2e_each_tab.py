"""Each tab opened once by its link, in presenter mode on a 1280 × 720 projector, and read by three tests before the
next tab opens (a page load is seconds of Chromium's CPU; the three used to load 46 pages):

- the tab's main figure lies whole on the first screen, its intro given way (a lecture hall; on the first tab, the
  every-head grid's title inside its figure too);
- axe-core (WCAG 2.1 A and AA) finds no serious or critical violation in presenter mode;
- then, presenter mode unticked on the same page and the window made a laptop's, none seated either.

Each tab's page is a module-scoped fixture, parametrized by tab: pytest runs the three tests of one tab together,
in the order written here, and the last one is the only one that changes the page."""
from __future__ import annotations

import json

import pytest
from axe_playwright_python.sync_playwright import Axe

from harness.browser import wait_until_idle, wait_until_settled
from harness.live_app import ARTIFACTS
from tests.e2e.conftest import close_page, new_page, no_script_ran, screenshot
from tests.e2e.test_e2e_accessibility import AXE_JS, AXE_VERSION, TABS as TAB_IDS, WCAG_21_AA, settled_now
from tests.e2e.test_e2e_lecture_hall import SCREEN, SHOWN_PLOT, TABS, WITH_INTRO

SEATED = {"width": 1400, "height": 1000}  # the other browser tests' window
REPORTS: dict[str, dict] = {"presenter": {}, "seated": {}}  # tab -> axe's violations by rule: test-artifacts/axe-*.json


@pytest.fixture(scope="module", params=list(TABS))
def opened(browser, live, request):
    """The tab's own link (its query and presenter=1) opened on a projector; its dialogs and page errors recorded
    (each test fails on them, as the `page` fixture's do)."""
    page = new_page(browser, viewport=SCREEN)
    page.tab = request.param
    page.goto(f"{live.url}?presenter=1&tab={page.tab}{TABS[page.tab].query}")
    yield page
    close_page(page)


def test_the_tabs_main_figure_is_whole_on_the_first_screen(opened):
    """Each tab opens with a paragraph for students reading alone; on a projector the lecturer says it, and
    the tab's main figure lies whole on the first screen, its first figure well above the fold."""
    projector, tab = opened, opened.tab
    figure = TABS[tab].figure
    projector.wait_for_function("(s) => [...document.querySelectorAll(s)].some(e => e.offsetParent &&"
                                " (e.matches('.js-plotly-plot') ? e : e.querySelector('.js-plotly-plot')))", arg=figure)
    projector.wait_for_function("() => document.body.classList.contains('presenter')")
    wait_until_idle(projector)  # every view in: a later one could push the figure down
    main_plot = ("(() => { const shown = [...document.querySelectorAll(%r)].filter(e => e.offsetParent)[0];"
                 " return shown.matches('.js-plotly-plot') ? shown : shown.querySelector('.js-plotly-plot'); })()"
                 % figure)
    # Plotly's last relayout (its drawn size) after the answer: the figure's box keeps still
    wait_until_settled(projector, f"(r => [r.top, r.bottom, r.width])({main_plot}.getBoundingClientRect())")
    box = projector.evaluate(f"""() => {{
        const r = {main_plot}.getBoundingClientRect();
        const first = Math.min(...[...document.querySelectorAll('{SHOWN_PLOT}')].filter(e => e.offsetParent)
                               .map(e => e.getBoundingClientRect().top));
        return {{top: r.top, bottom: r.bottom, first: first, scrolled: window.scrollY}};
    }}""")
    screenshot(projector, f"presenter-{tab}")
    intros = projector.eval_on_selector_all(".tab-intro", "els => els.map(e => e.offsetParent !== null)")
    assert not any(intros), f"{tab}: a tab's intro is shown in presenter mode"
    if tab in WITH_INTRO:
        assert intros, f"{tab}: its intro is not on the page at all, so its hiding is not checked"
    assert box["scrolled"] == 0, f"{tab}: the page opened scrolled by {box['scrolled']} px"
    assert box["top"] >= 0, f"{tab}: its figure starts at {box['top']:.0f} px, above the screen"
    assert box["bottom"] <= SCREEN["height"], \
        f"{tab}: its figure ends at {box['bottom']:.0f} px, below the {SCREEN['height']}-px first screen"
    assert box["first"] < SCREEN["height"] - 150, f"{tab}: the first figure starts at {box['first']:.0f} px"
    if tab == "attention":
        assert box["top"] < SCREEN["height"] - 200, \
            f"the one-head figure starts at {box['top']:.0f} px: below a 720-px screen's fold"
        # the every-head grid's title stays inside its figure
        projector.wait_for_selector("#all-heads .js-plotly-plot .gtitle")
        edges = projector.evaluate("""() => {
            const plot = document.querySelector('#all-heads .js-plotly-plot');
            return {title: plot.querySelector('.gtitle').getBoundingClientRect().right,
                    figure: plot.getBoundingClientRect().right};
        }""")
        assert edges["title"] <= edges["figure"] + 1, edges
    no_script_ran(projector)


def axe_finds_nothing_serious(page, mode: str) -> None:
    """axe-core on the page as it is now; its violations by rule written to test-artifacts/axe-<mode>.json."""
    assert AXE_JS.exists(), f"axe-core {AXE_VERSION} is missing: run make test, or npm install --prefix .axe axe-core@{AXE_VERSION}"
    settled_now(page)
    response = Axe.from_file(AXE_JS).run(page, options=WCAG_21_AA).response
    assert response["testEngine"]["version"] == AXE_VERSION
    violations = response["violations"]
    REPORTS[mode][page.tab] = {v["id"]: [v["impact"], len(v["nodes"])] for v in violations}
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"axe-{mode}.json").write_text(json.dumps(REPORTS[mode], indent=1))
    bad = [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:3]]}" for v in violations
           if v["impact"] in ("serious", "critical")]
    assert not bad, {page.tab: bad}
    no_script_ran(page)


def test_axe_finds_no_serious_or_critical_violation_in_presenter_mode(opened):
    """One tab opened per page: tabs visited before stay in the page, hidden, and axe's run grew from 2.5 s to
    8-11 s over a walk of the tab bar (excluding the hidden panels from its context did not help)."""
    tabs = opened.eval_on_selector_all("[role=tab]", "els => els.map(e => e.dataset.tabId)")
    assert tabs == TAB_IDS, tabs
    axe_finds_nothing_serious(opened, "presenter")


def test_axe_finds_no_serious_or_critical_violation_seated(opened):
    """The same page as a student's laptop shows it: presenter mode unticked (last: it changes the page)."""
    page = opened
    page.set_viewport_size(SEATED)
    page.locator("#presenter input[type=checkbox]").uncheck()
    page.wait_for_function("() => !document.body.classList.contains('presenter')")
    page.wait_for_function("() => !/presenter=1/.test((document.querySelector('#view-link textarea, "
                           "#view-link input') || {}).value || '')")
    wait_until_idle(page)
    axe_finds_nothing_serious(page, "seated")
