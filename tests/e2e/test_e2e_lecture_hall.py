"""A lecture hall: presenter mode on a 1280 × 720 projector (the header as low for a model with several attention
kinds as for the others; every tab's main figure whole on the first screen, its intro given way, is read in
test_e2e_each_tab.py, on the page it shares with axe), figures saved for slides as SVG and PNG, and quiz mode."""
from __future__ import annotations

import re
import struct

import pytest

from app import tab_specs
from harness.browser import (DETAIL, WAIT_MS, error_toasts, type_number, wait_for_figures, wait_until_idle,
                             wait_until_settled)
from tests.e2e.conftest import screenshot

SCREEN = {"width": 1280, "height": 720}
# every tab of the page (ui.tabs.TABS): its link query and its main figure
TABS = {spec.id: spec for spec in tab_specs()}
SHOWN_PLOT = "[role=tabpanel]:not([hidden]) .js-plotly-plot"  # a tab may keep a hidden plot
WITH_INTRO = {"masking", "positions", "multihead", "classifier", "learning"}  # tabs that open with a paragraph


@pytest.fixture
def projector(browser):
    """A 1280 x 720 page, as a projector shows it."""
    context = browser.new_context(viewport=SCREEN, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    yield page
    context.close()


def test_a_model_with_several_kinds_keeps_the_header_low(projector, live):
    heights = {}
    for model, query in (("lm", ""), ("dates", "&text=3+March+1999")):
        projector.goto(f"{live.url}?presenter=1&model={model}{query}")
        projector.wait_for_selector("#head-detail .js-plotly-plot")
        projector.wait_for_function("() => document.body.classList.contains('presenter')")
        heights[model] = projector.evaluate("() => document.querySelector('.tab-wrapper').getBoundingClientRect().top")
    screenshot(projector, "presenter-dates-header")
    assert heights["dates"] <= heights["lm"] + 40, heights


def test_quiz_hides_what_would_give_the_answer_away(page, live):
    """Every head (with the quizzed tile outlined), the layer averages and the statistics all show the answer."""
    page.goto(live.url + "?model=lm&text=The+cat+sat+on+the+mat&quiz=1")
    wait_for_figures(page, DETAIL)
    page.wait_for_selector("#quiz-hidden", state="visible")
    page.wait_for_selector("#quiz-panel", state="visible")
    assert not page.is_visible("#all-heads") and not page.is_visible("#head-stats")
    page.click("#quiz input")  # quiz mode off: all of it back, and the quiz's pickers gone
    page.wait_for_selector("#all-heads .js-plotly-plot", state="visible")
    assert page.is_visible("#head-stats") and not page.is_visible("#quiz-hidden")
    page.wait_for_selector("#quiz-panel", state="hidden")
    page.click("#quiz input")  # and on again by hand: the pickers back, asking about the last token
    page.wait_for_selector("#quiz-panel", state="visible")
    page.wait_for_function("() => document.querySelector('#quiz-row input').value === '7: \u2581mat'")
    assert not page.is_visible("#all-heads")


def test_the_address_bar_follows_the_view(page, live):
    """A refresh mid-lecture, or the address copied from the bar, keeps the view."""
    page.goto(live.url + "?model=lm&text=The+cat+sat+on+the+mat")
    wait_for_figures(page, DETAIL)
    type_number(page, page.locator("#head input[type=number]").first, "3")
    page.wait_for_function("() => location.search.includes('head=3')")
    page.reload()
    wait_for_figures(page, DETAIL)
    # the title may be a moment behind the figure: no title yet reads as "", never as an error
    page.wait_for_function(f"() => ((document.querySelector('{DETAIL} .gtitle') || {{}}).textContent || '')"
                           ".startsWith('Layer 1, head 3')")


def _hover_modebar(page):
    page.hover(f"{DETAIL} .js-plotly-plot .nsewdrag")
    page.wait_for_selector(f"{DETAIL} .modebar-btn[data-title='Download as SVG (for slides)']")


def test_figures_download_as_svg_and_png_for_slides(page, live):
    page.goto(live.url + "?model=lm&text=The+cat+sat+on+the+mat&presenter=1")
    wait_for_figures(page, DETAIL)
    _hover_modebar(page)
    with page.expect_download() as svg_download:
        page.click(f"{DETAIL} .modebar-btn[data-title='Download as SVG (for slides)']")
    svg = open(svg_download.value.path(), "rb").read()
    assert svg_download.value.suggested_filename == "attention-head-detail.svg"
    assert svg.lstrip().startswith(b"<svg") and b"cat" in svg, svg[:100]
    _hover_modebar(page)
    with page.expect_download() as png_download:
        page.click(f"{DETAIL} .modebar-btn[data-title='Download plot as a PNG']")
    png = open(png_download.value.path(), "rb").read()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    drawn = page.eval_on_selector(f"{DETAIL} .js-plotly-plot", "e => e.getBoundingClientRect().width")
    assert width >= 1.9 * drawn, f"PNG {width}x{height} for a figure drawn {drawn}px wide: not at slide size"


def test_a_figure_without_an_id_is_saved_under_its_title(page, live):
    """Slides of several figures: each file named after what it shows, not all "attention-figure.svg"."""
    page.goto(live.url + "?model=lm&text=The+cat+sat+on+the+mat&tab=multihead")
    plot = "[role=tabpanel]:not([hidden]) .js-plotly-plot"
    # the linked tab opens after the page's first tab has drawn: wait for it, then take a figure shown in it
    page.wait_for_function("() => (document.querySelector('[role=tab][aria-selected=true]') || {dataset: {}})"
                           ".dataset.tabId === 'multihead'")
    page.wait_for_function(f"() => [...document.querySelectorAll('{plot}')].some(e => e.offsetParent && e.layout)")
    shown = page.locator(f"{plot}:visible").first
    title = shown.evaluate("e => e.layout.title.text")
    shown.locator(".nsewdrag").first.hover()
    with page.expect_download() as svg_download:
        shown.locator(".modebar-btn[data-title='Download as SVG (for slides)']").click()
    name = svg_download.value.suggested_filename
    words = [w for w in re.split(r"[^a-z0-9]+", re.sub(r"<[^>]*>", "", title).lower()) if w][:3]
    assert name.startswith("attention-" + "-".join(words)) and name.endswith(".svg"), (name, title)


def test_the_head_statistics_download_as_the_csv_of_the_table_shown(page, live):
    page.goto(live.url + "?model=minilm&text=The+animal+didn%27t+cross+the+street")
    page.locator("#head-stats").scroll_into_view_if_needed()  # the table draws only the rows in view
    page.wait_for_function("() => document.querySelector('#head-stats').innerText.includes('L1 H2')")
    with page.expect_download() as download:
        page.click("#stats-csv")
    assert download.value.suggested_filename == "head_stats_minilm.csv"
    lines = open(download.value.path(), encoding="utf-8").read().splitlines()
    assert lines[0].startswith("head,layer,head_in_layer,entropy_bits,spread") and lines[0].endswith(",label")
    assert len(lines) == 1 + 72 and lines[1].startswith("L1 H1,1,1,") and lines[-1].startswith("L6 H12,6,12,")
    shown = " ".join(page.eval_on_selector("#head-stats", "e => e.innerText").split())
    first_row = " ".join(value for value in lines[1].split(",") if value)  # an empty (NaN) cell shows nothing
    assert first_row in shown, f"the CSV's first row {first_row!r} is not the table's"
    # the tile picker offers minilm's 72 heads, not the 16 of the model the page opened with
    page.locator("#tile-picker input").first.click()
    page.get_by_role("option", name="L6 H12", exact=True).wait_for()
    assert not error_toasts(page)


def test_quiz_hides_the_weights_until_revealed(page, live):
    page.goto(live.url + "?model=lm&text=The+cat+sat+on+the+mat&presenter=1&quiz=1")
    wait_for_figures(page, DETAIL)
    page.wait_for_selector("#quiz-panel", state="visible")
    title = page.eval_on_selector(f"{DETAIL} .gtitle", "e => e.textContent")
    assert title.startswith("Quiz"), title
    assert not page.query_selector(f"{DETAIL} .colorbar"), "a hidden figure shows no colour scale"
    page.click("#quiz-guess input")
    # the choices are text: "1: <s>", not the escaped "1: &lt;s&gt;" a figure's labels need
    assert page.get_by_role("option", name="1: <s>", exact=True).count() == 1
    page.get_by_role("option", name="4: ▁sat").click()
    page.click("#quiz-reveal")
    page.wait_for_function("() => document.querySelector('#quiz-answer').innerText.includes('looks most at')")
    answer = page.inner_text("#quiz-answer")
    assert "guessed" in answer and "sat" in answer, answer
    page.wait_for_function(f"() => (document.querySelector('{DETAIL} .gtitle') || {{}}).textContent"
                           "?.startsWith('Revealed')")
    assert page.query_selector(f"{DETAIL} .colorbar"), "the revealed figure has its colour scale"
    link = page.input_value("#view-link textarea, #view-link input")
    assert "quiz=1" in link and "presenter=1" in link
    assert not error_toasts(page)
    screenshot(page, "quiz-revealed", "[role=tabpanel]")
    # another head is another question: hidden again, the last answer gone
    head = page.locator("#head input[type=number]").first
    type_number(page, head, "2")
    page.wait_for_function(f"() => ((document.querySelector('{DETAIL} .gtitle') || {{}}).textContent || '')"
                           ".startsWith('Quiz · layer 1, head 2')")
    page.wait_for_function("() => !document.querySelector('#quiz-answer').innerText.includes('looks most at')")
    assert page.input_value("#quiz-guess input") == ""


def test_a_long_inputs_head_keeps_a_readable_width_and_whole_titles(projector, live):
    """minilm at ~480 tokens on the projector: the head in detail was drawn 260 px wide (square cells of half a
    pixel to fit the first screen) with 4-px labels and its rows' axis title cut. Its cells are now wider than
    tall, across the column, with fewer labels in a font that reads, and both axis titles whole."""
    from urllib.parse import urlencode


    text = ("The animal is tired. " * 95)[:1990]
    projector.goto(f"{live.url}?" + urlencode({"presenter": 1, "tab": "attention", "model": "minilm", "text": text}))
    projector.wait_for_function("() => document.body.classList.contains('presenter')")
    wait_for_figures(projector, DETAIL)
    wait_until_idle(projector)
    # Plotly's last relayout (its drawn size) after the answer: the plot area keeps still
    wait_until_settled(projector, "(r => [r.left, r.width])(document.querySelector('%s .nsewdrag')"
                                  ".getBoundingClientRect())" % DETAIL)
    drawn = projector.evaluate("""(s) => {
        const plot = document.querySelector(s + ' .js-plotly-plot'), box = e => e.getBoundingClientRect();
        const svg = box(plot.querySelector('svg.main-svg'));
        const titles = [...plot.querySelectorAll('.g-xtitle text, .g-ytitle text')].map(e => {
            const r = box(e); return {text: e.textContent, inside: r.left >= svg.left - 1 && r.right <= svg.right + 1
                && r.top >= svg.top - 1 && r.bottom <= svg.bottom + 1}; });
        const fonts = [...plot.querySelectorAll('.xtick text, .ytick text')].map(e => parseFloat(getComputedStyle(e).fontSize));
        return {width: box(plot.querySelector('.nsewdrag')).width, titles, fonts};
    }""", DETAIL)
    screenshot(projector, "presenter-long-head")
    assert drawn["width"] >= 400, f"the head is drawn {drawn['width']:.0f} px wide"
    assert drawn["fonts"] and min(drawn["fonts"]) >= 12, f"tick labels of {min(drawn['fonts'])} px"
    assert len(drawn["titles"]) == 2 and all(t["inside"] for t in drawn["titles"]), drawn["titles"]
