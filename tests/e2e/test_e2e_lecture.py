"""The lecture views in a real browser, as a lecturer would use them: every control redraws when moved by keyboard
(arrow keys, typing a number and Enter), and an empty sentence is one clear message that keeps the last
view and link. The lecture examples and the model picker: test_e2e_examples.py."""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote_plus

import pytest

from harness.browser import (DETAIL, close_toasts, error_toasts, expected_labels, message_toasts, press_analyze,
                             sentence_box, text_of, type_number, wait_for_figures, wait_for_text, wait_for_ticks,
                             wait_for_title, wait_until_idle)
from tests.e2e.conftest import screenshot

SENTENCE = "Mary gave roses to Susan because she loves her"
DATE = "Saturday, 21st of November 2026"


def open_tab(page, live, tab: str, query: str = ""):
    page.goto(f"{live.url}?tab={tab}{query}")
    wait_for_figures(page, "[role=tabpanel]")


# the beam table's rows, counted by their ISO outputs (the table draws its rows as it likes)
BEAMS_SHOWN = ("(n) => ((document.querySelector('#beam-table') || {}).innerText || '')"
               ".split('\\n').filter(line => /^\\d{4}-\\d\\d-\\d\\d$/.test(line.trim())).length === n")


def link_value(page) -> str:
    return page.locator("#view-link textarea, #view-link input").first.input_value()


# ---- keyboard ---------------------------------------------------------------------------------------
def test_temperature_follows_arrow_keys_and_a_typed_t(page, live):
    open_tab(page, live, "steps")
    assert wait_for_text(page, "#steps-caption", r"Temperature 1,")
    shown = page.locator("#temperature-value input")
    assert float(shown.input_value()) == 1.0, "the box shows T, and T = 1 in the middle"
    slider = page.locator("#temperature input[type=range]")
    slider.focus()
    for _ in range(4):  # four steps of 0.05 in log10 T: T = 10^-0.2 = 0.631
        slider.press("ArrowLeft")
    caption = wait_for_text(page, "#steps-caption", r"Temperature 0\.631,")
    assert "Temperature 0.631" in caption
    page.wait_for_function("() => document.querySelector('#temperature-value input').value === '0.631'")
    page.wait_for_function("() => /temperature=0.631/.test(document.querySelector('#view-link textarea, "
                           "#view-link input').value)")

    type_number(page, shown, "20")
    wait_for_text(page, "#steps-caption", r"Temperature 20,")
    position = float(slider.input_value())
    assert position == pytest.approx(1.3, abs=0.03), "the slider moves to log10 20"
    assert not error_toasts(page)
    screenshot(page, "steps-temperature-keyboard", "[role=tabpanel]")

    # past the range: the box shows the T drawn, and a warning says why (it kept 1000 beside a T of 100)
    type_number(page, shown, "1000")
    wait_for_text(page, "#steps-caption", r"Temperature 100,")
    page.wait_for_function("() => document.querySelector('#temperature-value input').value === '100'")
    assert any("between 0.01 and 100" in m for m in message_toasts(page))
    close_toasts(page)
    # a click on the slider right after typing: the box's blur must not pull the knob back to the typed T
    type_number(page, shown, "5")
    wait_for_text(page, "#steps-caption", r"Temperature 5,")
    box = slider.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.25, box["y"] + box["height"] / 2)
    caption = wait_for_text(page, "#steps-caption", r"Temperature 0\.\d+,")
    wait_until_idle(page)  # every answer in
    t = re.search(r"Temperature ([0-9.]+),", text_of(page, "#steps-caption")).group(1)
    assert shown.input_value() == t and float(slider.input_value()) < 0, (t, shown.input_value(), caption)


def test_decoding_step_and_beam_width_follow_the_keyboard(page, live):
    open_tab(page, live, "encoder_decoder", "&text=" + quote_plus(DATE))
    wait_for_title(page, "#step-bars", r"^Step 6: writing 1 ")
    type_number(page, page.locator("#decoding-step input[type=number]"), "10")
    title = wait_for_title(page, "#step-bars", r"^Step 10: writing ")
    assert title.startswith("Step 10: writing 1 "), title  # 2026-11-21: the tenth character is 1
    # the framed row of the cross-attention is the character being written
    row = page.evaluate("""() => { const frame = document.querySelector('#cross-heat .shapelayer path');
        return frame ? frame.getBoundingClientRect().top : null; }""")
    assert row is not None, "the step is framed"

    page.locator("#decoding-step input[type=range]").focus()
    page.locator("#decoding-step input[type=range]").press("ArrowRight")
    assert wait_for_title(page, "#step-bars", r"^Step 11: writing ").startswith("Step 11: writing </s>")

    page.wait_for_function(BEAMS_SHOWN, arg=4)
    page.locator("#beam-width input[type=range]").focus()
    page.locator("#beam-width input[type=range]").press("ArrowLeft")
    page.wait_for_function(BEAMS_SHOWN, arg=3)
    page.wait_for_function("() => /step=11.*beam=3|beam=3.*step=11/.test(document.querySelector("
                           "'#view-link textarea, #view-link input').value)")
    assert not error_toasts(page)
    # a step typed past the translation's 11 characters shows in the box as the step the figures show
    type_number(page, page.locator("#decoding-step input[type=number]"), "99")
    page.wait_for_function("() => document.querySelector('#decoding-step input[type=number]').value === '11'")
    assert wait_for_title(page, "#step-bars", r"^Step 11: writing ").startswith("Step 11: writing </s>")


def test_snapshot_and_layer_follow_the_keyboard(page, live):
    open_tab(page, live, "learning")
    summary = wait_for_text(page, "#learning-summary", r"Snapshot (\d+) of (\d+)")
    last, count = (int(n) for n in re.search(r"Snapshot (\d+) of (\d+)", summary).groups())
    assert last == count
    page.locator("#snapshot input[type=range]").focus()
    page.locator("#snapshot input[type=range]").press("ArrowLeft")
    wait_for_text(page, "#learning-summary", rf"Snapshot {count - 1} of {count}")
    type_number(page, page.locator("#snapshot input[type=number]"), "2")
    wait_for_text(page, "#learning-summary", rf"Snapshot 2 of {count}")
    # the link names the snapshot by its training step (?training_step=98), the second of lm's saved steps
    steps = sorted(int(p.stem.split("_")[1]) for p in (Path(__file__).resolve().parents[2] / "assets" / "lm" /
                                                        "snapshots").glob("step_*.safetensors"))
    page.wait_for_function("() => /training_step=%d(&|$)/.test(document.querySelector('#view-link textarea, "
                           "#view-link input').value)" % steps[1])
    page.locator("#layer input[type=range]").focus()
    page.locator("#layer input[type=range]").press("ArrowRight")
    wait_for_text(page, "#learning-summary", rf"Snapshot 2 of {count}")
    wait_for_title(page, "#learning-heat", r"^Layer 2, head ")
    assert not error_toasts(page)


def test_the_shuffle_seed_follows_the_arrow_keys(page, live):
    open_tab(page, live, "positions")
    before = wait_for_text(page, "#shuffle-summary", r"Shuffled order: ")
    box = page.locator("#shuffle-seed input")
    box.focus()
    box.press("ArrowUp")
    page.wait_for_function("(before) => document.querySelector('#shuffle-summary').innerText !== before", arg=before)
    assert box.input_value() == "1"
    page.wait_for_function("() => /seed=1/.test(document.querySelector('#view-link textarea, "
                           "#view-link input').value)")
    assert not error_toasts(page)


def test_a_long_paste_is_kept_whole_and_refused_with_the_limit(page, live):
    page.goto(live.url)
    wait_for_figures(page, DETAIL)
    long = "the cat " * 320  # 2,560 characters: over the server's 2,000
    sentence_box(page).fill(long)
    assert len(sentence_box(page).input_value()) == len(long), "the box must not cut a paste without a word"
    press_analyze(page)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=toast-text]').length > 0", timeout=60_000)
    (message,) = message_toasts(page)
    assert "2560" in message.replace(",", "") and "2000" in message.replace(",", ""), message
    wait_for_figures(page, DETAIL)  # the last view stays


def test_picking_a_tile_shows_and_marks_the_head(page, live):
    page.goto(live.url)
    wait_for_figures(page, "#all-heads")
    # the page's load draws the grid before its last views (which set the picker) arrive: pick after them
    wait_until_idle(page)
    page.locator("#tile-picker").scroll_into_view_if_needed()
    page.locator("#tile-picker input").first.click()
    page.get_by_role("option", name="L3 H1", exact=True).first.click()
    wait_for_title(page, DETAIL, r"^Layer 3, head 1")
    page.wait_for_function("() => { const r = document.querySelector('#head-detail').getBoundingClientRect();"
                           " return r.top >= -5 && r.top < window.innerHeight; }")  # scrolled into view
    page.wait_for_function("() => [...document.querySelectorAll('#all-heads .annotation-text')]"
                           ".some(e => e.textContent === '▶ L3 H1')")
    assert page.locator("#tile-picker input").first.input_value() == "L3 H1", "the picker shows the pick"
    assert page.eval_on_selector_all("#all-heads .shapelayer path", "els => els.length") >= 1, "the tile is outlined"
    assert not error_toasts(page)
    # opened and closed without a pick (Gradio sends the event anyway): the page stays where it is
    target = page.evaluate("() => { const y = Math.min(document.querySelector('#all-heads').getBoundingClientRect().top"
                           " + window.scrollY - 80, document.documentElement.scrollHeight - window.innerHeight);"
                           " window.scrollTo(0, y); return Math.round(y); }")  # the grid at the top, the detail above
    page.wait_for_function("(y) => Math.abs(window.scrollY - y) < 2", arg=target)  # the smooth scroll has ended
    before = page.evaluate("() => window.scrollY")
    assert page.evaluate("() => document.querySelector('#head-detail').getBoundingClientRect().bottom < 0")
    page.locator("#tile-picker input").first.click()
    page.wait_for_selector("[role=option]")
    page.locator("#all-heads").click(position={"x": 5, "y": 5})
    wait_until_idle(page)  # the event the closing sent has been answered
    assert page.evaluate("() => window.scrollY") == before


def test_a_link_reopens_the_tabs_own_settings(page, live):
    open_tab(page, live, "encoder_decoder", "&step=3&beam=2&text=" + quote_plus(DATE))
    assert wait_for_title(page, "#step-bars", r"^Step 3: writing ").startswith("Step 3: writing 2")
    page.wait_for_function(BEAMS_SHOWN, arg=2)
    open_tab(page, live, "steps", "&temperature=0.1")
    assert "Temperature 0.1," in wait_for_text(page, "#steps-caption", r"Temperature 0\.1,")
    assert page.locator("#temperature-value input").input_value() == "0.1"


# ---- presenter mode enlarges the layout, not only the fonts ----------------------------------------------
def overlapping_labels(page, plot: str) -> list[str]:
    """Neighbouring x tick labels of a figure that run into each other. The labels are rotated by 60°
    and start at their tick (the left of their box), so two of them are a tick distance dx apart across
    their baselines by dx · sin 60°: less than a glyph's height, and they overlap."""
    return page.evaluate("""(plot) => {
        const labels = [...document.querySelectorAll(plot + ' .xtick text')].map(e => [e.textContent,
            e.getBoundingClientRect().left, parseFloat(e.style.fontSize || getComputedStyle(e).fontSize)])
            .filter(([text]) => text).sort((a, b) => a[1] - b[1]);
        const bad = [];
        for (let i = 1; i < labels.length; i++) {
            const [a, left, size] = labels[i - 1], [b, next] = labels[i];
            if ((next - left) * Math.sin(Math.PI / 3) < 0.9 * size) bad.push(a + ' / ' + b);
        }
        return bad; }""", plot)


def hidden_labels(page, plot: str) -> list[str]:
    """Row labels cut off at the figure's left edge, and panel titles drawn over the column labels or
    axis titles (side-by-side panels: viz.panels leaves them room; with a 10-px margin every row label
    of Step by step and Masking was cut off)."""
    return page.eval_on_selector(plot, """e => {
        const svg = e.querySelector('svg.main-svg'), f = svg.getBoundingClientRect(), out = [];
        const boxes = sel => [...e.querySelectorAll(sel)].filter(t => t.getBoundingClientRect().width > 0);
        for (const t of boxes('.yaxislayer-above text'))
            if (t.getBoundingClientRect().left < f.left - 1) out.push('cut: ' + t.textContent);
        const over = (a, b) => !(a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top);
        for (const a of boxes('.annotation-text'))
            for (const b of boxes('.xaxislayer-above text, .infolayer [class*=xtitle]'))
                if (over(a.getBoundingClientRect(), b.getBoundingClientRect()))
                    out.push(a.textContent + ' over ' + b.textContent);
        return out; }""")


def test_presenter_mode_enlarges_chips_tables_boxes_and_keeps_labels_apart(browser, live):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        page.goto(f"{live.url}?presenter=1&text=" + quote_plus(SENTENCE))
        wait_for_figures(page, DETAIL)
        px = lambda selector: page.eval_on_selector(selector, "e => parseFloat(getComputedStyle(e).fontSize)")
        assert px("#tokens .token") >= 20, "token chips"
        # (the statistics table sometimes misses its first value while the page loads: redraw once)
        press_analyze(page)
        page.locator("#head-stats").scroll_into_view_if_needed()  # the table draws the rows it shows
        page.wait_for_selector("#head-stats td", state="attached", timeout=60_000)
        assert px("#head-stats td .cell-wrap, #head-stats td") >= 18, "table cells"
        page.get_by_role("tab", name="Step by step", exact=True).click()
        wait_for_figures(page, "#steps-scores")
        assert px("#scaling .label-text, #scaling label span") >= 20, "check box labels"
        assert not overlapping_labels(page, "#steps-scores"), "column labels run into each other"
        assert not hidden_labels(page, "#steps-scores"), hidden_labels(page, "#steps-scores")
        page.get_by_role("tab", name="Encoder-decoder", exact=True).click()
        wait_for_figures(page, "#cross-heat")
        title = page.eval_on_selector("#cross-heat .ytitle", "e => { const r = e.getBoundingClientRect(), "
                                      "f = e.closest('svg').getBoundingClientRect(); return [e.textContent, "
                                      "r.left >= f.left - 1 && r.top >= f.top - 1 && r.bottom <= f.bottom + 1]; }")
        assert title[1], f"the axis title {title[0]!r} is cut off"
        screenshot(page, "presenter-encoder-decoder")
    finally:
        context.close()


# ---- an empty sentence -----------------------------------------------------------------------------
def test_an_empty_sentence_is_one_message_and_the_view_and_link_stay(page, live):
    page.goto(live.url)
    wait_for_figures(page, DETAIL)
    sentence_box(page).fill(SENTENCE)
    press_analyze(page)
    wait_for_ticks(page, expected_labels(SENTENCE))
    page.wait_for_function("() => /Susan/.test(document.querySelector('#view-link textarea, #view-link input').value)")
    link = link_value(page)

    close_toasts(page)
    sentence_box(page).fill("")
    press_analyze(page)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=toast-text]').length > 0", timeout=60_000)
    wait_until_idle(page)  # every view answered: a second message, were they still asked one by one, is in
    messages = message_toasts(page)
    assert len(messages) == 1 and "empty" in messages[0].lower(), messages
    assert not error_toasts(page), "one warning, not an error"
    badges = page.eval_on_selector_all("[data-testid=status-tracker] .error, .error-badge, span.error",
                                       "els => els.filter(e => e.getBoundingClientRect().width > 0)"
                                       ".map(e => e.closest('[id]')?.id + ': ' + e.outerHTML.slice(0, 120))")
    assert not badges, f"no Error badge over the figures: {badges}"
    wait_for_ticks(page, expected_labels(SENTENCE))  # the last good view is still drawn
    assert link_value(page) == link, "the link still names the last view drawn"
    screenshot(page, "empty-sentence-keeps-the-view")


# ---- the Copying tab's word count -----------------------------------------------------------------------
def test_the_copying_tabs_word_count_follows_its_box_and_arrow_keys(page, live):
    """The slider redrew on the mouse's release only: a number typed in its box drew nothing, and arrow
    keys drew the value before the last press."""
    page.goto(live.url + "?tab=induction")
    page.wait_for_function("() => /\\(\\d+ random words/.test(document.body.innerText)", timeout=120_000)
    words = lambda: int(re.search(r"\((\d+) random words", page.inner_text("body")).group(1))  # noqa: E731
    type_number(page, page.locator("#copying-words input[type=number]").first, "30")
    page.wait_for_function("() => document.body.innerText.includes('(30 random words')", timeout=120_000)
    page.locator("#copying-words input[type=range]").first.focus()
    for _ in range(3):
        page.keyboard.press("ArrowLeft")
    page.wait_for_function("() => document.body.innerText.includes('(27 random words')", timeout=120_000)
    wait_until_idle(page)  # every answer in: nothing later draws an earlier value over it
    assert words() == 27 == int(page.input_value("#copying-words input[type=number]"))
