"""Byte-level BPE trained on a small corpus written here, readable tokens, and the
character tokenizer of the dates model."""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from model import tokenizer as tok

WORDS = ("the cat sat on a mat while the dog ran through the garden by the river and "
         "over a stone wall under an old tree near the quiet house").split()


@pytest.fixture(scope="module")
def bpe_path(tmp_path_factory):
    """A 300-token BPE trained on 400 lines of a corpus file this module writes."""
    folder = tmp_path_factory.mktemp("bpe")
    rng = random.Random(0)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 14))) for _ in range(400)]
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tokenizer = tok.train_bpe(corpus.read_text(encoding="utf-8").splitlines(), vocab_size=300)
    path = folder / "tokenizer.json"
    tokenizer.save(str(path))
    return path


@pytest.fixture(scope="module")
def bpe(bpe_path):
    return tok.load(bpe_path)


def test_specials_come_first_and_merges_were_learned(bpe):
    assert [bpe.token_to_id(s) for s in tok.SPECIALS] == [0, 1, 2, 3, 4]
    assert bpe.get_vocab_size() == 300
    assert len(bpe.encode(" the garden").ids) < len(" the garden".encode()), "merges shorten common words"
    assert tok.is_byte_level(bpe)


HARD_TEXTS = [
    "the cat sat on the mat",
    "family 👩‍👩‍👧 party 🎉🎉",
    "注意力机制 トランスフォーマー 주의",
    "שלום עולם — مرحبا بالعالم",
    "cafe\u0301 n\u0303 a\u0308\u0301",  # combining marks (NFD)
    "nul\x00inside and \x01\x7f control",
    "tabs\tand\nnewlines\r\n  double  spaces ",
    "<s> typed by a user </s> <mask> <pad> <unk>",
    "",
]


@pytest.mark.parametrize("text", HARD_TEXTS)
def test_any_unicode_round_trips_without_unknown_tokens(bpe, text):
    ids = bpe.encode(text).ids
    assert not set(ids) & {bpe.token_to_id(s) for s in tok.SPECIALS}, "no <unk>, and typed markers stay text"
    assert bpe.decode(ids) == text


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=40))
def test_round_trip_for_arbitrary_text(bpe, text):
    ids = bpe.encode(text).ids
    assert bpe.token_to_id(tok.UNK) not in ids
    assert bpe.decode(ids) == text


def test_typed_special_markers_are_text_after_load(bpe_path, bpe):
    bos = bpe.token_to_id(tok.BOS)
    assert bos not in bpe.encode("<s>").ids
    assert bpe.decode(bpe.encode("<s>").ids) == "<s>"
    # without load()'s setting the same file would turn the typed text into the special token
    raw = Tokenizer.from_file(str(bpe_path))
    assert raw.encode("<s>").ids == [bos]


def test_readable_marks_a_leading_space_and_hides_byte_level_symbols(bpe):
    encoding = bpe.encode("the cat sat\non the mat")
    labels = [tok.readable(bpe, piece) for piece in encoding.tokens]
    assert "".join(labels) == "the▁cat▁sat↵on▁the▁mat"
    assert any(label.startswith("▁") and len(label) > 1 for label in labels), labels
    stand_ins = {ch for ch in tok._byte_table() if ord(ch) > 0xFF}  # Ġ, Ċ, …
    assert "Ġ" in stand_ins and "Ċ" in stand_ins
    for label in labels:
        assert not set(label) & stand_ins, label
    # the raw pieces really were byte-level: the test would catch a pass-through
    assert any("Ġ" in piece for piece in encoding.tokens)


def test_readable_shows_whole_characters_or_byte_escapes(bpe):
    labels = [tok.readable(bpe, p) for p in bpe.encode("a 🎉").tokens]
    assert "".join(labels) in ("a▁🎉", "a▁<0xF0><0x9F><0x8E><0x89>")
    assert tok.readable(bpe, "<s>") == "<s>"
    assert tok.readable(bpe, "Ā") == "<0x00>"  # U+0100 is the byte-level stand-in for the NUL byte


def test_written_joins_a_split_character_and_writes_an_unfinished_byte_as_its_token(bpe):
    """A model's text is decoded together, so a character split over byte tokens joins; a byte that completes no
    character is written as its byte token (docs/tokens.md), where a lossy decode wrote the replacement character."""
    ids = bpe.encode("a 🎉 b").ids
    assert len(ids) > 4, "the emoji is spelled in byte tokens by a 300-piece BPE"
    assert tok.written(bpe, ids) == "a 🎉 b" == bpe.decode(ids)
    party = bpe.encode("🎉").ids  # F0 9F 8E 89
    cut = bpe.encode("a ").ids + party[:-1]
    assert "\ufffd" in bpe.decode(cut)  # what the continuation showed: "a �"
    assert tok.written(bpe, cut) == "a <0xF0><0x9F><0x8E>"
    stray = party[-1:] + bpe.encode("b").ids  # a continuation byte (0x89) alone, then a whole character
    assert tok.written(bpe, stray) == "<0x89>b"
    specials = [bpe.token_to_id(tok.BOS)] + cut + [bpe.token_to_id(tok.EOS)]
    assert tok.written(bpe, specials) == "a <0xF0><0x9F><0x8E>", "special tokens are left out, as decode leaves them"
    assert tok.written(bpe, bpe.encode("caf\ufffd").ids) == "caf\ufffd", "a replacement character in the text stays"


def test_readable_for_a_character_tokenizer():
    chars = tok.char_tokenizer("ab ")
    assert tok.readable(chars, " ") == "▁"
    assert tok.readable(chars, "a") == "a"


def test_char_tokenizer_one_token_per_character_and_unknown_is_unk():
    chars = tok.char_tokenizer("abc ")
    unk = chars.token_to_id(tok.UNK)
    assert [chars.token_to_id(s) for s in tok.SPECIALS] == [0, 1, 2, 3, 4]
    encoding = chars.encode("ab zc")
    assert encoding.tokens == ["a", "b", " ", tok.UNK, "c"]
    assert encoding.ids[3] == unk
    assert unk not in chars.encode("cab ba").ids
    assert chars.decode(chars.encode("cab ba").ids) == "cab ba"


def test_char_tokenizer_survives_save_and_load(tmp_path):
    chars = tok.char_tokenizer("0123456789-")
    chars.save(str(tmp_path / "chars.json"))
    loaded = tok.load(tmp_path / "chars.json")
    assert loaded.encode("2026-11-21").ids == chars.encode("2026-11-21").ids
    assert loaded.decode(loaded.encode("2026-11-21").ids) == "2026-11-21"
    assert not tok.is_byte_level(loaded)


def test_missing_tokenizer_file_says_how_to_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m training.train") as error:
        tok.load(tmp_path / "tokenizer.json")
    assert str(tmp_path / "tokenizer.json") in str(error.value)
