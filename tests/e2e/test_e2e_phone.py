"""A student following on a phone (390 × 844, touch): every tab can be found, no toolbar lies over a figure's
title, Step by step's four panels stand in a column, a head opens from the overview by touch and reads
whole, Train live trains, the Lens's labels stand apart, every figure's title reads whole, and nothing asks to
"hover"."""
from __future__ import annotations

import html

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from app import tab_specs
from harness.browser import (DETAIL, PLOT, WAIT_MS, stop_training_if_running, wait_for_figures,
                                       wait_until_idle)
from tests.e2e.conftest import screenshot
from ui.page.messages import clean_text
from viz.labels import labelled_positions, token_label

PHONE = dict(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True, has_touch=True)
TAB_NAMES = [spec.label for spec in tab_specs()]  # every tab of the page (ui.tabs.TABS)


@pytest.fixture
def phone(browser):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    try:
        wait_until_idle(page, timeout=30_000)
    except Exception:
        pass
    context.close()
    assert not errors, errors[:3]


def rect(page, selector: str) -> dict | None:
    return page.evaluate("(s) => { const e = document.querySelector(s); if (!e) return null;"
                         " const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, right: r.right,"
                         " bottom: r.bottom, width: r.width, height: r.height}; }", selector)


def toolbars_over_titles(page) -> list[str]:
    """Every shown figure whose toolbar (when shown at all) overlaps its title."""
    return page.evaluate(f"""() => [...document.querySelectorAll('[role=tabpanel] {PLOT}')].filter(p => {{
        const bar = p.querySelector('.modebar-container'), title = p.querySelector('.gtitle');
        if (!bar || !title || getComputedStyle(bar).display === 'none') return false;
        const a = bar.getBoundingClientRect(), b = title.getBoundingClientRect();
        return a.width > 0 && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    }}).map(p => (p.closest('[id]') || {{}}).id)""")


def test_every_tab_is_in_reach_and_no_toolbar_covers_a_title(phone, live):
    phone.goto(live.url)
    wait_for_figures(phone, DETAIL)
    wait_until_idle(phone)
    tabs = phone.get_by_role("tab")
    names = [t.strip() for t in tabs.all_inner_texts()]
    assert names == TAB_NAMES, names
    for tab in tabs.all():
        box = tab.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 391, (tab.inner_text(), box)
    assert not phone.get_by_role("button", name="More tabs").is_visible(), "no tab hides behind a menu"
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= 391, "the page itself never scrolls sideways"
    assert not toolbars_over_titles(phone)
    # the overview says how to read a tile without a mouse
    overview = phone.inner_text("#overview")
    assert "hover" not in overview.lower(), overview
    screenshot(phone, "phone-every-head")
    assert not titles_cut(phone), titles_cut(phone)
    for tab in tabs.all()[1:]:  # every tab's titles read whole (ui/runtime/titles.py breaks them to fit)
        tab.tap()
        wait_for_figures(phone, "[role=tabpanel]")
        wait_until_idle(phone)
        assert not titles_cut(phone), (tab.inner_text(), titles_cut(phone))


def titles_cut(page) -> list[dict]:
    """Every shown figure whose title runs past its edge, or down into what the figure draws under it."""
    return page.evaluate(f"""() => [...document.querySelectorAll('[role=tabpanel] {PLOT}')]
        .filter(p => p.offsetParent && p.querySelector('.gtitle')).map(p => {{
            const plot = p.getBoundingClientRect(), title = p.querySelector('.gtitle').getBoundingClientRect();
            const below = [...p.querySelectorAll('.subplot .bg, .xtick text, .g-xtitle, .g-x2title, .g-ytitle')]
                .map(e => e.getBoundingClientRect()).filter(r => r.width > 0);
            return {{id: (p.closest('[id]') || {{}}).id, title: p.querySelector('.gtitle').textContent.slice(0, 60),
                     out: Math.round(title.right - plot.right), left: Math.round(plot.left - title.left),
                     into: Math.round(title.bottom - Math.min(...below.map(r => r.top), Infinity))}};
        }}).filter(t => t.out > 0 || t.left > 0 || t.into > 0)""")


def test_the_first_screen_shows_the_default_tabs_figure_and_the_settings_open_with_a_tap(phone, live):
    """Issue 55: on a phone the first screen was all controls (the default tab's figure began at 1,039 px of 844).
    The settings are an accordion closed on a phone (ui/page/phone.py), and the figure's title and first rows are on
    the first screen; a tap on the accordion's header shows every setting, and the Layer slider still moves the view."""
    from ui.page.controls import SETTINGS_LABEL

    phone.goto(live.url)
    wait_for_figures(phone, DETAIL)
    wait_until_idle(phone)
    phone.evaluate("() => window.scrollTo(0, 0)")
    figure = rect(phone, f"{DETAIL} {PLOT}")
    assert figure["y"] + 160 <= 844, f"the default tab's figure starts at {figure['y']:.0f} px of the first screen (844)"
    screenshot(phone, "phone-first-screen")
    settings = phone.get_by_role("button", name=SETTINGS_LABEL)
    assert not phone.locator("#layer").is_visible(), "the settings are closed on a phone"
    settings.tap()
    for control in ("#examples", "#layer", "#head", "#presenter", "#quiz"):
        phone.locator(control).wait_for(state="visible")
    assert rect(phone, "#settings")["right"] <= 391
    phone.locator("#layer input[type=number]").fill("2")
    phone.locator("#layer input[type=number]").press("Enter")
    phone.wait_for_function("() => /^Layer 2, head/.test((document.querySelector('#head-detail .gtitle') || {})"
                            ".textContent || '')")
    screenshot(phone, "phone-settings-open")


def test_a_head_opens_from_the_overview_by_touch_and_reads_whole(phone, live):
    phone.goto(live.url)
    wait_for_figures(phone, "#all-heads")
    wait_until_idle(phone)
    phone.locator("#tile-picker input").first.tap()
    phone.get_by_role("option", name="L3 H1", exact=True).first.tap()
    phone.wait_for_function("() => /^Layer 3, head 1/.test((document.querySelector('#head-detail .gtitle') || {})"
                            ".textContent || '')")
    wait_until_idle(phone)
    detail = rect(phone, f"{DETAIL} {PLOT}")
    assert detail["x"] >= -1 and detail["right"] <= 391, f"the one head fits the screen's width: {detail}"
    ticks = phone.eval_on_selector_all(f"{DETAIL} .xtick text", "els => els.map(e => e.getBoundingClientRect().right)")
    assert ticks and max(ticks) <= 391, "every key label is on the screen"
    title = rect(phone, f"{DETAIL} .gtitle")
    assert title["x"] >= 0 and title["right"] <= 391, f"the title is not cut: {title}"
    assert not toolbars_over_titles(phone)
    screenshot(phone, "phone-head-detail", DETAIL)


def test_step_by_steps_panels_stack_to_the_screens_width(phone, live):
    """Four panels side by side left each 70 px of a phone (they scrolled in a 760-px box until issue 55): they
    are stacked one under the other (ui/page/phone.py), each the screen's width, and nothing scrolls sideways."""
    phone.goto(live.url + "?tab=steps")
    wait_for_figures(phone, "#steps-scores")
    wait_until_idle(phone)
    phone.wait_for_function("() => ((document.querySelector('#steps-scores .js-plotly-plot') || {}).layout || {})"
                            ".meta?.stacked >= 3")
    plot = rect(phone, f"#steps-scores {PLOT}")
    assert plot["right"] <= 391 and plot["height"] > 3 * plot["width"] * 0.6, f"the panels stand in a column: {plot}"
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= 391
    # the titles stand apart once Plotly has drawn the stacked panels
    phone.wait_for_function("""() => { const r = [...document.querySelectorAll('#steps-scores .annotation-text')]
        .map(e => e.getBoundingClientRect()); return r.length >= 3 && r.every((a, i) => r.slice(i + 1).every(b =>
        a.right <= b.left + 1 || b.right <= a.left + 1 || a.bottom <= b.top + 1 || b.bottom <= a.top + 1)); }""")
    titles = phone.eval_on_selector_all("#steps-scores .annotation-text", """els => els.map(e => {
        const r = e.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom, e.textContent]; })""")
    for i, a in enumerate(titles):
        for b in titles[i + 1:]:
            apart = a[1] <= b[0] + 1 or b[1] <= a[0] + 1 or a[3] <= b[2] + 1 or b[3] <= a[2] + 1
            assert apart, f"panel titles overlap: {a[4]!r} and {b[4]!r}"
    assert not toolbars_over_titles(phone)
    screenshot(phone, "phone-steps")


@pytest.mark.trains
def test_train_live_trains_on_a_phone(phone, live):
    phone.goto(live.url + "?tab=live")
    wait_for_figures(phone, "#toy-progress")
    wait_until_idle(phone)
    train = phone.locator("#toy-train")
    box = train.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 391
    train.tap()
    phone.wait_for_function("() => /step [1-9]/.test((document.querySelector('#toy-progress .gtitle') || {})"
                            ".textContent || '')")
    stop_training_if_running(phone)
    phone.wait_for_function("() => (document.querySelector('#toy-status') || {}).innerText?.includes('Done')")
    assert not toolbars_over_titles(phone)
    screenshot(phone, "phone-train-live")


def test_the_lens_leaves_out_cell_labels_too_narrow_to_read_and_says_so(phone, live):
    """On a phone the Lens's cells are a third as wide as on a laptop: their labels overlapped. Where two would
    overlap every label is left out, and the figure says why and how to read a cell."""
    from urllib.parse import urlencode

    from ui.page.accessibility import CELL_LABELS_NOTE

    text = "It is a good idea to read the lecture notes before the class starts"
    phone.goto(live.url + "?" + urlencode({"tab": "lens", "model": "lm", "text": text}))
    wait_for_figures(phone, "#lens-top")
    wait_until_idle(phone)
    phone.wait_for_function("() => document.querySelector('#lens-top .scatterlayer .textpoint text')")
    shown = phone.eval_on_selector_all("#lens-top .scatterlayer .textpoint text", """els => els
        .filter(e => getComputedStyle(e).visibility !== 'hidden')
        .map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom, e.textContent]; })""")
    for i, a in enumerate(shown):
        for b in shown[i + 1:]:
            apart = a[1] <= b[0] + 0.5 or b[1] <= a[0] + 0.5 or a[3] <= b[2] + 0.5 or b[3] <= a[2] + 0.5
            assert apart, f"cell labels overlap: {a[4]!r} and {b[4]!r}"
    said = phone.evaluate("() => { const b = document.querySelector('#lens-top').closest('.block') ||"
                          " document.querySelector('#lens-top'); return getComputedStyle(b, '::after').content; }")
    assert not shown and CELL_LABELS_NOTE in said, said
    screenshot(phone, "phone-lens", "#lens-top")


# Tick labels rotated by the axis's tickangle lie on parallel baselines, a tick distance dx apart along the axis and
# dx · sin(angle) apart across: closer than 0.9 of their font's size and their letters overlap (their oriented boxes
# do; the axis-aligned boxes of rotated labels overlap long before the letters do). Rotated by -45° and anchored at
# their end, the labels' boxes end on the right one font's corner past their ticks: the right edges are as far
# apart as the ticks.
CROWDED_TICKS = """(plot) => {
    const texts = [...document.querySelectorAll(plot + ' .xtick text')].filter(e => e.textContent);
    const angle = Math.abs(((document.querySelector(plot + ' .js-plotly-plot') || {}).layout || {}).xaxis.tickangle || 0);
    const ticks = texts.map(e => { const r = e.getBoundingClientRect();
        return [e.textContent, r.right, parseFloat(getComputedStyle(e).fontSize), r.width]; }).sort((a, b) => a[1] - b[1]);
    const crowded = [];
    for (let i = 1; i < ticks.length; i++) {
        const [a, x, size, width] = ticks[i - 1], [b, next] = ticks[i];
        const room = angle ? (next - x) * Math.sin(angle * Math.PI / 180) : next - x;
        if (room < (angle ? 0.9 * size : width)) crowded.push(a + ' / ' + b);
    }
    return {crowded, count: ticks.length, labels: ticks.map(t => t[0])}; }"""
LONG_TEXT = ("It is a good idea to read the lecture notes before the class starts, and to bring a pen, a notebook "
             "and some questions about the attention heads we saw last week in the lab")  # 48 positions on lm


def test_the_lens_labels_every_kth_position_where_all_would_overlap_and_says_which(phone, live):
    """48 positions on a 390-px screen: each gets under 7 px, and the rotated token labels ran into each other. Where
    they would, the page labels every k-th position and the axis title says so, as the head in detail does."""
    from urllib.parse import urlencode

    from harness.browser import lm

    phone.goto(live.url + "?" + urlencode({"tab": "lens", "model": "lm", "text": LONG_TEXT}))
    for plot in ("#lens-top", "#lens-final"):
        wait_for_figures(phone, plot)
        wait_until_idle(phone)
        try:  # the page thins the labels once the figure is drawn (a page script): wait for its title
            phone.wait_for_function("(p) => /every \\d+(st|nd|rd|th) labelled/.test((document.querySelector("
                                    "p + ' .g-xtitle') || {}).textContent || '')", arg=plot, timeout=15_000)
        except PlaywrightTimeout:
            pass  # the checks below say what is wrong
        found = phone.evaluate(CROWDED_TICKS, plot)
        assert not found["crowded"], f"{plot}: tick labels overlap: {found['crowded'][:5]}"
        title = phone.eval_on_selector(f"{plot} .g-xtitle", "e => e.textContent")
        axis, figure = rect(phone, f"{plot} .g-xtitle"), rect(phone, f"{plot} {PLOT}")
        assert axis["x"] >= figure["x"] - 1 and axis["right"] <= figure["right"] + 1, f"{title!r} is cut: {axis}"
        step = int(title.rsplit("every ", 1)[1].split()[0][:-2])
        # the Lens labels every k-th of its positions by viz.labels.labelled_positions (at most 48), not the one head's fit
        tokens = lm().encode(clean_text(LONG_TEXT)).tokens
        positions = [html.unescape(token_label(tokens[i])) for i in labelled_positions(len(tokens))]
        assert len(positions) == 48 and found["labels"] == positions[::step], (title, found["labels"])
    screenshot(phone, "phone-lens-ticks", "#lens-final")
