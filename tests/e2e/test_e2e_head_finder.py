"""The Head finder tab in a real browser: smollm2's 270 heads drawn on one scatter, the ten strongest induction heads
ranked, and a click on the strongest opening it in Every head's one-head view on random words said twice; read at
1280 x 720 in presenter mode and on a 390 px phone (screenshots in test-artifacts/screens/)."""
from __future__ import annotations

import pytest

from harness.browser import DETAIL, WAIT_MS, error_toasts, sentence_box, wait_for_figures, wait_until_idle
from tests.e2e.conftest import screenshot

SCATTER = "#finder-scatter"


def point_of(page, name: str) -> dict:
    """Where the scatter draws the head `name` (its ring's centre when it is ringed: the topmost trace)."""
    return page.evaluate("""([plot, name]) => {
        const gd = document.querySelector(plot + ' .js-plotly-plot');
        gd.scrollIntoView({block: 'center'});
        const traces = gd._fullData, full = gd._fullLayout;
        for (let t = traces.length - 1; t >= 0; t--) {
            const i = (traces[t].customdata || []).indexOf(name);
            if (i < 0) continue;
            const box = gd.querySelector('.nsewdrag').getBoundingClientRect();
            return {x: box.left + full.xaxis.l2p(traces[t].x[i]), y: box.top + full.yaxis.l2p(traces[t].y[i])};
        }
        return null; }""", [SCATTER, name])


def open_finder(page, url: str) -> None:
    page.goto(url, wait_until="load")
    wait_for_figures(page, SCATTER)
    page.wait_for_function("() => (document.querySelector('#finder-ranking') || {}).textContent?.includes('L19 H7')",
                           timeout=WAIT_MS)
    wait_until_idle(page)


def test_smollm2s_heads_are_found_ranked_and_one_opens_on_a_repeated_sentence(page, live):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_finder(page, live.url + "?tab=head_finder&model=smollm2&presenter=1")
    points = page.evaluate(f"() => document.querySelector('{SCATTER} .js-plotly-plot')._fullData[0].x.length")
    assert points == 270, "every head of smollm2 is one point"
    ranking = [line.strip() for line in page.locator("#finder-ranking").inner_text().splitlines() if line.strip()]
    assert ranking[ranking.index("1") + 1] == "L19 H7" and "10" in ranking, ranking
    screenshot(page, "head-finder-presenter")
    where = point_of(page, "L19 H7")
    page.mouse.click(where["x"], where["y"])
    page.wait_for_function("([plot, want]) => (document.querySelector(plot + ' .gtitle') || {}).textContent"
                           "?.startsWith(want)", arg=[DETAIL, "Layer 19, head 7 "], timeout=WAIT_MS)
    wait_until_idle(page)
    text = sentence_box(page).input_value()
    words = text.split()
    assert len(words) >= 20 and words[: len(words) // 2] == words[len(words) // 2:], "random words said twice"
    assert not error_toasts(page)
    screenshot(page, "head-finder-opened-L19-H7")


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


def test_the_scatter_reads_on_a_phone(phone, live):
    open_finder(phone, live.url + "?tab=head_finder&model=smollm2")
    width = phone.evaluate(f"() => document.querySelector('{SCATTER} .js-plotly-plot').getBoundingClientRect().width")
    assert width <= 390
    labels = phone.locator(f"{SCATTER} .textpoint text")
    assert labels.all_text_contents() == ["1", "2", "3", "4", "5"]  # the strongest five, numbered by rank
    screenshot(phone, "head-finder-phone", SCATTER)
