"""Gradio settings this app changes through environment variables that Gradio reads but does not document.

Gradio's queue keeps a pandas summary of its last GRADIO_ANALYTICS_MAX_EVENTS events (10,000) for its
monitoring page, rebuilt every GRADIO_ANALYTICS_CACHE_FREQUENCY events (1): a cost that grows with
every request a lecture hall makes, for a page this app turns off (app.launch_options). A few records,
summarised rarely. gradio/queueing.py reads them when the queue is made, so `apply()` runs before
gradio is imported (app.py).
"""
from __future__ import annotations

import os

SETTINGS = {"GRADIO_ANALYTICS_MAX_EVENTS": "100", "GRADIO_ANALYTICS_CACHE_FREQUENCY": "1000"}


def apply() -> None:
    """Set each one the environment does not already set."""
    for name, value in SETTINGS.items():
        os.environ.setdefault(name, value)
