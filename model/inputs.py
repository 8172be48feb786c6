"""Input a person can fix: the one exception for it, and the checks every caller of a model shares.

Pure Python (no torch, no Gradio), so that every room can raise and catch the same exception:
`model.registry` (text too long, unknown model), `training.toy_tasks.SettingsError` (a toy setting out of
bounds) and the views in `ui/`. It lives here, below them all, because model/ and training/ never import
ui/; ui/page/messages.py is the one module the views read it from, with how a message reaches the visitor.

    clean_text("  The cat\\x00 sat ")          # 'The cat sat'
    check_index(2, 4, "layer")                 # 1 (1-based in, 0-based out)
    clean_text("")                             # InputError: Type a sentence first: the text box is empty.
"""
from __future__ import annotations

import math
import re
import unicodedata

# Characters follow tokens: 2,000 for a 256-token context (a token is ~4-5 characters of English, so a text
# the model would cut still fits), 4,000 for 512. Server-side: the browser's max_length is only a hint.
CHARS_PER_256_TOKENS = 2000


class InputError(ValueError):
    """Input the app cannot use; the message is written for the person who typed it."""


def shortened(text, limit: int = 60) -> str:
    """`text` cut to `limit` characters: a message never echoes a whole 100 KB value back."""
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def shown(value, limit: int = 40) -> str:
    """A value a visitor sent, quoted as Python writes it (`'x'`, `[1, 2]`) and cut to `limit` characters."""
    return shortened(repr(value), limit)


def char_limit(context: int) -> int:
    """The most characters the app takes for a model that reads `context` tokens (never below 2,000)."""
    return max(CHARS_PER_256_TOKENS, round(CHARS_PER_256_TOKENS * context / 256))


def clean_text(text, max_chars: int) -> str:
    """The text as the models should read it, or InputError saying what to change.

    Control characters (NUL, escapes) are dropped, newlines and tabs become spaces;
    emoji, CJK and HTML pass through untouched (the tokenizer handles them as bytes)."""
    if text is None:
        raise InputError("Type a sentence first.")
    if not isinstance(text, str):
        raise InputError(f"The text must be a string, not {type(text).__name__}.")
    if len(text) > max_chars:
        raise InputError(f"The text is {len(text)} characters long; the demo reads at most {max_chars}. "
                         "Shorten it and try again.")
    if not text.isprintable():  # checked in C first: most text has nothing to drop, and this pass is per character
        text = "".join(" " if c in "\n\r\t" else c for c in text
                       if c in "\n\r\t" or unicodedata.category(c) not in ("Cc", "Cs"))
    text = " ".join(text.split()) if text.strip() else ""
    if not text:
        raise InputError("Type a sentence first: the text box is empty.")
    return text


def check_index(value, count: int, what: str) -> int:
    """A 1-based layer/head number from the UI or the API as a 0-based index, or InputError."""
    if isinstance(value, bool) or value is None:
        raise InputError(f"Choose a {what} between 1 and {count}.")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"The {what} must be a number between 1 and {count}, not {shown(value)}.") from None
    if not math.isfinite(number) or number != int(number) or not 1 <= number <= count:
        raise InputError(f"This model has {count} {what}s: choose a {what} between 1 and {count} (got {shown(value)}).")
    return int(number) - 1


# an absolute path: a slash-separated run of at least two parts that starts a word
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~/:])(?:/[^\s'\"():,;/]+){2,}")


def public_message(message: str) -> str:
    """`message` with every absolute path cut to its file name: visitors learn which file is wrong and
    how to fix it, never where the server keeps it (the server log has the whole path)."""
    return _ABSOLUTE_PATH.sub(lambda m: m.group().rsplit("/", 1)[-1], str(message))
