"""Tokenizers built with Hugging Face `tokenizers`, and tokens people can read.

Text models use byte-level BPE: every Unicode string breaks into known byte
pieces, so there is no unknown token. The dates model reads single characters.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

PAD, BOS, EOS, MASK, UNK = "<pad>", "<s>", "</s>", "<mask>", "<unk>"
SPECIALS = [PAD, BOS, EOS, MASK, UNK]
SPACE_MARK = "▁"  # shown in place of a token's leading space

_UNICODE_TO_BYTE: dict[str, int] = {}


def _byte_table() -> dict[str, int]:
    """GPT-2's reversible map from printable stand-in characters back to bytes."""
    if not _UNICODE_TO_BYTE:
        keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
        chars, extra = keep[:], 0
        for b in range(256):
            if b not in keep:
                keep.append(b)
                chars.append(256 + extra)
                extra += 1
        _UNICODE_TO_BYTE.update({chr(c): b for b, c in zip(keep, chars)})
    return _UNICODE_TO_BYTE


def train_bpe(lines: Iterable[str], vocab_size: int) -> Tokenizer:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(lines, trainer=trainer)
    return tokenizer


def char_tokenizer(alphabet: str) -> Tokenizer:
    """One token per character; characters outside the alphabet become <unk>."""
    vocab = {tok: i for i, tok in enumerate(SPECIALS)}
    for ch in sorted(set(alphabet)):
        vocab.setdefault(ch, len(vocab))
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=UNK))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    return tokenizer


def load(path: Path) -> Tokenizer:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"Tokenizer file {path} is missing. Retrain with `python -m training.train <preset>` "
            "or restore it from the repository (git checkout -- assets/)."
        )
    tokenizer = Tokenizer.from_file(str(path))
    # "<s>" typed by a person is text, not a special token: the model adds its own.
    tokenizer.encode_special_tokens = True
    return tokenizer


def is_byte_level(tokenizer: Tokenizer) -> bool:
    """GPT-2's pieces, and Qwen2's and Llama-3's, whose pre-tokenizer is a Sequence (a split, then ByteLevel)
    but whose decoder is ByteLevel."""
    return (isinstance(tokenizer.pre_tokenizer, pre_tokenizers.ByteLevel)
            or isinstance(tokenizer.decoder, decoders.ByteLevel))


def readable(tokenizer: Tokenizer, piece: str) -> str:
    """A token as a person should see it: ▁ for a leading space, escapes for the rest.

    Byte-level pieces are mapped back to their bytes; a piece holding only part of
    a multi-byte character (emoji are often split) shows its bytes as <0xF0>.
    """
    if piece in SPECIALS or not is_byte_level(tokenizer):
        text = piece
    else:
        table = _byte_table()
        raw = bytes(table[c] for c in piece if c in table)
        text = raw.decode("utf-8", errors="replace")
        if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
            text = "".join(f"<0x{b:02X}>" if b >= 0x80 else chr(b) for b in raw)
    if text.startswith(" "):
        text = SPACE_MARK + text[1:]
    return "".join(_visible(ch) for ch in text)


def written(tokenizer: Tokenizer, ids: Iterable[int]) -> str:
    """The text a model wrote, `ids` decoded together (so a character split over several tokens joins), special
    tokens left out as `Tokenizer.decode` leaves them. A byte that completes no character (a generated token that
    is part of one, with the rest never written) is written as the tokenizer's byte token <0x93> (docs/tokens.md),
    never as the replacement character that a lossy decode puts in its place."""
    ids = [int(i) for i in ids]
    text = tokenizer.decode(ids)
    if "\ufffd" not in text or not is_byte_level(tokenizer):
        return text
    table, special = _byte_table(), {i for i, t in tokenizer.get_added_tokens_decoder().items() if t.special}
    raw = bytearray()
    for piece in (tokenizer.id_to_token(i) for i in ids if i not in special):
        # as the ByteLevel decoder reads a piece: its stand-in characters' bytes, or (an added token) its own text
        raw += bytes(table[c] for c in piece) if piece and all(c in table for c in piece) else (piece or "").encode()
    return _bytes_as_text(bytes(raw))


def _bytes_as_text(raw: bytes) -> str:
    """UTF-8 text, each byte that is not part of a whole character written as <0xE2>."""
    parts = []
    while raw:
        try:
            parts.append(raw.decode("utf-8"))
            break
        except UnicodeDecodeError as e:
            parts.append(raw[:e.start].decode("utf-8"))
            parts.extend(f"<0x{b:02X}>" for b in raw[e.start:e.end])
            raw = raw[e.end:]
    return "".join(parts)


def _visible(ch: str) -> str:
    if ch == "\n":
        return "↵"
    if ch == "\t":
        return "⇥"
    if ch == " ":
        return "␣"
    if ord(ch) < 32 or ord(ch) == 127:
        return f"<0x{ord(ch):02X}>"
    return ch
