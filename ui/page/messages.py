"""What a visitor may send and what they read when it cannot be used: the one ui/ module for input checks
and messages (how a message is cut, escaped and raised).

The checks the registry and training share (`InputError`, the text and index checks, the path-free message)
are defined in model/inputs.py, because model/ and training/ never import ui/; the views import them from
here, with the checks only the page makes (beam width, the notice of a cut text). How a message is escaped and
raised is ui/toasts.py (ui/runtime reads it too), handed on from here. Pure Python until a message is raised.
"""
from __future__ import annotations

from model import inputs
from model.inputs import InputError, char_limit, check_index, public_message, shortened, shown
from model.registry import MAX_CHARS, ModelRegistry
from ui.toasts import inform, refusal, toast, warn

__all__ = ["MAX_BEAM", "MAX_CHARS", "InputError", "char_limit", "check_beam", "check_index", "clean_text",
           "cut_notice", "inform", "public_message", "refusal", "shortened", "shown", "toast", "warn"]

MAX_BEAM = 8  # widest beam search the app runs


def clean_text(text, max_chars: int = MAX_CHARS) -> str:
    """The text as the models read it (model.inputs.clean_text), at most `max_chars` characters: by default
    the most any model takes; a view of one model passes its own (ModelRegistry.max_chars)."""
    return inputs.clean_text(text, max_chars)


def check_beam(value) -> int:
    """A beam width from the UI or the API (a whole number 1..MAX_BEAM), or InputError."""
    try:
        return check_index(value, MAX_BEAM, "beam width") + 1
    except InputError:
        raise InputError(f"The beam width must be a whole number between 1 and {MAX_BEAM} "
                         f"(got {shown(value)}).") from None


def cut_notice(registry: ModelRegistry, name: str, truncated: bool) -> str:
    """Markdown to put first in a view of a text cut at the model's context (empty when nothing was cut): every
    view reads only what the model reads, so its "last word" is the last one kept, not the text's."""
    if not truncated:
        return ""
    limit = registry.get(name).config.max_len
    return (f"⚠️ The text is longer than {name}'s context: the model reads only its first {limit:,} tokens, so "
            "this view stops there (its last word is the last one kept).\n\n")
