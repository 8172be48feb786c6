"""How a handler runs and streams, where Gradio 6.31's own way costs the server or the page.

- `on_event_loop`: Gradio runs every synchronous handler in a worker thread. On a 2-core server, waking
  that thread and the event loop again afterwards cost about as much CPU as /analyze's forward pass; a
  call its `quick` check finds cheap (a trace already cached) runs on the event loop, where the request
  arrived.
- `repeat_outputs`: Gradio streams a generator's yields as diffs, which the page applies in place to the
  object it already queued; an output one yield set and the next skipped would be turned into an empty
  update before a busy page drew it. Each yield repeats every output set so far, so an unchanged one's diff is
  empty.
"""
from __future__ import annotations

import functools
import logging
from typing import Callable

import anyio.to_thread

from ui.runtime.wire import is_skip

log = logging.getLogger(__name__)


def on_event_loop(answer: Callable, quick: Callable[..., bool], name: str,
                  read: Callable[[tuple], list] = lambda values: values) -> Callable:
    """An async endpoint that reads the values sent (`read`), then calls answer(*values) on the event loop
    when quick(*values) says it is cheap, else in a worker thread, as Gradio would. A failing check counts
    as "not quick": the view, in its thread, says what is wrong."""
    async def endpoint(*values):
        values = read(values)
        try:
            here = quick(*values)
        except Exception:
            log.info("quick check of %s failed", name, exc_info=True)
            here = False
        if here:
            return answer(*values)
        return await anyio.to_thread.run_sync(lambda: answer(*values))
    return endpoint


def repeat_outputs(fn: Callable) -> Callable:
    """For a handler that yields {component: value} dicts: each yield repeats every output set so far
    (see the module docstring): the grid, average and table no longer stay blank or stale when a
    dispatcher's views come in a burst."""
    @functools.wraps(fn)  # Gradio reads fn's parameters (gr.Request) through __wrapped__
    def wrapper(*args, **kwargs):
        shown = {}
        for update in fn(*args, **kwargs):
            for output, value in update.items():
                if output not in shown or not is_skip(value):
                    shown[output] = value
            yield dict(shown)
    return wrapper
