"""The quiz's Reveal, called as the page calls it: the answer names where the asked row looks most, read against
the numbers the revealed figure draws, and a reveal with no row picked answers the row the quiz asks first."""
from __future__ import annotations

import numpy as np
import pytest

from ui.page.messages import InputError
from ui.tabs import attention

TEXT = "The cat sat on the mat"


def test_reveal_names_the_key_the_figure_draws_largest(registry):
    rows, keys, first = attention.quiz_choices(registry, TEXT, "lm")
    figure, answer = attention.reveal(registry, TEXT, "lm", 2, 3, None, False, 4, 0)
    assert figure.layout.title.text.startswith("Revealed")
    weights = np.asarray(figure.data[0].z, dtype=float)[4]  # the asked row as drawn
    best = int(np.nanargmax(weights))
    token = keys[best][0].split(": ", 1)[1]
    assert f"looks most at **{token}** ({weights[best]:.0%} of its attention)" in answer, answer
    assert f"guessed **{keys[0][0].split(': ', 1)[1].replace('<', '&lt;').replace('>', '&gt;')}**" in answer


def test_reveal_without_a_row_answers_the_row_asked_first(registry):
    rows, keys, first = attention.quiz_choices(registry, TEXT, "lm")
    _, answer = attention.reveal(registry, TEXT, "lm", 1, 4, None, False, None, None)
    _, asked_first = attention.reveal(registry, TEXT, "lm", 1, 4, None, False, first, None)
    assert answer == asked_first and "looks most at" in answer  # the answer for the row the panel shows first
    assert first == len(rows) - 1


@pytest.mark.parametrize("row", [-1, 99, "2", 2.5])
def test_reveal_refuses_a_row_outside_the_sentence(registry, row):
    with pytest.raises(InputError, match="among the sentence's tokens"):
        attention.reveal(registry, TEXT, "lm", 1, 4, None, False, row, None)
