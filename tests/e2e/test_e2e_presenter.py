"""Presenter mode on a 1280 × 720 projector: every tab's main figure starts on the first screen, with the
header as low for a model with several attention kinds (dates) as for the others."""
from __future__ import annotations

import pytest

from tests.e2e.browser_helpers import WAIT_MS
from tests.e2e.conftest import screenshot

SCREEN = {"width": 1280, "height": 720}
VISIBLE_PX = 100  # at least this much of the figure above the fold
# tab -> (extra query, the tab's main figure)
TABS = {
    "attention": ("", "#head-detail"),
    "steps": ("", "[role=tabpanel] .js-plotly-plot"),
    "masking": ("", "[role=tabpanel] .js-plotly-plot"),
    "positions": ("", "[role=tabpanel] .js-plotly-plot"),
    "encoder_decoder": ("&model=dates&text=3+March+1999", "#cross-heat"),
    "learning": ("", "[role=tabpanel] .js-plotly-plot"),
    "multihead": ("", "[role=tabpanel] .js-plotly-plot"),
    "interventions": ("", "#importance"),
    "induction": ("", "[role=tabpanel] .js-plotly-plot"),
    "classifier": ("", "[role=tabpanel] .js-plotly-plot"),
    "live": ("", "#toy-progress"),
}


@pytest.fixture
def projector(browser):
    context = browser.new_context(viewport=SCREEN)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    yield page
    context.close()


@pytest.mark.parametrize("tab", list(TABS))
def test_the_tabs_main_figure_is_on_the_first_screen(projector, live, tab):
    query, figure = TABS[tab]
    projector.goto(f"{live.url}?presenter=1&tab={tab}{query}")
    projector.wait_for_function("(s) => [...document.querySelectorAll(s)].some(e => e.offsetParent &&"
                                " (e.matches('.js-plotly-plot') ? e : e.querySelector('.js-plotly-plot')))", arg=figure)
    projector.wait_for_function("() => document.body.classList.contains('presenter')")
    top = projector.evaluate("""(s) => Math.min(...[...document.querySelectorAll(s)].filter(e => e.offsetParent)
        .map(e => e.getBoundingClientRect().top))""", figure)
    screenshot(projector, f"presenter-{tab}")
    assert top <= SCREEN["height"] - VISIBLE_PX, f"{tab}: its figure starts at {top:.0f} px, below the first screen"


def test_a_model_with_several_kinds_keeps_the_header_low(projector, live):
    heights = {}
    for model, query in (("lm", ""), ("dates", "&text=3+March+1999")):
        projector.goto(f"{live.url}?presenter=1&model={model}{query}")
        projector.wait_for_selector("#head-detail .js-plotly-plot")
        projector.wait_for_function("() => document.body.classList.contains('presenter')")
        heights[model] = projector.evaluate("() => document.querySelector('.tab-wrapper').getBoundingClientRect().top")
    screenshot(projector, "presenter-dates-header")
    assert heights["dates"] <= heights["lm"] + 40, heights
