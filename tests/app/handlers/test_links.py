"""A link carries the sampling panel's settings (and every control the reading views use) both ways: written
by make_link, read back by parse_query; bad values in a link are named, as every link value is."""
from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest

from analysis import sampling
from ui.page.links import (SAMPLING_SETTINGS, TAB_SETTINGS, ViewSettings, make_link, parse_query, sampling_in_link,
                      sampling_settings)
from ui.page.messages import shown as shown_value

TABS = ("attention", "lens", "interventions", "steps")


def query_of(link: str) -> dict:
    return dict(parse_qsl(urlsplit(link).query))


def test_sampling_settings_go_into_a_link_and_come_back(registry):
    settings = ViewSettings("The cat sat on the", "lm", 2, 3, "self", False, "attention", sample_temperature=0.7,
                            sample_top_k=5, sample_top_p=0.9, sample_seed=42, sample_tokens=20)
    link = make_link(settings, "http://host:7860/?text=old")
    query = query_of(link)
    assert {name: query[name] for name in SAMPLING_SETTINGS} == {
        "sample_temperature": "0.7", "sample_top_k": "5", "sample_top_p": "0.9", "sample_seed": "42",
        "sample_tokens": "20"}
    parsed, notes = parse_query(query, registry, ViewSettings("x", "lm"), TABS)
    assert parsed == settings and notes == []
    assert sampling_in_link(parsed) and not sampling_in_link(ViewSettings("x", "lm"))


def test_a_link_leaves_out_sampling_settings_at_their_defaults():
    link = make_link(ViewSettings("The cat", "lm", sample_temperature=0.7000000000000001))
    query = query_of(link)
    assert query["sample_temperature"] == "0.7", "a slider's float noise is not written"
    assert not set(SAMPLING_SETTINGS[1:]) & set(query), query
    defaults = ViewSettings("The cat", "lm")
    assert [getattr(defaults, n) for n in SAMPLING_SETTINGS] == [1.0, 0, 1.0, 0, sampling.DEFAULT_TOKENS]
    assert all(TAB_SETTINGS[n][0] == getattr(defaults, n) for n in SAMPLING_SETTINGS)


@pytest.mark.parametrize("name, value, shown, why", [
    ("sample_temperature", "hot", 1.0, "is not a number"),
    ("sample_temperature", "9", sampling.MAX_TEMPERATURE, "is out of range"),
    ("sample_temperature", "-1", 0.0, "is out of range"),
    ("sample_top_k", "<b>5</b>", 0, "is not a number"),
    ("sample_top_k", "1000", sampling.MAX_TOP_K, "is out of range"),
    ("sample_top_p", "0", sampling.MIN_TOP_P, "is out of range"),
    ("sample_top_p", "nan", 1.0, "is not a number"),
    ("sample_seed", "-3", 0, "is out of range"),
    ("sample_seed", "inf", 0, "is not a number"),
    ("sample_tokens", "0", 1, "is out of range"),
    ("sample_tokens", "500", sampling.MAX_TOKENS, "is out of range"),
])
def test_a_bad_sampling_value_in_a_link_is_named_and_replaced(registry, name, value, shown, why):
    settings, notes = parse_query({name: value, "model": "lm"}, registry, ViewSettings("x", "lm"), TABS)
    assert getattr(settings, name) == shown
    assert len(notes) == 1 and notes[0].startswith(f"{name} ") and why in notes[0], notes
    assert shown_value(value) in notes[0]  # quoted as written (the page escapes it when it warns)


@pytest.mark.parametrize("tab, model", [("lens", "mlm"), ("interventions", "minilm"), ("steps", "lm")])
def test_the_reading_views_controls_are_all_in_a_link(registry, tab, model):
    """The lens reads the text, model, presenter and quiz mode; What flows and Queries & keys also the layer and
    head: a link written for each view opens it again with every one of them."""
    if model not in registry.available:
        pytest.skip(f"{model} is not installed")
    layers, heads = registry.shape(model)
    settings = ViewSettings("a dog & a <mask>", model, layers, heads, "self", True, tab, quiz=True)
    parsed, notes = parse_query(query_of(make_link(settings)), registry, ViewSettings("x", "lm"), TABS)
    assert (parsed.text, parsed.model, parsed.layer, parsed.head, parsed.tab, parsed.presenter, parsed.quiz) == \
        (settings.text, model, layers, heads, tab, True, True) and notes == []


def test_what_the_browser_sends_for_the_link_becomes_numbers_or_defaults():
    assert sampling_settings(0.35000000000000003, 5.0, 0.9, 7.0, 20.0) == {
        "sample_temperature": 0.35000000000000003, "sample_top_k": 5, "sample_top_p": 0.9, "sample_seed": 7,
        "sample_tokens": 20}
    assert sampling_settings(None, "x", float("nan"), None, float("inf")) == {
        "sample_temperature": 1.0, "sample_top_k": 0, "sample_top_p": 1.0, "sample_seed": 0,
        "sample_tokens": sampling.DEFAULT_TOKENS}
