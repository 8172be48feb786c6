"""The phone's page scripts (ui/page/phone.py) on figures of their own, drawn by Plotly.js in a 390 × 844 page without
the app: each figure fails the readability walk's check (tests/e2e/test_e2e_readability.py's CHECK_JS) drawn as the
server writes it, and passes it with the scripts; a wide screen draws it as written. Seconds, not the walk's minutes."""
from __future__ import annotations

import json

import numpy as np
import pytest
from plotly.offline import get_plotlyjs

from analysis.overview import layer_average, pooled_maps
from tests.e2e.test_e2e_readability import CHECK_JS, PHONE
from ui.page.phone import PHONE_FIT_JS, PHONE_SWAP_JS
from ui.page.slides import page_script
from ui.runtime.hundredths import HUNDREDTHS_JS
from ui.runtime.titles import TITLE_FIT_JS
from viz import generation, narrow, positions, tiles
from viz import head_finder as viz_head_finder
from viz.heatmap import attention_heatmap
from viz.panels import Panel, heatmap_row

TOKENS = ["When", " Mary", " and", " John", " went", " to", " the", " store", ",", " John", " gave", " a", " drink",
          " to"]
PAGE = ("<html><head><meta name=viewport content='width=device-width, initial-scale=1'></head>"
        "<body style='margin:0; padding:0 16px'><div role=tabpanel><div class=block>"
        "<div id=figure class=js-plotly-plot></div></div></div></body></html>")


def weights(*shape) -> np.ndarray:
    p = np.tril(np.random.default_rng(0).random(shape, dtype=np.float32))
    return p / p.sum(-1, keepdims=True)


def steps_row():
    """Four panels side by side, as Step by step's scores draw them."""
    t = len(TOKENS)
    z = np.random.default_rng(1).normal(size=(t, t)).astype(np.float32)
    return heatmap_row([Panel(z, f"{i + 1}. step", TOKENS, TOKENS, signed=i < 3) for i in range(4)],
                       title="From scores to weights: each row is one query")


def one_head():
    """One head, its colour bar as the server draws it (14 px with its title beside it)."""
    return attention_heatmap(weights(len(TOKENS), len(TOKENS)), TOKENS, TOKENS, title="Layer 1, head 1")


def every_head():
    """smollm2's shape: 30 layers × 9 query heads sharing 3 key/value heads, the head L3 H2 open."""
    maps = pooled_maps(weights(30, 9, len(TOKENS), len(TOKENS)))
    grid = tiles.all_heads_overview(maps, TOKENS, TOKENS, selected=(2, 1), kv_heads=3)
    return narrow.narrow_grid(grid, maps, TOKENS, TOKENS, 2, "self-attention", selected=(2, 1), kv_heads=3)


def averages():
    """Every layer's average of smollm2's shape: a strip of 30 tiles."""
    maps = pooled_maps(layer_average(weights(30, 9, len(TOKENS), len(TOKENS)))[None])
    names = [f"L{layer + 1} mean" for layer in range(30)]
    title = "Average over the 9 heads of each layer"
    return narrow.narrow_strip(tiles.layer_average_overview(maps, title=title), maps, names, title)


def head_finder():
    """The head finder's scatter of smollm2's 270 heads, its layer colour bar under the plot (147 px across)."""
    rng = np.random.default_rng(2)
    names = [f"L{layer + 1} H{head + 1}" for layer in range(30) for head in range(9)]
    layers = [layer + 1 for layer in range(30) for _ in range(9)]
    x, y = rng.random(270), rng.random(270)
    return viz_head_finder.scatter(names, layers, x, y, "previous-token", "induction",
                                   [names[i] for i in np.argsort(-y)], "Every head of smollm2")


def cache():
    """lm's key/value cache: four panels' two-line names side by side in one trace."""
    return generation.cache_figure(4, 4, 1, 20, 15, 0, 1, 81920, 4096, title="The key/value cache after step 1")


def small_values():
    """A position table of small values, as minilm's learned one (its colour bar's ends "−0.078" and "0.078": over a
    tenth of the phone's width, until the phone wrote them "−0.07" and "0.07")."""
    table = (np.random.default_rng(3).normal(size=(64, 48)) * 0.02).astype(np.float32)
    return positions.tables_figure({"learned": table}, len(TOKENS))


FIGURES = {"steps": steps_row, "one head": one_head, "every head": every_head, "averages": averages,
           "head finder": head_finder, "cache": cache, "small values": small_values}


@pytest.fixture(scope="module")
def plotly_js() -> str:
    return get_plotlyjs()


def drawn(browser, plotly_js, fig, scripts: bool, viewport=PHONE) -> tuple[list[dict], dict]:
    """(CHECK_JS's problems, what was drawn) for fig in a page of its own, with the phone's scripts or without."""
    context = browser.new_context(**viewport)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.set_content(PAGE)
        page.add_script_tag(content=plotly_js)
        page.evaluate(page_script(TITLE_FIT_JS, *((PHONE_FIT_JS,) if scripts else ()), HUNDREDTHS_JS,
                                  *((PHONE_SWAP_JS,) if scripts else ())))
        page.evaluate("(f) => Plotly.react(document.getElementById('figure'), f.data, f.layout)",
                      json.loads(fig.to_json()))
        page.wait_for_function("() => !!document.querySelector('#figure svg.main-svg .cartesianlayer')")
        page.wait_for_timeout(100)  # a relayout after the draw (labels thinned) has its frame
        problems = page.evaluate(CHECK_JS, [10, False])
        shape = page.evaluate("""() => { const p = document.getElementById('figure'), l = p.layout;
            return {width: p.getBoundingClientRect().width, title: (l.title || {}).text || '',
                    tiles: (l.meta || {}).tiles || [], stacked: (l.meta || {}).stacked || 0,
                    tile_px: [...p.querySelectorAll('.annotation')].length && l.meta.tile_grid ? (() => {
                      const xa = p._fullLayout.xaxis; return xa._length / (xa.range[1] - xa.range[0])
                        * l.meta.tile_grid.width; })() : 0}; }""")
        assert not errors, errors
        return problems, shape
    finally:
        context.close()


@pytest.mark.parametrize("name", list(FIGURES))
def test_a_figure_that_does_not_read_on_a_phone_reads_with_the_phone_scripts(browser, plotly_js, name):
    fig = FIGURES[name]()
    before, _ = drawn(browser, plotly_js, fig, scripts=False)
    assert before, f"{name}: drawn as the server writes it, this figure should fail the walk's check on a phone"
    after, shape = drawn(browser, plotly_js, fig, scripts=True)
    assert not after, f"{name} on a phone: " + "; ".join(p["what"] for p in after)
    assert shape["width"] <= 390 - 32 + 1


def test_the_steps_panels_stack_one_under_the_other(browser, plotly_js):
    _, shape = drawn(browser, plotly_js, steps_row(), scripts=True)
    assert shape["stacked"] == 4


def test_a_phone_shows_one_layer_of_the_every_head_grid_in_tiles_a_finger_taps(browser, plotly_js):
    """Issue 55, item 6: smollm2's 270 tiles of ~20 px became the open head's layer, 9 tiles of at least 44 px,
    a key/value group a row; the title says which layer and how to pick another."""
    problems, shape = drawn(browser, plotly_js, every_head(), scripts=True)
    assert not problems
    assert [n for n in shape["tiles"] if n] == [f"L3 H{h}" for h in range(1, 10)]
    assert shape["tile_px"] >= narrow.TAP_PX, shape
    assert shape["title"].startswith("Layer 3 of 30: its 9 heads"), shape["title"]
    assert "the Layer slider<br>picks another" in shape["title"]


def test_a_colour_bar_of_small_values_is_labelled_at_rounded_values(browser, plotly_js):
    """The ends of ±0.078 are labelled where ±0.07 lie (rounded toward zero, so inside the bar), not "−0.078"."""
    context = browser.new_context(**PHONE)
    page = context.new_page()
    try:
        page.set_content(PAGE)
        page.add_script_tag(content=plotly_js)
        page.evaluate(page_script(PHONE_FIT_JS))
        page.evaluate("(f) => Plotly.react(document.getElementById('figure'), f.data, f.layout)",
                      json.loads(small_values().to_json()))
        page.wait_for_function("() => !!document.querySelector('#figure .colorbar')")
        labels = page.eval_on_selector_all("#figure .colorbar .cbaxis text", "els => els.map(e => e.textContent)")
    finally:
        context.close()
    assert labels == ["−0.07", "0", "0.07"], labels


def test_a_wide_screen_draws_the_whole_grid_as_the_server_wrote_it(browser, plotly_js):
    _, shape = drawn(browser, plotly_js, every_head(), scripts=True,
                     viewport=dict(viewport={"width": 1280, "height": 720}))
    assert len(shape["tiles"]) == 30 * 9 and shape["title"].startswith("Every head")
    _, shape = drawn(browser, plotly_js, steps_row(), scripts=True, viewport=dict(viewport={"width": 1280, "height": 720}))
    assert shape["stacked"] == 0


class _Narrowed:
    """A figure drawn `width` px wide, as presenter mode's half-row columns draw one on a projector."""

    def __init__(self, fig, width: int):
        self.fig, self.width = fig, width

    def to_json(self) -> str:
        figure = json.loads(self.fig.to_json())
        figure["layout"]["width"] = self.width
        return json.dumps(figure)


def test_a_narrow_figure_on_a_projector_is_drawn_as_the_server_wrote_it(browser, plotly_js):
    """The phone's rules follow the screen, not the figure: a 500-px column of a 1280-px screen keeps its panels
    side by side and its labels at the projector's size (stacked, they ran past the first screen)."""
    _, shape = drawn(browser, plotly_js, _Narrowed(steps_row(), 500), scripts=True,
                     viewport=dict(viewport={"width": 1280, "height": 720}))
    assert shape["stacked"] == 0
    _, shape = drawn(browser, plotly_js, _Narrowed(steps_row(), 500), scripts=True,
                     viewport=dict(viewport={"width": 500, "height": 844}))
    assert shape["stacked"] == 4
