"""What a visitor may send and what they read when it cannot be used: the one ui/ module for input checks
and messages (how a message is cut, escaped and raised).

The checks the registry and training share (`InputError`, the text and index checks, the path-free message)
are defined in model/inputs.py, because model/ and training/ never import ui/; the views import them from
here, with the checks only the page makes (beam width, the notice of a cut text). Pure Python until a
message is raised.
"""
from __future__ import annotations

import html

from model import inputs
from model.inputs import InputError, char_limit, check_index, public_message, shortened, shown
from model.registry import MAX_CHARS, ModelRegistry

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


def toast(message) -> str:
    """A message as a toast must carry it. Gradio renders a toast's text as HTML (sanitised: no script
    runs, but a link's `?model=<img src=...>` still put an image in the page), so anything that may hold
    what a visitor wrote is escaped and shows literally."""
    return html.escape(str(message), quote=False)


def refusal(message):
    """The gr.Error that tells the visitor `message` (escaped: it may hold what they typed), without a
    traceback in the server log: bad input is not a bug."""
    import gradio as gr  # here, not above: the checks are called by tests and bench/ without Gradio

    return gr.Error(toast(message), print_exception=False)


def warn(message, escaped: bool = False) -> None:
    """A warning toast on the visitor's page: the figures stay as they were. `message` is escaped unless it
    already is (escaped=True: a refusal's text, or markup of our own)."""
    import gradio as gr

    gr.Warning(str(message) if escaped else toast(message))


def inform(message, escaped: bool = False) -> None:
    """An information toast on the visitor's page (escaped as `warn`)."""
    import gradio as gr

    gr.Info(str(message) if escaped else toast(message))
