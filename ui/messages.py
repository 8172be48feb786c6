"""What the visitor reads when something they sent cannot be used: one place for how a message is cut,
escaped and raised.

Pure Python until a message is raised: ui.models (which notebooks import without Gradio) quotes values
with `shown`.
"""
from __future__ import annotations

import html


def shortened(text, limit: int = 60) -> str:
    """`text` cut to `limit` characters: a message never echoes a whole 100 KB value back."""
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def shown(value, limit: int = 40) -> str:
    """A value a visitor sent, quoted as Python writes it (`'x'`, `[1, 2]`) and cut to `limit` characters."""
    return shortened(repr(value), limit)


def toast(message) -> str:
    """A message as a toast must carry it. Gradio renders a toast's text as HTML (sanitised: no script
    runs, but a link's `?model=<img src=...>` still put an image in the page), so anything that may hold
    what a visitor wrote is escaped and shows literally."""
    return html.escape(str(message), quote=False)


def refusal(message):
    """The gr.Error that tells the visitor `message` (escaped: it may hold what they typed), without a
    traceback in the server log: bad input is not a bug."""
    import gradio as gr  # here, not above: ui.models quotes values with `shown` and imports no Gradio

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
