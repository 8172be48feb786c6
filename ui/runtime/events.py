"""How a handler runs and streams, where Gradio 6.31's own way costs the server or the page.

- `on_event_loop`: Gradio runs every synchronous handler in a worker thread. On a 2-core server, waking
  that thread and the event loop again afterwards cost about as much CPU as /analyze's forward pass; a
  call its `quick` check finds cheap (a trace already cached) runs on the event loop, where the request
  arrived. `quick` below is that check for a view of one text on one model: which work is small.
- `repeat_outputs`: Gradio streams a generator's yields as diffs, which the page applies in place to the
  object it already queued; an output one yield set and the next skipped would be turned into an empty
  update before a busy page drew it. Each yield repeats every output set so far, so an unchanged one's diff is
  empty.
"""
from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Callable

import anyio.to_thread

from model.inputs import InputError, clean_text
from ui.runtime.wire import is_skip

if TYPE_CHECKING:
    from model.registry import ModelRegistry

log = logging.getLogger(__name__)

# Small work runs where the request arrived (on_event_loop): a forward pass of at most this much arithmetic
# (a millisecond or two on one CPU core: lm up to ~60 tokens, minilm never), and figures of at most this many
# attention weights (lm's 16 heads at 64 tokens), whether the trace is cached or not.
QUICK_FLOPS = 100e6
QUICK_CELLS = 16 * 64 * 64


def quick(registry: "ModelRegistry", name, text) -> bool:
    """Whether a view of `text` on model `name` is small work, so that it may run without being handed to
    another thread (ui.page.context.Context.listen): its figures hold at most QUICK_CELLS attention weights, and
    its trace is at hand or costs at most QUICK_FLOPS (a one-stack model only: the dates model decodes step
    by step first). Bad input is quick: it ends in a message."""
    try:
        model = registry.get(name)
        text = clean_text(text, registry.max_chars(name))
    except InputError:
        return True
    config = model.config
    cached = registry.cache.peek((name, text)) or registry.device_cache.peek((name, text))
    if cached is not None:
        tokens = max(len(cached.tokens), len(cached.target_tokens))
    elif model.arch == "encoder-decoder":
        return False
    else:
        tokens = len(model.encode(text).ids)
    if config.n_layers * config.n_heads * tokens ** 2 > QUICK_CELLS:
        return False
    # multiply-adds, twice: the projections and the feed-forward per token, q·k and weights·v per pair
    per_layer = 2 * tokens * (4 * config.d_model ** 2 + 2 * config.d_model * config.d_ff) \
        + 4 * tokens ** 2 * config.d_model
    return cached is not None or config.n_layers * per_layer <= QUICK_FLOPS


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
