import pytest

from analysis.heads import head_name, head_names, parse_head_name
from viz.labels import (MAX_TICK_LABELS, axis_ticks, label_step, labelled_positions, markdown_label, plain_label,
                         token_label, token_labels)


def test_html_like_tokens_are_escaped_so_plotly_shows_them_literally():
    assert token_labels(["<s>", "</b>", "a&b", "▁the"]) == ["&lt;s&gt;", "&lt;/b&gt;", "a&amp;b", "▁the"]


def test_control_characters_and_blank_tokens_stay_visible():
    assert token_label("") == "∅"
    assert token_label(" ") == "▁"  # never an invisible empty label
    assert token_label("  ") == "▁▁"


def test_what_does_not_print_is_written_one_way_never_as_an_escape_code():
    """docs/tokens.md: smollm2's continuation wrote "\\x0a\\x0a" and the Lens's cells "\\xa0"."""
    assert token_label("\n") == "↵" and token_label("\n\n") == "↵↵"
    assert token_label("\t") == "⇥"
    assert token_label("\xa0") == "·" and token_label("a\xa0b") == "a·b"
    assert token_label("\r") == "&lt;0x0D&gt;" and plain_label("\x00") == "<0x00>"  # as the tokenizers name a byte
    assert plain_label("a\u2009b") == "a␣b"  # a thin space: a space that is not an ordinary one
    assert plain_label("\u200b") == "<U+200B>"
    assert markdown_label("gift to John.\n\n") == "gift to John.↵↵"
    assert plain_label("the cat sat") == "the cat sat"  # ordinary spaces between words stay spaces
    for text in ("\n", "\xa0", "\x07", "a\tb\rc", "\u2028", "\ufeff"):
        assert "\\x" not in token_label(text) and "\\u" not in token_label(text), text


def test_repeated_tokens_get_their_own_integer_positions():
    ticks = axis_ticks(["the", "cat", "the"])
    assert ticks["tickvals"] == [0, 1, 2]
    assert ticks["ticktext"] == ["the", "cat", "the"]
    assert axis_ticks(["a"], offset=5)["tickvals"] == [5]


def test_head_names_are_one_based_and_round_trip():
    assert head_name(0, 1) == "L1 H2"
    assert parse_head_name("L3 H4") == (2, 3)
    assert head_names(2, 3) == ["L1 H1", "L1 H2", "L1 H3", "L2 H1", "L2 H2", "L2 H3"]
    with pytest.raises(ValueError, match="L1 H2"):
        parse_head_name("layer three")


def test_markdown_label_escapes_markdown_and_html():
    assert markdown_label("<s>") == "&lt;s&gt;"
    assert markdown_label("a|b*c") == "a\\|b\\*c"


def test_long_inputs_label_every_kth_token_from_the_first():
    short = axis_ticks([f"t{i}" for i in range(MAX_TICK_LABELS)])
    assert short["tickvals"] == list(range(MAX_TICK_LABELS))
    tokens = [f"t{i}" for i in range(256)]
    ticks = axis_ticks(tokens, offset=3)
    step = label_step(256)
    assert step == 4 and len(ticks["tickvals"]) <= MAX_TICK_LABELS
    assert ticks["tickvals"][:3] == [3, 7, 11]
    assert ticks["ticktext"][:3] == ["t0", "t4", "t8"]  # each label still sits on its own token
    assert list(labelled_positions(65)) == list(range(0, 65, 2))


def test_token_axes_skip_plotlys_per_label_overflow_check():
    # "hide past div" (Plotly's default) measured every label once per label drawn: ~1,000 layout
    # reads for a 32-token axis, most of the time a lecture view took to draw
    assert axis_ticks(["a", "b"])["ticklabeloverflow"] == "allow"
