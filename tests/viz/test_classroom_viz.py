"""The class's answers beside the model's (viz/classroom.py): one bar per choice in the question's order, counts as
given, the model's answer marked, token text escaped, two choices that read alike kept apart."""
from __future__ import annotations

import json

import numpy as np
import pytest

from viz.classroom import CLASS_COLOUR, MODEL_COLOUR, class_answers


def plain(fig) -> dict:
    return json.loads(fig.to_json())


def test_one_bar_per_choice_in_order_with_the_counts_and_the_models_answer_in_orange():
    choices = ['"<s>"', '" cat"', '" sat"', '" cat"#2']
    fig = class_answers(choices, {'" cat"': 3, '" sat"': 1}, model_answer='" sat"')
    bars = fig.data[0]
    assert list(np.asarray(bars.x)) == [0, 3, 1, 0] and list(np.asarray(bars.y)) == [0, 1, 2, 3]
    assert list(bars.marker.color) == [CLASS_COLOUR, CLASS_COLOUR, MODEL_COLOUR, CLASS_COLOUR]
    assert bars.text[1] == "3 (75%)" and bars.text[2] == "1 (25%) · the model's answer"
    layout = plain(fig)["layout"]
    assert layout["yaxis"]["ticktext"][0] == '"&lt;s&gt;"'  # escaped: Plotly would read <s> as markup
    assert "font-weight:bold" in layout["yaxis"]["ticktext"][2]
    assert len(set(np.asarray(fig.layout.yaxis.tickvals))) == 4
    assert "The class's 4 answers" in layout["title"]["text"]
    assert layout["meta"]["alt"].endswith("The model's answer: '\" sat\"'.")


def test_a_question_nobody_answered_yet_and_thirty_layers_still_read():
    fig = class_answers([f"layer {n}" for n in range(1, 31)], {}, model_answer="layer 3", font_size=20)
    layout = plain(fig)["layout"]
    assert layout["height"] >= 30 * 40  # a row a label and a half at the projector's 20 px
    assert fig.data[0].text[0] == "0" and "0 answers" in layout["title"]["text"]


def test_no_choices_is_a_mistake_in_the_caller():
    with pytest.raises(ValueError, match="choices"):
        class_answers([], {}, "")
