"""viz.describe: every figure's text alternative says what the figure draws, from the same numbers; and the
colour scales read in greyscale and for colour-blind viewers."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from viz.describe import attention_pattern, describe, grid_alt
from viz.figure import figure
from viz.heatmap import COLORSCALE, attention_heatmap
from viz.tiles import all_heads_grid
from viz.learning import loss_figure
from viz.panels import DIVERGING, Panel, heatmap_row

TOKENS = ["<s>", "the", "cat", "sat", "on", "mat"]


def previous_token(t: int, weight: float = 0.9) -> np.ndarray:
    p = np.zeros((t, t))
    p[0, 0] = 1
    for i in range(1, t):
        p[i, i - 1], p[i, i] = weight, 1 - weight
    return p


def alt(fig) -> str:
    return json.loads(fig.to_json())["layout"]["meta"]["alt"]


def test_a_previous_token_head_is_said_with_its_average_weight():
    fig = attention_heatmap(previous_token(6, 0.99), TOKENS, TOKENS, title="Layer 1, head 4",
                            mask=np.tril(np.ones((6, 6), bool)))
    assert alt(fig) == ("Layer 1, head 4. Each token puts most of its attention (0.99 on average) on the previous "
                        "token.")


@pytest.mark.parametrize("place, where", [("self", "itself"), ("first", "the first token"),
                                          ("next", "the next token")])
def test_each_pattern_is_named(place, where):
    t = 6
    p = np.full((t, t), 0.05)
    for i in range(t):
        j = {"self": i, "first": 0, "next": min(i + 1, t - 1)}[place]
        p[i, j] = 0.75
    p /= p.sum(axis=1, keepdims=True)
    said = attention_pattern(p)
    assert said.endswith(f"on {where}"), said
    # the number is the average of the chosen cells, as drawn
    assert re.search(r"\((\d\.\d\d) on average\)", said)[1] == f"{p.max(axis=1).mean():.2f}" or place == "next"


def test_a_mixed_head_is_said_to_spread_and_names_its_strongest_link():
    p = np.array([[.4, .15, .15, .15, .15], [.1, .1, .1, .6, .1], [.1, .1, .1, .1, .6], [.1, .6, .1, .1, .1],
                  [.1, .1, .6, .1, .1]])  # no place takes half the rows
    said = attention_pattern(p, list("abcde"), list("abcde"))
    assert said == ("the attention is spread (largest weight per token 0.56 on average); the strongest, 0.60, goes "
                    "from “b” to “d”"), said


def test_quiz_mode_says_nothing_of_the_hidden_weights():
    fig = attention_heatmap(previous_token(6), TOKENS, TOKENS, title="Layer 1, head 4", hidden=True)
    assert "previous" not in alt(fig) and "hidden" in alt(fig)


def test_the_every_head_grid_names_the_heads_with_one_pattern():
    probs = np.full((2, 2, 6, 6), 1 / 6)
    probs[0, 1] = previous_token(6, 0.99)
    said = alt(all_heads_grid(probs, TOKENS, TOKENS))
    assert "4 maps" in said and "L1 H2: each token puts most of its attention (0.99 on average) on the previous" in said
    assert "3 maps spread their attention" in said
    assert grid_alt("T", probs, [["a", "b"], ["c", "d"]], limit=0).endswith("1 more with one clear pattern; "
                                                                            "3 maps spread their attention.")


def test_panels_bars_and_lines_are_described_by_their_numbers():
    scores = np.array([[1.0, -2.0], [3.5, 0.5]])
    fig = heatmap_row([Panel(scores, "raw scores", ["a", "b"], ["a", "b"])], title="Scores")
    assert "Values from -2 to 3.5; the largest at row “b”, column “a”" in alt(fig), alt(fig)
    lines = loss_figure([1, 10, 100], [3.0, 2.0, 1.5], [3.1, 2.2, 1.8])
    said = alt(lines)
    assert "Train loss: from 3 (at 1) to 1.5 (at 100), lowest 1.5 (at 100)" in said, said
    bars = figure([{"type": "bar", "x": ["x", "y", "z"], "y": np.array([0.2, 0.7, 0.1])}],
                  {"title": {"text": "<b>Guesses</b>"}})
    assert alt(bars) == "Guesses. 3 bars; the largest: “y” 0.7, “x” 0.2, “z” 0.1."


def test_a_long_description_is_cut_to_a_few_sentences():
    fig = figure([{"type": "scatter", "name": f"dim {i}", "y": np.arange(5.0)} for i in range(4)],
                 {"title": {"text": "x" * 700}})
    assert len(alt(fig)) <= 600 and alt(fig).endswith("…")


# ---- colour: the scales read without hue -----------------------------------------------------------
# Machado, Oliveira & Fernandes (2009), full severity, on linear RGB
CVD = {"protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
       "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
       "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]]}


def _linear(scale) -> np.ndarray:
    rgb = np.array([[float(v) for v in re.findall(r"[\d.]+", colour)] for _, colour in scale]) / 255
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def _lab(linear: np.ndarray) -> np.ndarray:
    """CIE L*a*b* (D65) of linear sRGB colours; L* is what a greyscale print keeps."""
    xyz = np.clip(linear, 0, 1) @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                                            [0.0193, 0.1192, 0.9505]]).T / np.array([0.9505, 1.0, 1.089])
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def _lightness(linear: np.ndarray) -> np.ndarray:
    return _lab(linear)[:, 0]


def _seen(scale, vision: str | None) -> np.ndarray:
    """The scale's colours in linear RGB as a viewer with `vision` (None: full colour vision) sees them."""
    linear = _linear(scale)
    return linear @ np.array(CVD[vision]).T if vision else linear


@pytest.mark.parametrize("vision", [None, *CVD])
def test_the_weight_scale_darkens_steadily_in_greyscale_and_for_colour_blind_viewers(vision):
    linear = _seen(COLORSCALE, vision)
    lightness = _lightness(linear)
    assert np.all(np.diff(lightness) < -2), lightness  # more weight, darker, at every step of the scale
    assert lightness[0] - lightness[-1] > 60


@pytest.mark.parametrize("vision", [None, *CVD])
def test_the_signed_scale_grows_darker_both_ways_from_white_and_its_ends_stay_apart(vision):
    linear = _seen(DIVERGING, vision)
    lightness = _lightness(linear)
    middle = len(lightness) // 2
    assert np.all(np.diff(lightness[:middle + 1]) > 0) and np.all(np.diff(lightness[middle:]) < 0), lightness
    # the sign is in the hue: the two ends differ in colour for every viewer (greyscale alone reads the size)
    lab = _lab(linear)
    assert np.linalg.norm(lab[0] - lab[-1]) > 25, (vision, lab[[0, -1]])  # ΔE*ab: plainly different colours
