"""What the newest views say agrees with their own numbers (issue 40): the Lens quiz and its Reveal, the
greedy continuation and Sampling at T = 0, Multi-head's sizes on a grouped-query model, text cut at the
context, the figures' text alternatives. Called on the registry, as the handlers are."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ui.tabs import lens, predictions
from model.registry import ModelRegistry


@pytest.fixture(scope="module")
def registry():
    return ModelRegistry.load(names=("lm", "mlm", "minilm"), device="cpu", extra={})


def test_lens_reveal_answers_the_quiz_and_never_calls_a_change_still(registry):
    text = "It is a good idea to"  # lm's top tokens at "to": ient, the, be, the: on top after 2, settled from 4
    found = lens.reading(registry, "lm", text)
    i = lens.asked_position(registry, "lm", found)
    tops = [found.top_tokens[layer][i] for layer in range(found.n_layers)]
    settle = int(found.settled()[i])
    first = lens.first_on_top(found, i)
    assert tops[first] == tops[-1] and tops[:first].count(tops[-1]) == 0
    assert first < settle  # the case the quiz and reveal disagreed on
    question = lens.view(registry, text, "lm", quiz=True)[0]
    assert "first become" not in question and "after every layer" in question  # the question the outline answers
    told, top, _ = lens.view(registry, text, "lm")
    assert "still" not in told
    assert f"first becomes the top token after layer {first + 1}" in told
    assert f"from layer {settle + 1} on it is **{tops[-1]}** for good" in told
    rect = top.layout.shapes[0]
    assert (rect.y0 + rect.y1) / 2 == settle  # the outline is the layer the question asks for


def test_lens_summary_where_the_answer_appears_once_and_stays(registry):
    found = lens.reading(registry, "lm", "not able to")
    i = lens.asked_position(registry, "lm", found)
    assert lens.first_on_top(found, i) == int(found.settled()[i]) == 1
    told = lens.summary(registry, "lm", found)
    assert "No layer below layer 2 puts it on top" in told and "from layer 2 on it is **▁be**" in told


def test_greedy_continuation_says_what_it_bans_and_sampling_at_zero_is_plain_greedy(registry):
    from ui.tabs import attention, sampling as ui_sampling
    text = "the act of"
    lm = registry.get("lm")
    banned = lm.generate(text, predictions.GENERATE_TOKENS, no_repeat_ngram=3)
    plain = lm.generate(text, 8, no_repeat_ngram=0)
    assert not plain.startswith(banned[:len(plain)])  # the case a lecturer met: the two part
    shown = predictions.predictions(registry, "lm", text)
    assert "does not repeat a run of 3 tokens" in shown and "without the ban" in shown
    _, sample = ui_sampling.view(registry, text, "lm", 0.0, 0, 1.0, 0, 8)
    assert plain.strip() in sample.replace("\\", "") and "plain greedy decoding" in sample
    _, warm = ui_sampling.view(registry, text, "lm", 0.7, 0, 1.0, 0, 8)
    assert "plain greedy" not in warm


LONG = ("The cat sat on the mat and looked at the dog. " * 43)[:1990]  # under 2,000 characters, over 256 lm tokens


def test_every_new_view_says_when_the_text_was_cut(registry):
    from ui.tabs import flow, positions, qk, sampling as ui_sampling
    assert registry.trace("lm", LONG).truncated
    said = [lens.view(registry, LONG, "lm")[0], lens.view(registry, LONG, "lm", quiz=True)[0],
            flow.view(registry, LONG, "lm", 1, 1)[0], flow.view(registry, LONG, "lm", 1, 1, quiz=True)[0],
            qk.view(registry, LONG, "lm", 1, 1)[0], qk.view(registry, LONG, "lm", 1, 1, quiz=True)[0],
            positions.rotary_view(registry, LONG, "lm", 1, False)[0]]
    for text in said:
        assert text.startswith("⚠️ The text is longer than lm's context: the model reads only its first 256 tokens")
    short = [lens.view(registry, "not able to", "lm")[0], flow.view(registry, "not able to", "lm", 1, 1)[0]]
    assert not any("⚠️" in text for text in short)
    figure, sample = ui_sampling.view(registry, LONG, "lm", 1.0, 0, 1.0, 0, 8)
    assert sample.startswith("**Nothing to sample.**") and "drawn" not in sample.replace("be drawn", "")


def test_every_view_keeps_one_character_limit_per_model(registry):
    from ui.tabs import positions, sampling as ui_sampling
    from ui.page.messages import InputError
    limit = registry.max_chars("lm")
    too_long = "a " * (limit // 2) + "b"
    assert len(too_long) == limit + 1
    for call in (lambda: ui_sampling.view(registry, too_long, "lm"),
                 lambda: positions.rotary_view(registry, too_long, "lm", 1, False),
                 lambda: lens.view(registry, too_long, "lm"),
                 lambda: positions.shuffle_view(registry, too_long, "lm", 1, 0, False)):
        with pytest.raises(InputError, match=f"reads at most {limit}\\. "):
            call()


def test_what_flows_quiz_draws_no_map_for_what_is_hidden(registry):
    from ui.tabs import flow
    question, head, _, _ = flow.view(registry, "The cat sat on the mat", "minilm", 3, 2, quiz=True)
    assert len(head.data) == 1 and "hidden until Reveal" in head.layout.title.text
    assert question.startswith("**Quiz.**")


def test_rotary_counts_positions_from_one_and_asks_the_last_word_not_an_added_token(registry):
    from ui.tabs import positions
    from viz import qk as viz_qk, rotary as viz_rotary
    text = "The cat sat on the mat"
    tokens = registry.trace("lm", text).tokens
    lens_says = lens.summary(registry, "lm", lens.reading(registry, "lm", text))
    assert f"(position {len(tokens)})" in lens_says
    summary, turned, _, _ = positions.rotary_view(registry, text, "lm", 1, False)
    assert f"(position {len(tokens)}, turned by m = {len(tokens) - 1} steps" in summary  # the same token, the same number
    assert turned.layout.annotations[0].text.startswith(f"positions {len(tokens)} and ")
    minilm = registry.trace("minilm", text).tokens
    assert minilm[-1] == "[SEP]"
    said = positions.rotary_view(registry, text, "minilm", 1, False)[0]
    assert "*mat*" in said and f"(position {len(minilm) - 1}," in said  # What flows and Queries & keys ask "mat" too
    assert (viz_rotary.QUERY_COLOR, viz_rotary.KEY_COLOR) == (viz_qk.QUERY_COLOR, viz_qk.KEY_COLOR)


def test_what_flows_on_a_long_input_pools_what_cannot_be_seen_and_keeps_its_numbers(registry):
    """minilm at ~480 tokens: the maps are max-pooled to at most 64 × 64 cells and say so (each figure was 8.5 MB
    of hover strings); the numbers quoted are the full-resolution ones."""
    from ui.tabs import flow
    from analysis import flow as analysis_flow
    from viz.heatmap import TILE_CELLS
    text = " ".join(("the cat sat on a mat and looked at the dog while it slept by the fire " * 40).split()[:480])
    told, head, sinks, roll = flow.view(registry, text, "minilm", 3, 2)
    att = registry.detailed("minilm", text).attention["self"]
    assert att.probs.shape[-1] > 4 * TILE_CELLS
    for figure in (head, roll):
        assert all(max(np.shape(trace.z)) <= TILE_CELLS for trace in figure.data)
        assert "max pooling" in figure.layout.title.text
        assert len(figure.to_json()) < 1_000_000
    block = -(-att.probs.shape[-1] // TILE_CELLS)
    # the pooled cell is the largest float32 weight of its block, as it is (a max rounds nothing)
    assert np.asarray(head.data[0].z)[0, 0] == att.probs[2, 1, :block, :block].max()
    shares = analysis_flow.head_shares(att, 2, 1)
    row = att.probs.shape[-2] - 2  # the last word (the [SEP] after it is the model's)
    best = int(att.probs[2, 1, row].argmax())
    assert f"({att.probs[2, 1, row, best]:.2f} of its weight, {shares[row, best]:.2f} of what it moves)" in told
    short = flow.view(registry, "The cat sat on the mat", "minilm", 3, 2)[1]
    assert "max pooling" not in short.layout.title.text


def test_the_lens_on_a_long_input_draws_and_names_its_last_window(registry):
    """A 200-token text: the Lens reads positions 73-200, says so beside the figure and in its text alternative, and
    every position number it writes is the one the figure's axis draws it at."""
    text = " ".join(("the cat sat on the mat and " * 30).split()[:199])
    tokens = registry.trace("lm", text).tokens
    assert len(tokens) == 200
    window = "A long input: the Lens reads the last 128 of its 200 positions (positions 73–200)"
    told, top, final = lens.view(registry, text, "lm")
    assert told.startswith(window + "; shorten the text to see earlier ones.\n\n")
    assert "(position 200)" in told
    for figure in (top, final):
        heat = figure.data[0]
        assert list(heat.x) == list(range(72, 200))  # true 0-based positions: drawn as 73..200
        assert figure.layout.xaxis.title.text.startswith("positions 73–200 of 200")
        assert window in figure.layout.meta["alt"] and "(position 200)" in figure.layout.meta["alt"]
        assert "position 200, after" in heat.text[-1][-1]
        mark = figure.layout.shapes[0]
        assert (mark.x0 + mark.x1) / 2 == 199  # the outlined cell is the last position's column
        assert min(figure.layout.xaxis.tickvals) >= 72
    question = lens.view(registry, text, "lm", quiz=True)[0]
    assert question.startswith(window) and "(position 200)" in question
    short = lens.view(registry, "not able to", "lm")
    assert "A long input" not in short[0] and "A long input" not in short[1].layout.meta["alt"]
    assert list(short[1].data[0].x) == [0, 1, 2, 3][:len(short[1].data[0].x)]
