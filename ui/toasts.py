"""How a message reaches a visitor's page: escaped (a toast renders HTML), raised as a refusal without a traceback,
or shown as a warning or a note. A leaf that imports nothing of ours: ui/runtime reads it (Gradio's own refusals,
reworded) and ui/page/messages.py hands it on to the views with the input checks. Gradio is imported only when a
message is raised, so the checks stay usable without it (tests, bench/).
"""
from __future__ import annotations

import html


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
