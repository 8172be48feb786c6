"""The logit lens, What flows, Queries & keys and sampling drawn in a real browser, opened by deep links, for
every model each applies to; a model without the needed part says so on the page."""
from __future__ import annotations

from urllib.parse import urlencode

import pytest

from harness.browser import WAIT_MS, error_toasts, press_analyze, sentence_box, wait_for_figures, wait_until_idle
from tests.e2e.conftest import screenshot

TEXTS = {"lm": "not able to", "mlm": "the United <mask> of America", "dates": "3 March 1999",
         "minilm": "The animal didn't cross the street because it was too tired.",
         "classifier": "a large grey animal with a long trunk"}
# the logit lens has its tab; What flows is a section of Interventions, Queries & keys one of Step by step
VIEWS = {"lens": "#lens-top", "interventions": "#flow-head", "steps": "#qk-space"}
NO_LENS = ("minilm", "classifier")  # an encoder, and a classifier: no next-token head to read the layers with


def open_view(page, live, tab: str, model: str, **extra) -> None:
    query = {"text": TEXTS[model], "model": model, "tab": tab, "layer": 1, "head": 2, **extra}
    page.goto(live.url + "?" + urlencode(query))
    page.wait_for_load_state("load")


def open_tab(page, tab: str) -> None:
    """Open a tab by its button: its views are computed for what the page already shows."""
    page.locator(f"[role=tab][data-tab-id={tab}]").click()
    page.wait_for_function("(id) => document.querySelector(`[role=tab][data-tab-id=${id}]`)"
                           ".getAttribute('aria-selected') === 'true'", arg=tab)


@pytest.mark.parametrize("model", list(TEXTS))
def test_each_view_is_drawn_for_each_model_it_applies_to(page, live, model):
    """The model's link opens the first view; the others are the tabs' buttons on the same page (a page load is
    seconds of Chromium's CPU). A model without a lens says why on the Lens tab."""
    tabs = [tab for tab in VIEWS if not (tab == "lens" and model in NO_LENS)]
    open_view(page, live, tabs[0], model)
    for n, tab in enumerate(tabs):
        if n:
            open_tab(page, tab)
        drawn = wait_for_figures(page, VIEWS[tab])
        assert all(f["svg"] and f["marks"] for f in drawn if f["visible"]), (tab, drawn)
        assert not error_toasts(page), (tab, error_toasts(page))
        screenshot(page, f"{tab}-{model}", "[role=tabpanel]")
    if model in NO_LENS:
        open_tab(page, "lens")
        page.wait_for_function("(m) => (document.querySelector('#lens-summary') || {}).innerText"
                               "?.includes('No logit lens for ' + m)", arg=model)
        assert not error_toasts(page)


def test_the_flow_view_states_the_minilm_sink_numbers(page, live):
    open_view(page, live, "interventions", "minilm", layer=3, head=2)
    wait_for_figures(page, "#flow-sinks")
    # the numbers come in the same answer as the figure, but a component may be drawn a frame later: wait for them
    page.wait_for_function("() => (document.querySelector('#flow-numbers') || {}).innerText?.includes('of the 72 heads')")
    text = page.locator("#flow-numbers").inner_text()
    assert "34 of the 72 heads" in text and "0.66 of their weight but 0.17 of what they move" in text


def test_sampling_in_the_predictions_panel(page, live):
    open_view(page, live, "attention", "lm")
    page.locator("#sampling").get_by_text("Sampling: temperature, top-k, top-p").click()
    drawn = wait_for_figures(page, "#sample-distribution")
    assert drawn and all(f["marks"] for f in drawn)
    page.wait_for_function("() => (document.querySelector('#sample-text') || {}).innerText?.includes('Seeded sample')")
    assert not error_toasts(page)
    screenshot(page, "sampling-lm", "#sampling")


def test_quiz_mode_hides_the_lens_until_it_is_unticked(page, live):
    open_view(page, live, "lens", "lm", quiz=1)
    page.wait_for_function("() => (document.querySelector('#lens-summary') || {}).innerText?.includes('Quiz.')")
    assert "▁be" not in page.locator("#lens-top").inner_text()
    page.locator("#quiz input[type=checkbox]").uncheck()
    wait_for_figures(page, "#lens-top")
    page.wait_for_function("() => (document.querySelector('#lens-summary') || {}).innerText?.includes('from layer 2')")


def test_a_link_with_sampling_settings_opens_the_panel_with_them(page, live):
    """The settings come back into the panel's controls, the panel opens, the sample is drawn with them, and a
    value that is no number is named (its default shown); the link box writes them again."""
    open_view(page, live, "attention", "lm", sample_temperature=0.5, sample_top_k=5, sample_top_p=0.9,
              sample_seed=7, sample_tokens="many")
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=toast-text]')]"
                           ".some(e => e.innerText.includes(\"sample_tokens 'many' is not a number; showing 12\"))")
    page.wait_for_function("() => (document.querySelector('#sample-text') || {}).innerText"
                           "?.includes('Seeded sample (T = 0.5, top-k = 5, top-p = 0.9, seed 7)')")
    drawn = wait_for_figures(page, "#sample-distribution")
    assert drawn and all(f["marks"] for f in drawn)
    values = {name: page.locator(f"#sample-{name} input").first.input_value()
              for name in ("temperature", "top-k", "top-p", "seed", "tokens")}
    assert values == {"temperature": "0.5", "top-k": "5", "top-p": "0.9", "seed": "7", "tokens": "12"}, values
    page.wait_for_function("() => ['sample_temperature=0.5', 'sample_top_k=5', 'sample_top_p=0.9', 'sample_seed=7']"
                           ".every(p => document.querySelector('#view-link textarea, #view-link input').value"
                           ".includes(p))")
    assert "sample_tokens" not in page.locator("#view-link textarea, #view-link input").first.input_value()
    assert not error_toasts(page)
    screenshot(page, "sampling-from-link", "#sampling")


# (tab, model, the view's text, its Reveal button, a phrase of the question, a phrase only the answer has, a figure)
REVEALS = [("lens", "lm", "#lens-summary", "#lens-reveal", "from which of the", "from layer 2", "#lens-top"),
           ("interventions", "minilm", "#flow-numbers", "#flow-reveal", "Does that key also bring", "of what it moves",
            "#flow-sinks"),
           ("steps", "lm", "#qk-numbers", "#qk-reveal", "Which key will it weight most", "highest: q·k", "#qk-space"),
           ("attention", "lm", "#sample-text", "#sample-reveal", "how many tokens can still be drawn",
            "Seeded sample (T = 0.5", "#sample-distribution")]


@pytest.mark.parametrize("tab, model, text, button, question, answer, figure", REVEALS,
                         ids=[r[3].strip("#") for r in REVEALS])
def test_quiz_mode_asks_and_reveal_answers(page, live, tab, model, text, button, question, answer, figure):
    """A link in quiz mode opens the view with its question and no answer; Reveal draws it in full, quiz mode
    staying on; unticking quiz mode takes the button away."""
    open_view(page, live, tab, model, quiz=1, sample_temperature=0.5)  # (the sampling panel opens)
    page.wait_for_function("([s, q]) => (document.querySelector(s) || {}).innerText?.includes(q)",
                           arg=[text, question])
    assert answer not in page.locator(text).inner_text()
    if tab == "steps":  # the head's scores and weights above Queries & keys would answer it
        page.wait_for_selector("#steps-quiz-hidden", state="visible")
        assert not page.is_visible("#steps-scores")
    screenshot(page, f"quiz-asked-{button.strip('#')}", "[role=tabpanel]")
    page.locator(button).click()
    page.wait_for_function("([s, a]) => (document.querySelector(s) || {}).innerText?.includes(a)", arg=[text, answer])
    drawn = wait_for_figures(page, figure)
    assert drawn and all(f["marks"] for f in drawn if f["visible"]), drawn
    assert page.locator("#quiz input[type=checkbox]").is_checked()
    assert not error_toasts(page)
    screenshot(page, f"quiz-revealed-{button.strip('#')}", "[role=tabpanel]")
    page.locator("#quiz input[type=checkbox]").uncheck()
    page.wait_for_selector(button, state="hidden")
    if tab == "steps":
        page.wait_for_selector("#steps-scores", state="visible")


# Records, from the moment it runs, the order in which the figures named are given new data to draw (Plotly.react
# with data other than what the figure shows: a view that only lays itself out again is not redrawn), and in which
# of the page's tasks. Two answers that arrive together are drawn in one task, in the page's order from the top
# (Svelte updates components in document order), in the same moment for the eye: a run under load drew "explain"
# before "flow-head" that way, though the server sent them the other way round. What the product orders is which
# task draws first.
RECORD_DRAWS_JS = """(ids) => {
    window.drawnOrder = [];
    const before = Object.fromEntries(ids.map(id => [id, (document.querySelector('#' + id + ' .js-plotly-plot') || {}).data]));
    const plotly = window.Plotly, react = plotly.react;
    let task = 0, open = false;
    plotly.react = function (div, data, ...rest) {
        if (!open) { open = true; task += 1; setTimeout(() => { open = false; }); }
        const owner = div && div.closest && div.closest(ids.map(id => '#' + id).join(','));
        const given = data && !Array.isArray(data) ? data.data : data;
        if (owner && given && given !== before[owner.id] && !window.drawnOrder.some(([id]) => id === owner.id))
            window.drawnOrder.push([owner.id, task]);
        return react.call(this, div, data, ...rest);
    };
}"""


def test_an_open_section_draws_before_the_views_above_it(page, live):
    """A lecturer who scrolled down to What flows and presses the button sees it drawn first after the tab's main
    figure, not behind the explanations above it (in registration order it came last, seconds later)."""
    open_view(page, live, "interventions", "minilm", presenter=1)
    wait_for_figures(page, "#flow-head")
    wait_for_figures(page, "#explain")
    wait_until_idle(page)
    page.evaluate(RECORD_DRAWS_JS, ["importance", "explain", "flow-head"])
    sentence_box(page).fill("The cat sat on the warm mat because it was tired.")
    press_analyze(page)
    page.wait_for_function("() => window.drawnOrder.length === 3", timeout=WAIT_MS)
    wait_until_idle(page)
    drawn = dict(page.evaluate("() => window.drawnOrder"))
    assert drawn["importance"] <= drawn["flow-head"] <= drawn["explain"], drawn  # the tasks that drew them
    assert not error_toasts(page)
