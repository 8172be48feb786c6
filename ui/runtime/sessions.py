"""Gradio keeps, for every session, a copy of every component's configuration with the last value sent to
it (SessionState.config_values), for its DeepLinkButton, which this app does not use (its deep links are
the view's settings in the URL: ui/page/links.py). Every figure sent stayed in memory for as long as its
session did, up to 10,000 sessions, and an API call over plain HTTP (/gradio_api/call/<api>) is a session
of its own: the server grew by ~0.8 MB per 128-token /analyze call, ~5 MB per 512-token one, without bound.

Building those copies also cost ~85 ms of CPU for each new session (239 components), on this 2-core machine.

`keep_no_output_values()` makes a session keep no configuration copies and no output values, and skips
building them; its State values (a visitor's own trained toy model) and the components it replaced stay,
as before.
"""
from __future__ import annotations

import os
from copy import copy

from gradio.state_holder import SessionState


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


def keep_no_output_values() -> None:
    """Sessions keep no copies of component configurations and values (idempotent)."""
    SessionState.__init__ = _lean_init
    SessionState.config_values = property(_nothing, _ignore)
    SessionState._update_value_in_config = _ignore
    SessionState._update_config = _ignore
