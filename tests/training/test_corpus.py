"""The WordNet corpus reader, on hand-written data lines and a folder written here."""
import zlib

import pytest

from training import corpus

# A real-format line from WordNet 3.0's data.noun (pointers trimmed to two).
KITTY = ('02122725 05 n 02 kitty 0 kitty-cat 0 002 @ 02121620 n 0000 ~ 02122878 n 0000 '
         '| young domestic cat; "the kitty played with a ball of yarn"; "kitty!"  ')


def test_gloss_lines_gives_the_definition_and_example_sentences():
    assert corpus.gloss_lines(KITTY) == ["kitty: young domestic cat", "the kitty played with a ball of yarn"]


def test_gloss_lines_uses_the_first_word_with_spaces_for_underscores():
    line = '02121620 05 n 02 house_cat 0 domestic_cat 0 000 | any domesticated member of the genus Felis  '
    assert corpus.gloss_lines(line) == ["house cat: any domesticated member of the genus Felis"]


def test_gloss_lines_skips_short_examples_and_keeps_a_gloss_of_examples_only():
    line = '00001740 03 v 01 breathe 0 000 | "breathe deeply"; "she breathed slowly and calmly"  '
    assert corpus.gloss_lines(line) == ["she breathed slowly and calmly"]


@pytest.mark.parametrize("line", [
    "  1 This software and database is being provided to you, the LICENSEE, by  ",
    "  29 WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.",
    "02122725 05 n 02 kitty 0 a line without a gloss separator",
    "",
])
def test_licence_header_and_malformed_lines_give_nothing(line):
    assert corpus.gloss_lines(line) == []


def write_wordnet(folder, noun_lines, verb_lines=()):
    folder.mkdir(parents=True, exist_ok=True)
    header = ["  1 This software and database is being provided to you  "]
    (folder / "data.noun").write_text("\n".join(header + list(noun_lines)) + "\n", encoding="utf-8")
    if verb_lines:
        (folder / "data.verb").write_text("\n".join(header + list(verb_lines)) + "\n", encoding="utf-8")
    (folder / "index.noun").write_text("kitty n 1 2 @ ~ 1 0 02122725  \n")  # not a data file: ignored
    return folder


NOUNS = [
    KITTY,
    '09999991 05 n 01 pebble 0 000 | a small smooth stone; "he skipped a pebble across the pond"  ',
    '09999992 05 n 01 lantern 0 000 | a light with a transparent case  ',
    KITTY,  # a duplicate line adds nothing
]
VERBS = ['01999991 29 v 01 hum 0 000 | sing with closed lips; "she hummed a tune quietly"  ']


def test_read_lines_from_a_fixture_folder(tmp_path):
    folder = write_wordnet(tmp_path / "wordnet", NOUNS, VERBS)
    lines = corpus.read_lines(folder, tmp_path / "no_fortunes")
    assert lines == [
        "kitty: young domestic cat",
        "the kitty played with a ball of yarn",
        "pebble: a small smooth stone",
        "he skipped a pebble across the pond",
        "lantern: a light with a transparent case",
        "hum: sing with closed lips",  # data.verb after data.noun: files in sorted order
        "she hummed a tune quietly",
    ]


def test_read_lines_adds_fortunes_but_not_index_files_or_links(tmp_path):
    folder = write_wordnet(tmp_path / "wordnet", NOUNS[:1])
    fortunes = tmp_path / "fortunes"
    fortunes.mkdir()
    (fortunes / "wisdom").write_text("A stitch in time\n  saves nine.\n%\nToo short\n%\nLook before you leap.\n")
    (fortunes / "wisdom.dat").write_bytes(b"\x00\x01 binary index, not text")
    (fortunes / "alias").symlink_to(fortunes / "wisdom")
    lines = corpus.read_lines(folder, fortunes)
    assert lines == ["kitty: young domestic cat", "the kitty played with a ball of yarn",
                     "A stitch in time saves nine.", "Look before you leap."]


def test_the_session_fixture_folder_gives_hundreds_of_lines(fixture_wordnet_dir, empty_fortunes_dir):
    lines = corpus.read_lines(fixture_wordnet_dir, empty_fortunes_dir)
    assert len(lines) == 600  # a definition and an example per synthetic synset
    assert sum(len(line.split()) for line in lines) > 3000


def test_missing_wordnet_says_what_to_install(tmp_path):
    with pytest.raises(FileNotFoundError, match="apt-get install wordnet-base") as error:
        corpus.read_lines(tmp_path / "nowhere", tmp_path)
    assert str(tmp_path / "nowhere") in str(error.value)


def test_a_folder_without_data_files_is_missing_too(tmp_path):
    (tmp_path / "index.noun").write_text("x\n")
    with pytest.raises(FileNotFoundError, match="wordnet-base"):
        corpus.read_lines(tmp_path, tmp_path)


def test_fortune_lines_joins_entries_and_drops_short_or_long_ones():
    text = "One two three\nfour.\n%\nHi there\n%\n" + " ".join(["word"] * 81) + "\n%\nThe end is near"
    assert corpus.fortune_lines(text) == ["One two three four.", "The end is near"]


LINES = [f"line number {i} of the synthetic corpus" for i in range(2000)]


def test_split_is_deterministic_disjoint_and_complete():
    train, validation = corpus.split(LINES)
    assert (train, validation) == corpus.split(list(LINES))
    assert not set(train) & set(validation)
    assert sorted(train + validation) == sorted(LINES)
    assert train == [line for line in LINES if line in set(train)], "order is kept"
    assert 0.02 < len(validation) / len(LINES) < 0.10  # about 5%


def test_split_depends_only_on_each_line():
    # the same line lands on the same side whatever else is in the corpus
    _, validation = corpus.split(LINES)
    _, validation_of_half = corpus.split(LINES[::2])
    assert validation_of_half == [line for line in validation if line in set(LINES[::2])]
    for line in LINES[:200]:
        assert corpus.is_validation(line) == (zlib.crc32(line.encode("utf-8")) % 100 < 5)


# From WordNet 3.0's data.noun ("facility"): an attribution follows the last example.
FACILITY = ('05624029 07 n 01 facility 0 001 @ 05624254 n 0000 | a natural effortlessness; '
            '"they conversed with great facility"; "a happy readiness of conversation"--Jane Austen  ')


def test_attributions_after_examples_do_not_end_up_in_the_definition():
    definition = corpus.gloss_lines(FACILITY)[0]
    assert definition == "facility: a natural effortlessness"
