"""A click (or a tap) on a tile of the every-head grid opens that head, as picking it beside the grid does:
the one-head figure shows it, and the sliders and the tile picker follow. The page script doing it is
ui/runtime/tile_click.py (gr.Plot has no click event)."""
from __future__ import annotations

from urllib.parse import quote_plus

import pytest

from harness.browser import DETAIL, WAIT_MS, error_toasts, wait_for_figures, wait_until_idle
from tests.e2e.conftest import screenshot

LONG = ("The cat sat on the mat and looked at the door while the dog slept by the fire in the old house near "
        "the river where the children played every day after school until the sun went down behind the hills, "
        "and then they all walked home along the road to eat their dinner and tell stories about the day")

# a title's text as it reads: Plotly writes a zero-width space where a <sub> goes on to the next line (and a
# phone's narrow figure breaks the overview's long title inside one: ui/runtime/titles.py)
SHOWN_TEXT = "e => e.textContent.replace(/\\u200b/g, '')"


def tile_point(page, name: str) -> dict:
    """A point inside the tile named `name`: below the middle of its name, written above it."""
    box = page.evaluate("""(name) => {
        const label = [...document.querySelectorAll('#all-heads .annotation-text')]
            .find(e => e.textContent.replace('▶ ', '') === name);
        label.scrollIntoView({block: 'center'});
        const r = label.getBoundingClientRect();
        return {x: r.left + r.width / 2, y: r.bottom};
    }""", name)
    return {"x": box["x"], "y": box["y"] + 20}


def assert_opened(page, layer: int, head: int) -> None:
    page.wait_for_function("([plot, want]) => (document.querySelector(plot + ' .gtitle') || {}).textContent"
                           "?.startsWith(want)", arg=[DETAIL, f"Layer {layer}, head {head} "], timeout=WAIT_MS)
    name = f"L{layer} H{head}"
    page.wait_for_function("(name) => [...document.querySelectorAll('#all-heads .annotation-text')]"
                           ".some(e => e.textContent === '▶ ' + name)", arg=name)  # its tile outlined
    wait_until_idle(page)
    assert page.locator("#layer input[type=number]").input_value() == str(layer), "the layer slider follows"
    assert page.locator("#head input[type=number]").input_value() == str(head), "the head slider follows"
    assert page.locator("#tile-picker input").first.input_value() == name, "the tile picker follows"
    assert not error_toasts(page)


def test_a_click_on_a_tile_opens_that_head(page, live):
    page.goto(live.url)
    wait_for_figures(page, "#all-heads")
    wait_until_idle(page)  # the load's last views set the sliders: click after them
    assert "click a tile to open it above" in page.eval_on_selector("#all-heads .gtitle", SHOWN_TEXT)
    point = tile_point(page, "L3 H2")
    page.mouse.click(point["x"], point["y"])
    assert_opened(page, 3, 2)
    page.wait_for_function("() => { const r = document.querySelector('#head-detail').getBoundingClientRect();"
                           " return r.top >= -5 && r.top < window.innerHeight; }")  # scrolled up to it
    screenshot(page, "tile-click-opened")
    # its name, above the tile, opens it too; and a second click on a tile already clicked once
    point = tile_point(page, "L2 H1")
    page.mouse.click(point["x"], point["y"] - 22)
    assert_opened(page, 2, 1)
    point = tile_point(page, "L3 H2")
    page.mouse.click(point["x"], point["y"])
    assert_opened(page, 3, 2)


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True,
                                  has_touch=True)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    yield page
    try:
        wait_until_idle(page, timeout=30_000)
    finally:
        context.close()


def test_a_tap_on_a_pooled_tile_of_a_long_input_opens_that_head(phone, live):
    phone.goto(f"{live.url}?text={quote_plus(LONG)}")
    wait_for_figures(phone, "#all-heads")
    wait_until_idle(phone)
    assert "max pooling" in phone.eval_on_selector("#all-heads .gtitle", SHOWN_TEXT), \
        "the input is long enough for the pooled overview"
    # a phone shows the layer of the head open (layer 1 at first: viz/narrow.py), in tiles a finger taps
    point = tile_point(phone, "L1 H3")
    phone.touchscreen.tap(point["x"], point["y"])
    assert_opened(phone, 1, 3)
    screenshot(phone, "tile-tap-pooled")
