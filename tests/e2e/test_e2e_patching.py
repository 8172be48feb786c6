"""The Causal tracing tab in a real browser: the preview at once, the exact grids streamed in beside it with their
agreement, a head picked, the routes redrawn by the threshold slider, and a refusal said on the page.

One page for the module, in this order (opening the tab is a page load and a tracing of every head on the server):
the first test reads it as it opens, the others each change one thing the ones after it do not read."""
from __future__ import annotations

from harness.browser import error_toasts, message_toasts, wait_for_figures
from tests.e2e.conftest import no_script_ran, screenshot

LINK = "?tab=patching&model=lm"


def on_the_tab(page, live) -> None:
    """Open the tab's link, unless an earlier test of the module already has (a test run alone opens it)."""
    if getattr(page, "opened", None) != LINK:
        page.goto(live.url + LINK)
        page.wait_for_load_state("load")
        page.opened = LINK


def test_the_exact_grids_stream_in_after_the_preview(module_page, live):
    page = module_page
    on_the_tab(page, live)
    drawn = wait_for_figures(page, "#patching-residual")
    assert drawn and all(f["marks"] for f in drawn if f["visible"]), drawn
    page.wait_for_function("() => (document.querySelector('#patching-summary') || {}).innerText"
                           "?.includes('Preview against exact: r =')")
    summary = page.locator("#patching-summary").inner_text()
    assert "Heads (each head's output at position 9): the most restoring are L3 H4 0.44, L4 H2 0.38" in summary
    page.wait_for_function("() => [...document.querySelectorAll('#patching-residual .annotation-text')]"
                           ".some(e => e.textContent === 'exact')")
    for figure in ("#patching-attention", "#patching-mlp", "#patching-heads", "#patching-routes",
                   "#patching-head-attention"):
        assert wait_for_figures(page, figure), figure
    assert not error_toasts(page)
    screenshot(page, "patching-lm", "[role=tabpanel]")
    no_script_ran(page)


def test_a_click_on_a_cell_of_the_heads_map_opens_that_head(module_page, live):
    """As in the every-head grid (ui/runtime/tile_click.py): the head's attention is drawn, the dropdown follows, the
    cell is outlined in the heads map and the head's attention is scrolled into view."""
    page = module_page
    on_the_tab(page, live)
    wait_for_figures(page, "#patching-heads")
    page.wait_for_function("() => (document.querySelector('#patching-head-attention .gtitle') || {}).textContent"
                           "?.startsWith('L3 H4')")  # the strongest head is opened first
    point = page.evaluate("""() => {  // the exact panel's cell of layer 2, head 1
        const gd = document.querySelector('#patching-heads .js-plotly-plot');
        gd.scrollIntoView({block: 'center'});
        const xa = gd._fullLayout.xaxis2, ya = gd._fullLayout.yaxis2, r = gd.getBoundingClientRect();
        return {x: r.left + xa._offset + xa.l2p(0), y: r.top + ya._offset + ya.l2p(1)};
    }""")
    page.mouse.click(point["x"], point["y"])
    page.wait_for_function("() => (document.querySelector('#patching-head-attention .gtitle') || {}).textContent"
                           "?.startsWith('L2 H1 on the clean prompt')")
    page.wait_for_function("() => document.querySelector('#patching-head input').value === 'L2 H1'")
    # the clicked cell is outlined (layer 2 is row 1, head 1 column 0), and the head's figure is scrolled into view
    page.wait_for_function("""() => { const s = ((document.querySelector('#patching-heads .js-plotly-plot') || {})
        .layout || {}).shapes || []; return s.length > 0 && s.every(r => r.y0 === 0.5 && r.x0 === -0.5); }""")
    page.wait_for_function("() => { const r = document.querySelector('#patching-head-attention')"
                           ".getBoundingClientRect(); return r.top >= -5 && r.top < window.innerHeight / 2; }")
    assert not error_toasts(page)
    no_script_ran(page)


def test_the_threshold_slider_redraws_the_routes(module_page, live):
    page = module_page
    on_the_tab(page, live)
    page.wait_for_function("() => (document.querySelector('#patching-routes-summary') || {}).innerText"
                           "?.includes('edges')")
    before = page.locator("#patching-routes-summary").inner_text()
    box = page.locator("#patching-threshold input[type=number]")
    box.fill("0.3")
    box.press("Enter")
    page.wait_for_function("(b) => { const t = document.querySelector('#patching-routes-summary').innerText;"
                           " return t.includes('threshold 0.30') && t !== b; }", arg=before)
    assert not error_toasts(page)
    no_script_ran(page)


def test_prompts_of_different_lengths_are_refused_on_the_page(module_page, live):
    page = module_page
    on_the_tab(page, live)
    wait_for_figures(page, "#patching-residual")
    page.locator("#patching-corrupted textarea").fill("The queen said to the")
    page.locator("#patching-clean textarea").fill("The king said to the")
    page.locator("#patching-run").click()
    page.wait_for_function("() => document.body.innerText.includes('same number of tokens')")
    assert any("8 (<s> | The | ▁qu | e | en" in m for m in message_toasts(page))
    no_script_ran(page)
