"""smollm2's lecture examples (the picker above the tabs) run on smollm2 and say what it does, measured on its
4-bit weights: the fact it recalls, the name it copies and the head that looks at it, and a repeat an induction
head completes. Every number a message quotes is checked against the model here."""
from __future__ import annotations

import numpy as np
import pytest

from model.registry import ModelRegistry
from ui.page import lecture_examples

EIFFEL = "The Eiffel Tower is in the city of"
NAMES = "When Mary and John went to the store, John gave a drink to"
REPEAT = "Alice likes green apples and Bob likes red grapes. Alice likes green"


@pytest.fixture(scope="module")
def registry(smollm2):
    registry = ModelRegistry.load(names=(), extra={}, device="cpu")
    registry.models["smollm2"] = smollm2  # the session's one copy, as ModelRegistry.load would share it
    return registry


def smollm2_examples() -> list[str]:
    return [text for text, model in lecture_examples.EXAMPLES if model == "smollm2"]


def test_smollm2_has_the_examples_the_readme_names():
    assert set(smollm2_examples()) == {EIFFEL, NAMES, REPEAT}
    assert set(smollm2_examples()) == set(lecture_examples.ANSWERS), "each says what the model writes next"


@pytest.mark.parametrize("text", [EIFFEL, NAMES, REPEAT])
def test_each_example_is_answered_as_it_says(registry, text):
    guesses = registry.get("smollm2").next_tokens(text, 5)
    top, p = guesses[0]
    assert top == "▁" + lecture_examples.ANSWERS[text], guesses
    claim = lecture_examples.next_token_claim(registry, text, "smollm2")
    assert claim == f"Measured now: smollm2 puts “{lecture_examples.ANSWERS[text]}” first next ({p:.0%})."
    assert {EIFFEL: "66%", NAMES: "92%", REPEAT: "71%"}[text] in claim  # docs/models.md's numbers


def test_the_name_example_opens_the_head_that_looks_at_mary(registry):
    layer, head, weight, source, target = lecture_examples.linked_head(registry, "smollm2", NAMES)
    att = registry.attention("smollm2", NAMES, "self")
    last, mary = len(att.queries) - 1, att.keys.index("▁Mary")
    assert (source, target) == ("to", "Mary") and att.queries[last] == "▁to"  # the last " to", not the first
    assert (layer, head) == (25, 5) and round(weight, 2) == 0.81  # as docs/models.md says
    assert weight == pytest.approx(float(att.probs[:, :, last, mary].max()))


def test_the_repeat_opens_an_induction_head(registry):
    """The second " green" looks most, in the head opened, at the " apples" after the first " green": the token
    that came next last time, which is what the model then writes."""
    layer, head, weight, source, target = lecture_examples.linked_head(registry, "smollm2", REPEAT)
    att = registry.attention("smollm2", REPEAT, "self")
    tokens = list(att.queries)
    first_green, second_green = [i for i, token in enumerate(tokens) if token == "▁green"]
    apples = tokens.index("▁apples")
    assert apples == first_green + 1 and second_green == len(tokens) - 1
    assert (source, target) == ("green", "apples")
    weights = att.probs[:, :, second_green, apples]
    assert (layer, head) == tuple(int(i) + 1 for i in np.unravel_index(weights.argmax(), weights.shape))
    assert weight == pytest.approx(float(weights.max())) and weight > 0.5  # a stripe a class sees


def test_the_fact_example_says_which_head_it_opens(registry):
    """Not a linked example: it opens smollm2's previous-token head measured on its first example (the fact), and
    the message's share is that head's, measured."""
    assert smollm2_examples()[0] == EIFFEL
    layer, head = lecture_examples.previous_token_head(registry, "smollm2")
    claim = lecture_examples.example_claim(registry, EIFFEL, "smollm2", layer, head)
    att = registry.attention("smollm2", EIFFEL, "self")
    shares = [float(att.probs[layer - 1, head - 1, i, i - 1]) for i in range(1, len(att.queries))]
    assert f"layer {layer}, head {head}, smollm2's previous-token head, puts {np.mean(shares):.2f}" in claim
