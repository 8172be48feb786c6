"""The logit lens, value-weighted, query-key and sampling figures: labels escaped, the data they are given drawn,
and the quiz forms leaving the answer out."""
from __future__ import annotations

import json

import numpy as np
import pytest

from viz import describe
from viz import flow as viz_flow
from viz import lens as viz_lens
from viz import qk as viz_qk
from viz import sampling as viz_sampling


def as_json(fig) -> dict:
    return json.loads(fig.to_json())


def test_lens_writes_each_cells_top_token_escaped_and_layer_one_at_the_bottom():
    z = np.array([[0.1, 0.2], [0.7, 0.9]])
    fig = viz_lens.lens_heatmap(z, [["<s>", "a"], ["b", "</b>"]], ["<s>", "x"], mark=(1, 1))
    data = as_json(fig)["data"]
    assert data[1]["text"] == ["&lt;s&gt;", "a", "b", "&lt;/b&gt;"]  # row by row, layer 1 first
    assert data[1]["textfont"]["color"] == ["black", "black", "white", "white"]  # light text on dark cells
    assert as_json(fig)["layout"]["yaxis"]["ticktext"] == ["layer 1", "layer 2"]  # y=0 is layer 1: at the bottom
    numbers = viz_lens.lens_heatmap(z, [["a", "b"], ["c", "d"]], ["p", "q"], numbers=True)
    assert as_json(numbers)["data"][1]["text"] == ["0.10", "0.20", "0.70", "0.90"]
    with pytest.raises(ValueError):
        viz_lens.lens_heatmap(z, [["a"], ["b"]], ["p", "q"])


def test_a_long_text_names_its_cells_in_the_hover_only():
    t = viz_lens.CELL_TEXT_MAX + 1
    fig = viz_lens.lens_heatmap(np.zeros((2, t)), [["w"] * t] * 2, ["w"] * t)
    assert len(as_json(fig)["data"]) == 1


def test_the_lens_draws_white_lines_between_cells_only_where_a_phone_leaves_them_room():
    """A 1-px line between cells narrower than 6 px hides them (a phone drew a blank Lens at 120 positions)."""
    def gap(t):
        return as_json(viz_lens.lens_heatmap(np.zeros((2, t)), [["w"] * t] * 2, ["w"] * t))["data"][0]["xgap"]
    assert gap(viz_lens.PHONE_PLOT_PX // 6) == 1 and gap(viz_lens.PHONE_PLOT_PX // 6 + 1) == 0 and gap(120) == 0


def test_the_lens_labels_every_position_the_page_may_thin_and_a_long_text_every_kth():
    """Up to 64 positions every one is labelled, and the page script (ui/page/accessibility.py) may label every k-th
    where they would overlap, naming the axis by meta.thin_x; past 64 the figure comes labelled every k-th."""
    fig = as_json(viz_lens.lens_heatmap(np.zeros((2, 48)), [["w"] * 48] * 2, [f"t{i}" for i in range(48)]))
    assert fig["layout"]["xaxis"]["tickvals"] == list(range(48)) and fig["layout"]["meta"]["thin_x"] == "position"
    assert fig["layout"]["xaxis"]["title"]["text"] == "position (the token it has just read)"
    long = as_json(viz_lens.lens_heatmap(np.zeros((2, 100)), [["w"] * 100] * 2, [f"t{i}" for i in range(100)]))
    assert long["layout"]["xaxis"]["tickvals"] == list(range(0, 100, 2))
    assert long["layout"]["xaxis"]["title"]["text"].endswith(", every 2nd labelled")  # was "2th"


def test_a_long_inputs_window_sits_at_its_true_positions_and_says_which():
    """The lens of a 512-token input's last 128 positions (first=384): columns, labels, outline and hover at the true
    positions 385-512 (counted from 1 in words), the axis and the text alternative naming the window."""
    t, first = 128, 384
    z = np.zeros((2, t))
    drawn = viz_lens.lens_heatmap(z, [["w"] * t] * 2, [f"t{i}" for i in range(first, first + t)], first=first,
                                  title="Lens", mark=(1, t - 1), alternatives=[[["a"]] * t] * 2, alt_probs=np.zeros((2, t, 1)))
    assert list(drawn.data[0].x) == list(range(first, first + t))
    fig = as_json(drawn)
    heat, layout = fig["data"][0], fig["layout"]
    assert layout["xaxis"]["tickvals"] == list(range(first, first + t, 2))
    assert layout["xaxis"]["ticktext"][:2] == ["t384", "t386"]  # each label at its own token's column
    assert layout["xaxis"]["title"]["text"] == "positions 385–512 of 512, every 2nd labelled"
    assert layout["meta"]["thin_x"] == "positions 385–512"
    assert (layout["shapes"][0]["x0"] + layout["shapes"][0]["x1"]) / 2 == 511
    assert heat["text"][0][0].startswith("layer 1 · position 385, after t384")
    assert layout["meta"]["alt"].startswith(
        "Lens. A long input: the Lens reads the last 128 of its 512 positions (positions 385–512); shorten the text to see "
        "earlier ones. 2 layers by 128 positions. After “t511” (position 512)")
    assert viz_lens.window_sentence(0, 48, 48) == ""


def test_flow_figures_put_weight_and_norm_side_by_side():
    probs = np.array([[1.0, 0.0], [0.5, 0.5]])
    fig = viz_flow.head_figure(probs, np.array([[1.0, 0.0], [0.2, 0.8]]), ["a", "b"], ["a", "b"],
                               mask=np.array([[True, False], [True, True]]))
    left, right = as_json(fig)["data"]
    assert left["name"].startswith("weight α") and right["name"].startswith("share of")
    sinks = viz_flow.sink_figure(np.array([[0.9, 0.1]]), np.array([[0.2, 0.1]]), "[CLS]/[SEP]", selected=(0, 0))
    assert as_json(sinks)["data"][1]["text"] == ["L1 H1", "L1 H2"]
    roll = viz_flow.rollout_figure(np.eye(2) * 0.3, np.eye(2) * 0.2, ["a", "b"])
    assert [d["zmax"] for d in as_json(roll)["data"]] == pytest.approx([0.3, 0.3])


def test_qk_lines_join_each_query_to_its_strongest_key_and_quiz_mode_drops_them():
    q2, k2 = np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[2.0, 0.0], [0.0, 3.0]])
    fig = viz_qk.qk_figure(q2, k2, np.array([0.6, 0.3]), np.array([1, 0]), ["<q>", "b"], ["c", "d"])
    lines, queries, keys = as_json(fig)["data"]
    assert lines["x"] == [0.0, 0.0, None, 1.0, 2.0, None] and lines["y"] == [0.0, 3.0, None, 1.0, 0.0, None]
    assert queries["text"][0] == "q &lt;q&gt;"
    assert "60%" in as_json(fig)["layout"]["xaxis"]["title"]["text"]
    quiz = viz_qk.qk_figure(q2, k2, np.array([0.6, 0.3]), np.array([1, 0]), ["a", "b"], ["c", "d"], lines=False)
    assert [d["name"] for d in as_json(quiz)["data"]] == ["queries (looking)", "keys (looked at)"]


def test_sampling_bars_show_the_drawn_token_and_quiz_shows_only_the_start():
    before = np.array([0.5, 0.3, 0.15, 0.05])
    after = np.array([0.625, 0.375, 0.0, 0.0])
    stages = {"before": before, "tempered": before, "top_k": before, "after": after}
    fig = viz_sampling.distribution_figure(stages, lambda i: f"<t{i}>", sampled=3)
    data = as_json(fig)["data"]
    assert len(data) == 4 and data[0]["text"][0] == "&lt;t0&gt;"
    assert 3 in viz_sampling.shown_tokens(before, after, n=2, include=3)
    assert as_json(fig)["layout"]["annotations"][0]["text"] == "drawn"
    quiz = viz_sampling.distribution_figure(stages, str, only_before=True)
    assert len(as_json(quiz)["data"]) == 1 and not as_json(quiz)["layout"]["annotations"]


def test_the_sampling_quiz_picks_its_bars_from_the_distribution_before_the_settings_alone():
    """Which tokens are drawn must not hint at what the settings keep: the quiz figure is the same whatever the
    settings keep, and needs only the distribution before them."""
    before = np.linspace(1, 2, 30) / np.linspace(1, 2, 30).sum()  # the likeliest last: token 29
    cut = np.zeros(30)
    cut[29] = 1.0  # top-k = 1: one token left (the others tie at 0, and the first ids are the least likely)
    wide = {"before": before, "tempered": before, "top_k": before, "after": before}
    narrow = {"before": before, "tempered": cut, "top_k": cut, "after": cut}
    figures = [as_json(viz_sampling.distribution_figure(stages, str, only_before=True))["data"]
               for stages in (wide, narrow, {"before": before})]
    assert figures[0] == figures[1] == figures[2]
    assert figures[0][0]["text"] == [str(29 - i) for i in range(viz_sampling.SHOWN)]  # the likeliest before


def alt(fig) -> str:
    return as_json(fig)["layout"]["meta"]["alt"]


def test_text_alternatives_name_the_tokens_and_the_numbers_drawn():
    """Each figure's words for a screen reader come from the numbers it draws, with the tokens (not "at 0")."""
    z = np.array([[0.2, 0.1, 0.3], [0.4, 0.2, 0.9]])
    lens_fig = viz_lens.lens_heatmap(z, [["ient", "x", "the"], ["a", "b", "<be>"]], ["not", "able", "to"],
                                     title="The top token after each layer", mark=(1, 2))
    said = alt(lens_fig)
    assert "After “to” (position 3)" in said and "layer 1: “the” 0.30; layer 2: “<be>” 0.90" in said
    assert "final answer “<be>” stays on top" in said

    q = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0]])
    k = np.array([[0.5, 0.5], [1.0, 1.0], [-1.0, 0.0]])
    strongest = np.array([1, 1, 0])
    said = alt(viz_qk.qk_figure(q, k, [0.61, 0.2], strongest, ["The", "cat", "sat"], ["The", "cat", "sat"],
                                title="layer 1, head 1"))
    assert "61% and 20%" in said and "2 of 3 queries weight the key “cat” most" in said
    assert "“sat” → “The”" in said and "-0.328" not in said
    quiz = alt(viz_qk.qk_figure(q, k, [0.61, 0.2], strongest, ["The", "cat", "sat"], ["The", "cat", "sat"],
                                lines=False))
    assert "hidden" in quiz and "→" not in quiz

    weight = np.array([[0.9, 0.1], [0.6, 0.3]])
    norm = np.array([[0.2, 0.1], [0.5, 0.3]])
    said = alt(viz_flow.sink_figure(weight, norm, "[CLS]/[SEP]", selected=(1, 0)))
    assert "2 of them put at least half their weight on [CLS]/[SEP]" in said
    assert "move on average 0.35 of their norm there against 0.75 of their weight" in said
    assert "L1 H1, weight 0.90, norm 0.20" in said and "L2 H1: weight 0.60, norm 0.50" in said
    # a sink token that looks like markup is said as text, and the description starts with the title
    sink = viz_flow.sink_figure(weight, norm, "<s>")
    assert "half their weight on <s>" in alt(sink)
    assert alt(sink).startswith(describe.plain(sink.layout.title.text))

    before = np.array([0.5, 0.3, 0.15, 0.05])
    after = np.array([0.625, 0.375, 0.0, 0.0])
    names = {0: "▁the", 1: "▁a", 2: "<pad>", 3: "▁his"}
    stages = {"before": before, "tempered": before, "top_k": after, "after": after}
    said = alt(viz_sampling.distribution_figure(stages, names.get, title="The next token", sampled=1))
    assert "Before the settings: “▁the” 0.500, “▁a” 0.300" in said
    assert "2 of the 4 tokens shown can be drawn" in said and "Drawn: “▁a”" in said


def test_sampling_bars_fit_the_distribution_and_draw_no_token_the_settings_cut_as_kept():
    v = 50
    before = np.full(v, 0.6 / (v - 3))
    before[:3] = [0.2, 0.12, 0.08]
    after = np.zeros(v)
    after[:3] = before[:3] / before[:3].sum()  # top-k = 3: three kept
    stages = {"before": before, "tempered": before, "top_k": after, "after": after}
    fig = as_json(viz_sampling.distribution_figure(stages, lambda i: f"t{i}", sampled=0))
    top = fig["layout"]["yaxis"]["range"][1]
    assert after.max() < top < 1  # the tallest bar, not 0..1
    shown = [int(name[1:]) for name in fig["data"][0]["text"]]
    assert all(after[i] > 0 or before[i] >= np.sort(before)[-len(shown)] for i in shown)
    flat = np.full(v, 1 / v)  # lm's usual spread: bars a few hundredths high fill the axis
    fig = as_json(viz_sampling.distribution_figure({"before": flat}, str, only_before=True))
    assert fig["layout"]["yaxis"]["range"][1] < 0.05


def test_qk_and_rotary_legends_sit_clear_of_the_axis_titles():
    q = np.array([[0.0, 1.0], [1.0, 0.0]])
    fig = as_json(viz_qk.qk_figure(q, q, [0.6, 0.3], [0, 1], ["a", "b"], ["a", "b"]))
    assert fig["layout"]["legend"]["y"] >= 1 and fig["layout"]["legend"]["yanchor"] == "bottom"


def test_the_lens_at_thirty_layers_on_a_projector_labels_what_fits_and_says_which():
    """smollm2 in presenter mode: 30 "layer k" labels and 420 cell tokens in 440 px overprinted into black smears."""
    layers, t = 30, 14
    rng = np.random.default_rng(0)
    z = rng.random((layers, t))
    cells = [[f"w{l}_{i}" for i in range(t)] for l in range(layers)]
    fig = as_json(viz_lens.lens_heatmap(z, cells, [f"t{i}" for i in range(t)], font_size=20, mark=(20, 13),
                                        max_height=440))
    layout = fig["layout"]
    assert layout["height"] <= 440
    plot_px = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    row_px = plot_px / layers
    ticks, size = layout["yaxis"]["tickvals"], layout["yaxis"]["tickfont"]["size"]
    assert size >= 14, "a projector's smallest text"
    assert 29 in ticks, "the final answer's row is always labelled"
    gaps = {b - a for a, b in zip(ticks, ticks[1:])}
    assert len(gaps) == 1 and gaps.pop() * row_px >= 1.2 * size, "labels stand apart"
    assert len(ticks) == layers or "labelled" in layout["yaxis"]["title"]["text"], layout["yaxis"]["title"]
    text = fig["data"][1]
    assert set(text["y"]) == set(ticks), "a row's tokens are written where its layer is labelled"
    assert text["textfont"]["size"] >= 14
    assert "layer 1: “w0_13”" in layout["meta"]["alt"] and "layer 30: “w29_13”" in layout["meta"]["alt"]  # every layer
    roomy = as_json(viz_lens.lens_heatmap(z, cells, [f"t{i}" for i in range(t)], font_size=12))["layout"]
    assert roomy["yaxis"]["tickvals"] == list(range(layers)) and roomy["yaxis"]["title"]["text"] == "after layer"
