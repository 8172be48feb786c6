"""Slides: each figure's toolbar saves a PNG at twice its drawn size (the figure's own Plotly config) and an
SVG (ui/page/slides.py), named after the view, whatever the draw-once page script does."""
from __future__ import annotations

from harness.browser import DETAIL, wait_for_figures
from tests.e2e.conftest import screenshot


def test_every_figure_saves_a_2x_png_and_an_svg_named_after_its_view(page, live):
    page.goto(live.url, wait_until="load")
    wait_for_figures(page, DETAIL)
    plot = page.locator(f"{DETAIL} .js-plotly-plot").first
    options = plot.evaluate("(gd) => gd._context.toImageButtonOptions")
    assert options == {"format": "png", "scale": 2, "filename": "attention-head-detail"}
    assert not plot.evaluate("(gd) => gd._context.displaylogo")
    plot.hover()
    svg = page.locator(f'{DETAIL} .modebar-btn[data-title="Download as SVG (for slides)"]')
    assert svg.count() == 1 and page.locator(f'{DETAIL} .modebar-btn[data-title^="Download plot"]').count() == 1
    screenshot(page, "slides-toolbar", DETAIL)
