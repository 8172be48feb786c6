"""One pick in a dropdown, one run on the server.

Gradio 6.31's single-choice dropdown (js/dropdown/shared/Dropdown.svelte) sends, for one pick with the
mouse (or a tap): `select`, then `input` (handle_option_selected), then, as it takes the focus off its
box, `blur` and `input` again (handle_blur). A pick with the keyboard (arrows, Enter) only blurs the box:
`blur`, `input`, once, and no `select`. Leaving the box without a pick sends `input` too, with the value
it already had. So `select` misses keyboard picks, and `input` comes twice for a mouse pick. Its page
script cannot drop the second under trigger_mode "once" or "always_last" either: it marks an event as
running only after an await, and the second is sent in between. Measured in the browser: picking a
lecture example ran its handler and every view of the open tab twice and showed its "Measured ..."
message twice ("Info (2)"); choosing a model likewise computed the views twice.

Nothing on the wire ties the two `input`s together (each is a request of its own, with its own event id;
the trigger is the component). What makes the second one a repeat is what it carries: both are sent by
the page in the same moment, before any answer came back, so they carry the same values. `Repeats`
therefore remembers, per visitor (Gradio's session) and per handler, the values of the last call it
computed. A call with the same values is its repeat, answered "unchanged" (ui.page.context) and its message
not said again, and each computed call has at most one repeat: a third call with the same values, a
visitor picking the same entry again, is computed. No clock is involved: how fast the server answers,
and how soon a visitor picks again, change nothing. The views' other events (a new sentence, a slider,
a tab opened) make the visitor's page differ from what the last pick drew, so they `forget` the
session's picks. API callers never go through it: a script that calls /analyze twice gets two answers.
"""
from __future__ import annotations

import threading

import gradio as gr

from model.cache import ByteLRU


class Repeats:
    """Each session's last computed call per handler, to recognise a dropdown's second `input`."""

    def __init__(self, size: int = 4096):
        self.size = size
        # session -> {handler: (fingerprint, repeat already answered)}; the oldest session leaves first
        self._last = ByteLRU(max_bytes=size, max_items=size, size_of=lambda calls: 1)
        self._lock = threading.Lock()  # the pick's two events run in two worker threads at once: one reads first

    def seen(self, request: gr.Request | None, handler: str, values) -> bool:
        """Whether this call repeats the session's last computed call of `handler` (the same values, its
        repeat not answered yet); records it. Without a session (a call from Python, not through Gradio)
        nothing counts as a repeat."""
        session = getattr(request, "session_hash", None)
        if session is None:
            return False
        fingerprint = _fingerprint(values)
        with self._lock:
            calls = self._last.peek(session) or {}
            last = calls.get(handler)
            repeat = fingerprint is not None and last == (fingerprint, False)
            self._last.put(session, {**calls, handler: (fingerprint, repeat)})
        return repeat

    def forget(self, request: gr.Request | None) -> None:
        """The session's page has changed since its last pick (another view redrew it): the next call of
        any handler is computed."""
        session = getattr(request, "session_hash", None)
        if session is None:
            return
        with self._lock:
            if self._last.peek(session):
                self._last.put(session, {})


def _fingerprint(values) -> int | None:
    """The values (the controls' values: strings, numbers, lists) as a number, so that a full memory of
    4096 visitors' calls stays small. None when they cannot be written down (then nothing is a repeat)."""
    try:
        return hash(repr(values))
    except Exception:
        return None


def is_pick(trigger) -> bool:
    """Whether an event trigger is a single-choice dropdown's `input`, the event Gradio sends twice.
    A multiselect dropdown sends it once per change."""
    block = getattr(trigger, "__self__", None)
    return (isinstance(block, gr.Dropdown) and not block.multiselect
            and getattr(trigger, "event_name", None) == "input")
