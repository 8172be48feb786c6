"""Gradio keeps, for every session, a copy of every component's configuration with the last value sent to
it (SessionState.config_values), for its DeepLinkButton, which this app does not use (its deep links are
the view's settings in the URL: ui/page/links.py). Every figure sent stayed in memory for as long as its
session did, up to 10,000 sessions, and an API call over plain HTTP (/gradio_api/call/<api>) is a session
of its own: the server grew by ~0.8 MB per 128-token /analyze call, ~5 MB per 512-token one, without bound.

Building those copies also cost ~85 ms of CPU for each new session (239 components), on this 2-core machine.

`keep_no_output_values()` makes a session keep no configuration copies and no output values, and skips
building them; its State values (a visitor's own trained toy model) and the components it replaced stay,
as before.

What stays is bounded in bytes, however many visitors come (issue 58). Gradio keeps up to 10,000 sessions
(`state_session_capacity`), each with its State values: a generation's attention rows (up to 8 MB,
ui/tabs/generation.py SESSION_BYTES), a trained toy model's weights, a lesson's id and step. 10,000 of the
largest would be tens of GB. `keep_no_output_values()` also counts the bytes of every State value written
(`size_of`), and once all sessions' values together pass STATE_BYTES it drops the oldest written: that
visitor's next event reads the State's initial value, as a new visitor's does (their generation or trained
model is gone: they generate or train again). docs/memory.md adds it all up.
"""
from __future__ import annotations

import os
import sys
import threading
import weakref
from collections import OrderedDict
from copy import copy

from gradio.components import State
from gradio.state_holder import SessionState

STATE_ENV = "ATTENTION_STATE_MB"
# every session's State values together; a trained toy model or a generation is at most a few MB
STATE_BYTES = int(float(os.environ.get(STATE_ENV) or 256) * 2 ** 20)


class _KeepsNothing(dict):
    """A dict that forgets what is written into it."""

    def __setitem__(self, key, value):
        pass


def _nothing(self) -> dict:
    return _KeepsNothing()


def _ignore(self, *args, **kwargs) -> None:
    return None


def _lean_init(self, blocks) -> None:
    """SessionState.__init__ without the configuration copies (Gradio 6.31's, otherwise line for line)."""
    self.blocks_config = copy(blocks.default_config)
    self.state_data = {}
    self._state_ttl = {}
    self.is_closed = False
    self.STATE_TTL_WHEN_CLOSED = 1 if os.getenv("GRADIO_IS_E2E_TEST", None) else 3600


def size_of(value, depth: int = 0) -> int:
    """Bytes a State value holds, near enough: arrays and bytes by their length, containers and objects by
    what they hold (at most 8 levels down)."""
    nbytes = getattr(value, "nbytes", None)
    if isinstance(nbytes, int):  # a numpy array (ui imports no torch: a tensor would count by its nbytes too)
        return nbytes + 112
    if isinstance(value, (bytes, bytearray, str)):
        return sys.getsizeof(value)
    if depth >= 8:
        return sys.getsizeof(value)
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(size_of(k, depth + 1) + size_of(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sys.getsizeof(value) + sum(size_of(v, depth + 1) for v in value)
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict):  # a dataclass or a plain object
        return sys.getsizeof(value) + size_of(fields, depth + 1)
    return sys.getsizeof(value)


class StateBudget:
    """The bytes of every session's State values, oldest written first; past `most`, the oldest go."""

    def __init__(self, most: int = STATE_BYTES):
        self.most, self.total, self.lock = most, 0, threading.Lock()
        self.kept: OrderedDict[tuple[int, int], tuple[weakref.ref, int]] = OrderedDict()  # (session, key) -> size

    def wrote(self, session: SessionState, key: int, value) -> None:
        size = size_of(value)
        with self.lock:
            _, before = self.kept.pop((id(session), key), (None, 0))
            self.kept[(id(session), key)] = (weakref.ref(session), size)
            self.total += size - before
            while self.total > self.most and len(self.kept) > 1:
                (_, old_key), (ref, old_size) = self.kept.popitem(last=False)
                self.total -= old_size
                owner = ref()
                if owner is not None:  # a session Gradio let go of has taken its values with it
                    owner.state_data.pop(old_key, None)


BUDGET = StateBudget()
_gradio_setitem = SessionState.__setitem__


def _counted_setitem(self, key: int, value) -> None:
    """SessionState.__setitem__, and a State's value counted against BUDGET."""
    _gradio_setitem(self, key, value)
    if isinstance(self.blocks_config.blocks.get(key), State):
        BUDGET.wrote(self, key, value)


def keep_no_output_values() -> None:
    """Sessions keep no copies of component configurations and values, and their State values at most
    STATE_BYTES together (idempotent)."""
    SessionState.__init__ = _lean_init
    SessionState.__setitem__ = _counted_setitem
    SessionState.config_values = property(_nothing, _ignore)
    SessionState._update_value_in_config = _ignore
    SessionState._update_config = _ignore
