"""The lecture examples show what their models really do, measured on the shipped weights.

Nothing about the lm is pinned here: it is retrained from time to time, so its previous-token head is read
from its training history and measured on each example."""
from __future__ import annotations

import re

import pytest

from analysis import head_stats as stats
from ui.page import lecture_examples

CLEAR = 0.5  # the share of attention that makes a pattern plain to see in class


def examples(name: str) -> list[str]:
    return [text for text, model in lecture_examples.EXAMPLES if model == name]


def previous_share(registry, text: str, layer0: int, head0: int) -> float:
    att = registry.attention("lm", text, "self")
    frame = stats.head_stats(att.probs, att.mask)
    return float(frame[(frame["layer"] == layer0 + 1) & (frame["head_in_layer"] == head0 + 1)]["previous"].iloc[0])


def test_every_checked_model_has_examples_and_every_example_is_checked():
    assert examples("lm") and set(examples("mlm")) == set(lecture_examples.FILLS)
    assert set(examples("dates")) == set(lecture_examples.DATES)
    coreference = [text for text, model in lecture_examples.EXAMPLES if "animal" in text and "it" in text.split()]
    assert {model for text, model in lecture_examples.EXAMPLES if text in coreference} <= {"minilm"}, \
        "the it -> animal story belongs to a model that has that head"


@pytest.mark.parametrize("text", examples("lm"))
def test_lm_examples_show_its_previous_token_head(registry, text):
    best = registry.history("lm").head("previous_token_head")
    assert best is not None, "the lm's evaluation names its previous-token head"
    share = previous_share(registry, text, best.layer, best.head)
    assert share >= CLEAR, f"L{best.layer + 1} H{best.head + 1} puts only {share:.2f} on the previous token"
    claim = lecture_examples.example_claim(registry, text, "lm", best.layer + 1, best.head + 1)
    assert f"puts {share:.2f} of each token's attention on the token just before" in claim


@pytest.mark.parametrize("text", examples("mlm"))
def test_mlm_examples_are_fill_ins_it_gets_right(registry, text):
    (answers,) = registry.get("mlm").fill(text, 5)
    assert answers[0][0].lstrip("▁") == lecture_examples.FILLS[text], answers
    claim = lecture_examples.example_claim(registry, text, "mlm", 1, 1)
    assert f"“{lecture_examples.FILLS[text]}” ({answers[0][1]:.0%})" in claim


@pytest.mark.parametrize("text", examples("dates"))
def test_dates_examples_are_dates_it_reads(registry, text):
    assert registry.get("dates").translate(text) == lecture_examples.DATES[text]
    claim = lecture_examples.example_claim(registry, text, "dates", 1, 1)
    assert claim.endswith(f"writes {lecture_examples.DATES[text]}.")


def test_the_page_opens_on_an_lm_example_with_the_lm_head_measured(registry):
    start = lecture_examples.default_settings(registry)
    assert start.model == "lm" and start.text in examples("lm")
    best = registry.history("lm").head("previous_token_head")
    assert (start.layer, start.head) == (best.layer + 1, best.head + 1)
    assert re.fullmatch(r"[A-Za-z' ]+", start.text), "the first example needs no explaining (no bytes, no blanks)"
