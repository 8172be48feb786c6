"""A tab's `select` that the visitor did not make: Gradio 6.31's Tabs send it as the page mounts.

Gradio's Tabs dispatch `select` for the selected tab whenever their `selected` value changes, and the first
time is the page's mount: the first tab's `select` reaches the server before the page load has set the view
(ui/page/page_link.py). A redraw that followed it read the page's default controls (lm, "He opened the
door...") while the load's own redraw drew the link's view; under load the default one could arrive last, and
a deep link showed the default view under the link's controls (a fresh-clone test run, 2026-11-26).

The rule: a tab opened is redrawn only when the visitor moved to it from another tab. The page load, a lesson
step and the link's `tab=` name the open tab themselves (`ctx.current_tab`) and redraw it; a `select` that
comes before them (current None) or names the tab already open is theirs, and draws nothing.
Premise test: tests/e2e/test_e2e_runtime_premises.py::test_gradio_tabs_send_select_as_the_page_mounts.
"""
from __future__ import annotations

import gradio as gr


def opened_by_visitor(tab_id: str):
    """The handler of a tab's `select`: (the open tab now) -> (the open tab, whether to redraw it)."""

    def open_tab(current):
        if current is None or current == tab_id:  # the mount's select, or one the view's setter already drew
            return gr.skip(), False
        return tab_id, True

    return open_tab
