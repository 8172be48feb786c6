"""One pick in a dropdown, one run on the server.

Gradio 6.31's dropdown sends its `input` event twice for one click on an option: once when the option
is picked and again when it then takes the focus off its box (js/dropdown/shared/Dropdown.svelte calls
on_input in handle_option_selected and again in handle_blur). Its page script cannot drop the second
under trigger_mode "once" or "always_last" either: it marks an event as running only after an await,
and the second arrives in between. Measured in the browser: picking a lecture example ran its handler
and every view of the open tab twice and showed its "Measured ..." message twice ("Info (2)"); choosing
a model likewise computed the views twice.

`Repeats` remembers, per visitor (Gradio's session) and per handler, the last values it ran with.
A call with the same values within `window` seconds is the repeat: the page handlers answer it with
"unchanged" (ui.context) and say their message once. API callers never go through it: a script that
calls /analyze twice gets two answers.
"""
from __future__ import annotations

import threading
import time

import gradio as gr

from model.cache import ByteLRU

# The repeat reaches the server within milliseconds of the pick; under a lecture hall's queue the two
# start at most one handler apart. A person cannot pick the same thing twice, with something else in
# between, inside a second.
WINDOW_S = 1.0


class Repeats:
    """The last call of each (session, handler), to recognise the dropdown's second event."""

    def __init__(self, window: float = WINDOW_S, size: int = 4096, clock=time.monotonic):
        self.window, self.size, self.clock = window, size, clock
        self._last = ByteLRU(max_bytes=size, max_items=size, size_of=lambda call: 1)  # the oldest leave first
        self._lock = threading.Lock()  # the pick's two events run in two worker threads at once: one reads first

    def seen(self, request: gr.Request | None, handler: str, values) -> bool:
        """Whether this session called `handler` with these values within the window; records the call.
        Without a session (a call from Python, not through Gradio) nothing counts as a repeat."""
        session = getattr(request, "session_hash", None)
        if session is None:
            return False
        key, now = (session, handler), self.clock()
        fingerprint = _fingerprint(values)
        with self._lock:
            last = self._last.peek(key)
            self._last.put(key, (fingerprint, now))
        return last is not None and fingerprint is not None and last[0] == fingerprint and now - last[1] < self.window


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
