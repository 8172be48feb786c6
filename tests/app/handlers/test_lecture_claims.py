"""As a lecturer would check it: explanations that say the right thing, views that show what
they claim, controls that a link keeps. On the shipped models (measured here, never pinned: the lm is
retrained from time to time)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from analysis import head_stats as stats
from model.sizes import head_sizes
from tests import tolerances
from ui.tabs import attention, predictions, encoder_decoder, masking, multihead, positions, steps
from ui.page.links import ViewSettings, make_link, parse_query
from ui.page.labels import head_choices
from ui.page.messages import InputError
from viz import multihead as viz_multihead
from viz.labels import token_label

SENTENCE = "Mary gave roses to Susan because she loves her"
DATE = "Saturday, 21st of November 2026"


# ---- explanations -------------------------------------------------------------------------------
def test_explanations_say_what_is_true():
    text = " ".join(positions.EXPLANATION.split())
    assert "*score* q·k depends only on the two vectors" in text and "every other key" in text
    why = " ".join(steps.EXPLANATION.split())
    assert "variance grows with d" in why and "number of dimensions" in why
    dates = " ".join(encoder_decoder.EXPLANATION.split())
    assert "with a year from 1900 to 2099" in dates
    assert "same* lm twice" in masking.EXPLANATION


def test_the_dates_tab_says_when_a_date_has_no_year(registry):
    head = encoder_decoder.opening_head(registry)
    without = encoder_decoder.view(registry, "June 12", head, 6, False)[0]
    assert "has no year" in without and "guess" in without
    assert "has no year" not in encoder_decoder.view(registry, DATE, head, 6, False)[0]


def test_step_by_step_and_head_statistics_give_one_entropy(registry):
    caption = steps.view(registry, SENTENCE, "lm", 1, 2, None, False)[0]
    shown = float(re.search(r"Mean entropy ([0-9.]+) bits", caption).group(1))
    table = pd.DataFrame(attention.stats_table(registry, "lm", SENTENCE, "self")).set_index("head")
    # shown to 2 places, the table to 3 (half of 0.01 and of 0.001), and the two computations' own bound
    computed = tolerances.mean_entropy_bits(registry.attention("lm", SENTENCE, "self"), 0, 1)
    assert abs(shown - table.loc["L1 H2", "entropy_bits"]) <= 0.005 + 0.0005 + computed + 2 * tolerances.EPS64 * shown


@pytest.mark.parametrize("name", ["lm", "dates"])
def test_multi_head_text_and_table_give_one_ratio(registry, name):
    sizes = head_sizes(registry.get(name).config, registry.get(name).model)
    ratio = re.search(r"([0-9.]+)× as many", multihead.sizes_text(sizes, name)).group(1)
    assert f"{ratio}×" == viz_multihead.sizes_table(sizes).loc[1, "vs one full-size head"]


# ---- masking: the same weights with and without the mask; models compared by measured head type -----
def test_masking_with_minilms_head_numbers_shows_lms_last_and_says_so(registry):
    """The sliders follow the chosen model (minilm: 6 layers of 12 heads); the tab always compares lm and
    mlm. Head 10 used to be refused with "This model has 4 heads", which read as if it were about minilm."""
    layers, heads = registry.shape("lm", "self")
    effect = masking.view(registry, SENTENCE, 1, 10, False)[1]
    assert f"layer 1, head {heads} (lm has {layers} layers of {heads} heads)" in effect.layout.title.text
    assert "lm has" not in masking.view(registry, SENTENCE, 1, heads, False)[1].layout.title.text
    with pytest.raises(InputError, match="head"):  # not a number: the usual message
        masking.view(registry, SENTENCE, 1, "ten", False)


def test_masking_shows_the_mask_on_the_same_weights(registry):
    _, effect, _, _ = masking.view(registry, SENTENCE, 1, 2, False)
    scores_off, probs_off, scores_on, probs_on = (np.asarray(trace.z, np.float64) for trace in effect.data)
    t = scores_off.shape[0]
    below = np.tril_indices(t)
    # layer 1 reads the same inputs in both runs: the scores are the same, only the softmax differs
    np.testing.assert_array_equal(scores_on[below], scores_off[below])  # the same float32 q·k of the same q and k
    assert np.isnan(scores_on[np.triu_indices(t, 1)]).all() and not np.isnan(scores_off).any()
    assert probs_off[np.triu_indices(t, 1)].sum() > 0.01 and (probs_on[np.triu_indices(t, 1)] == 0).all()  # exp(-inf)
    # float32 softmax rows: their sum's t roundings and the division's (half of weights_sum: summed here in float64)
    np.testing.assert_allclose(probs_off.sum(-1), 1, rtol=0, atol=tolerances.weights_sum(t) / 2 + t * tolerances.EPS64)


@pytest.mark.parametrize("pattern", list(masking.PATTERNS))
def test_masking_compares_the_heads_that_do_the_same_thing(registry, pattern):
    _, _, types, matched = masking.view(registry, SENTENCE, 1, 1, False, pattern)
    for panel, name in zip(matched.layout.annotations[:2], ("lm", "mlm")):
        att = registry.attention(name, SENTENCE, "self")
        frame = stats.head_stats(att.probs, att.mask, aligned=True)
        best = frame.loc[frame[pattern].idxmax()]
        assert panel.text.startswith(f"{name} {best['head']}: {best[pattern]:.2f}"), panel.text
        for head, label in zip(frame["head"], frame["label"]):  # every head listed under its measured type
            assert head in types.set_index("head type (measured)").loc[label, name]


# ---- encoder-decoder ------------------------------------------------------------------------------
@pytest.mark.parametrize("step", range(1, 12))
def test_the_framed_row_is_the_character_being_written(registry, step):
    head = encoder_decoder.opening_head(registry)
    heat, bars = encoder_decoder.step_view(registry, DATE, head, step, False)
    frame = heat.layout.shapes[0]
    row = int(round((frame.y0 + frame.y1) / 2))
    written = heat.layout.yaxis.ticktext[row]
    assert f"writing {written} —" in bars.layout.title.text, (written, bars.layout.title.text)
    expected = ("2026-11-21" + "\0")[row]
    assert written == (expected if expected != "\0" else "&lt;/s&gt;")


def test_the_summary_names_only_the_head_on_screen(registry):
    for head in ("L1 H1", encoder_decoder.opening_head(registry)):
        summary = encoder_decoder.view(registry, DATE, head, 6, False)[0]
        assert set(re.findall(r"L\d H\d", summary)) == {head}, summary


def test_self_attention_panels_have_their_own_heads(registry):
    cross_head = encoder_decoder.opening_head(registry)
    _, _, _, enc, dec, _ = encoder_decoder.view(registry, DATE, cross_head, 6, False, "L1 H4", "L2 H1")
    assert "layer 1, head 4" in enc.layout.title.text and "layer 2, head 1" in dec.layout.title.text
    encoder = registry.attention("dates", DATE, "encoder").probs
    np.testing.assert_array_equal(np.asarray(enc.data[0].z), encoder[0, 3])  # the trace's weights, drawn as they are


# ---- controls and links ---------------------------------------------------------------------------
def test_the_temperature_box_shows_t_and_takes_a_typed_t():
    assert steps.shown_temperature(0) == 1 and steps.shown_temperature(-2) == 0.01
    assert steps.shown_temperature(-0.5) == 0.316 and steps.shown_temperature(2) == 100
    assert steps.slider_from_temperature(0.1) == pytest.approx(-1)
    assert steps.slider_from_temperature(1e9) == 2 and steps.slider_from_temperature(0.0001) == -2
    assert steps.slider_from_temperature(None) == 0 and steps.slider_from_temperature("x") == 0


def test_links_keep_the_tabs_own_settings(registry):
    settings = ViewSettings("The cat", "dates", 2, 3, "cross", False, "encoder_decoder", temperature=0.316, step=9,
                            beam=7, snapshot=3, seed=12)
    link = make_link(settings)
    for part in ("temperature=0.316", "step=9", "beam=7", "snapshot=3", "seed=12"):
        assert part in link
    from urllib.parse import parse_qsl, urlsplit

    parsed, notes = parse_query(dict(parse_qsl(urlsplit(link).query)), registry, ViewSettings("x", "lm"))
    assert parsed == settings and notes == []
    plain = make_link(ViewSettings("The cat", "lm"))
    assert not any(f"{k}=" in plain for k in ("temperature", "step", "beam", "snapshot", "seed")), plain
    odd, notes = parse_query({"temperature": "1e9", "beam": "99", "seed": "nan"}, registry, ViewSettings("x", "lm"))
    assert (odd.temperature, odd.beam, odd.seed) == (100.0, 8, 0) and len(notes) == 3


# ---- predictions --------------------------------------------------------------------------------
def test_the_greedy_continuation_shows_the_continuation_only(registry):
    shown = predictions.predictions(registry, "lm", SENTENCE)
    continuation = registry.get("lm").generate(SENTENCE, predictions.GENERATE_TOKENS)
    line = shown.split("**Greedy continuation")[1]
    assert "Susan" not in line, "the input is on screen already"
    assert ("none" in line and "&lt;/s&gt;" in line) if not continuation.strip() else continuation.strip() in line
    assert "∅" not in shown


def test_byte_tokens_are_explained_where_they_appear(registry):
    assert "<0xF0>" in predictions.token_notes(registry.trace("lm", "I love 🤗"))
    assert predictions.token_notes(registry.trace("lm", SENTENCE)) == ""


def test_a_continuation_that_ends_inside_a_character_says_what_its_byte_token_is():
    shown = predictions.continuation_text(" of clothing<0x93>")
    assert "clothing&lt;0x93&gt;" in shown and predictions.UNFINISHED_NOTE in shown
    assert predictions.UNFINISHED_NOTE not in predictions.continuation_text(" of clothing")


# ---- the all-heads grid and the multi-head figure -------------------------------------------------
def test_the_grid_outlines_the_head_in_detail_and_names_tokens_on_hover(registry):
    grid, shown = attention.grid_view(registry, SENTENCE, "lm", 2, 3)
    assert shown == "L2 H3" and "L2 H3" in head_choices(registry, "lm")
    (outline,) = grid.layout.shapes
    marked = [a.text for a in grid.layout.annotations if "▶" in a.text]
    assert marked == ["<b>▶ L2 H3</b>"]
    tokens = registry.attention("lm", SENTENCE).queries
    hover = hover_strings(grid)
    assert all(any(token_label(token) in h for h in hover) for token in tokens), "the hover names every token"
    with pytest.raises(InputError, match="4 layers"):  # not a head of this model: said, not drawn unmarked
        attention.grid_view(registry, SENTENCE, "lm", 9, 9)


def hover_strings(figure) -> list[str]:
    """What the hover can show: the per-cell text, or the names of the rows and columns."""
    trace = figure.data[0]
    cells = [str(c) for row in (trace.text if trace.text is not None else []) for c in row if c]
    return cells + [str(v) for v in (trace.x if trace.x is not None else []) if isinstance(v, str)] + \
        [str(v) for v in (trace.y if trace.y is not None else []) if isinstance(v, str)]


def test_the_multi_head_figure_names_tokens_on_hover(registry):
    figure = multihead.view(registry, SENTENCE, "lm", 1, None, False)[0]
    tokens = registry.attention("lm", SENTENCE).queries
    hover = hover_strings(figure)
    assert all(any(token_label(token) in h for h in hover) for token in tokens), "the hover names every token"


def test_a_links_layer_or_head_that_is_no_number_is_called_that(registry):
    settings, notes = parse_query({"head": "abc", "layer": "9"}, registry, ViewSettings("x", "lm"))
    assert (settings.layer, settings.head) == (4, 1)
    assert "head 'abc' is not a number; showing head 1" in notes
    assert "layer '9' is out of range; showing layer 4" in notes
