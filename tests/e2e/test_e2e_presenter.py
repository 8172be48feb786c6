"""Presenter mode on a 1280 × 720 projector: every tab's main figure lies whole on the first screen (its top
and its bottom), with the header as low for a model with several attention kinds (dates) as for the others."""
from __future__ import annotations

import pytest

from app import tab_specs
from harness.browser import WAIT_MS, wait_until_idle
from tests.e2e.conftest import screenshot

SCREEN = {"width": 1280, "height": 720}
# every tab of the page (app.TABS): its link query and its main figure
TABS = {spec.id: spec for spec in tab_specs()}


@pytest.fixture
def projector(browser):
    context = browser.new_context(viewport=SCREEN)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    yield page
    context.close()


@pytest.mark.parametrize("tab", list(TABS))
def test_the_tabs_main_figure_is_whole_on_the_first_screen(projector, live, tab):
    query, figure = TABS[tab].query, TABS[tab].figure
    projector.goto(f"{live.url}?presenter=1&tab={tab}{query}")
    projector.wait_for_function("(s) => [...document.querySelectorAll(s)].some(e => e.offsetParent &&"
                                " (e.matches('.js-plotly-plot') ? e : e.querySelector('.js-plotly-plot')))", arg=figure)
    projector.wait_for_function("() => document.body.classList.contains('presenter')")
    wait_until_idle(projector)  # every view in: a later one could push the figure down
    projector.wait_for_timeout(500)  # Plotly's last relayout (its drawn size) after the answer
    box = projector.evaluate("""(s) => {
        const shown = [...document.querySelectorAll(s)].filter(e => e.offsetParent)[0];
        const plot = shown.matches('.js-plotly-plot') ? shown : shown.querySelector('.js-plotly-plot');
        const r = plot.getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, scrolled: window.scrollY};
    }""", figure)
    screenshot(projector, f"presenter-{tab}")
    assert box["scrolled"] == 0, f"{tab}: the page opened scrolled by {box['scrolled']} px"
    assert box["top"] >= 0, f"{tab}: its figure starts at {box['top']:.0f} px, above the screen"
    assert box["bottom"] <= SCREEN["height"], \
        f"{tab}: its figure ends at {box['bottom']:.0f} px, below the {SCREEN['height']}-px first screen"


def test_the_every_head_grids_title_stays_inside_its_figure(projector, live):
    projector.goto(f"{live.url}?presenter=1&tab=attention")
    projector.wait_for_selector("#all-heads .js-plotly-plot .gtitle")
    wait_until_idle(projector)
    edges = projector.evaluate("""() => {
        const plot = document.querySelector('#all-heads .js-plotly-plot');
        return {title: plot.querySelector('.gtitle').getBoundingClientRect().right,
                figure: plot.getBoundingClientRect().right};
    }""")
    assert edges["title"] <= edges["figure"] + 1, edges


def test_a_model_with_several_kinds_keeps_the_header_low(projector, live):
    heights = {}
    for model, query in (("lm", ""), ("dates", "&text=3+March+1999")):
        projector.goto(f"{live.url}?presenter=1&model={model}{query}")
        projector.wait_for_selector("#head-detail .js-plotly-plot")
        projector.wait_for_function("() => document.body.classList.contains('presenter')")
        heights[model] = projector.evaluate("() => document.querySelector('.tab-wrapper').getBoundingClientRect().top")
    screenshot(projector, "presenter-dates-header")
    assert heights["dates"] <= heights["lm"] + 40, heights
