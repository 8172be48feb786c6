from viz.labels import axis_ticks, head_name, markdown_label, parse_head_name, token_label, token_labels

import pytest


def test_html_like_tokens_are_escaped_so_plotly_shows_them_literally():
    assert token_labels(["<s>", "</b>", "a&b", "▁the"]) == ["&lt;s&gt;", "&lt;/b&gt;", "a&amp;b", "▁the"]


def test_control_characters_and_blank_tokens_stay_visible():
    assert token_label("\x00") == "\\x00"
    assert token_label("") == "∅"
    assert token_label(" ") == " " or token_label(" ").strip()  # never an invisible empty label
    assert token_label("\n") == "\\x0a"


def test_repeated_tokens_get_their_own_integer_positions():
    ticks = axis_ticks(["the", "cat", "the"])
    assert ticks["tickvals"] == [0, 1, 2]
    assert ticks["ticktext"] == ["the", "cat", "the"]
    assert axis_ticks(["a"], offset=5)["tickvals"] == [5]


def test_head_names_are_one_based_and_round_trip():
    assert head_name(0, 1) == "L1 H2"
    assert parse_head_name("L3 H4") == (2, 3)
    with pytest.raises(ValueError, match="L1 H2"):
        parse_head_name("layer three")


def test_markdown_label_escapes_markdown_and_html():
    assert markdown_label("<s>") == "&lt;s&gt;"
    assert markdown_label("a|b*c") == "a\\|b\\*c"
