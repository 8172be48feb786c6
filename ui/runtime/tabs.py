"""A link opens its tab by a page script that clicks the tab's button, not by an event's output.

In Gradio 6.31 every event updates the loading status of every component that was ever an event's output,
and for a layout block it reads the value of everything inside it (one structuredClone per value, and more).
Once the gr.Tabs holding every tab had been the page load's output (`gr.Tabs(selected=...)`), each later
click read every component of the app, several times over: about 75,000 copies for one tile picked on the
Every head tab, half of them for this (minilm, 2026-11-24). The script clicks the linked tab's button, as a
visitor would; the tab's own `select` event follows, as it did for the output.
"""
from __future__ import annotations

# the tab ?tab=... names (the server has checked it and said so of a name that is no tab: ui/links.py); a
# tab already open is left alone. (A gr.State's value never reaches the page: the script reads the address.)
OPEN_TAB_JS = """() => {
    const tab = new URLSearchParams(window.location.search).get('tab');
    const button = [...document.querySelectorAll('[role=tab]')].find((b) => tab && b.dataset.tabId === tab);
    if (button && button.getAttribute('aria-selected') !== 'true') button.click();
    return [];
}"""


def open_tab_after(event):
    """After `event` (the page load, which sets the controls a link names), open the tab it names. Returns
    the event that opens it: views drawn after it are drawn into a tab already shown (Plotly lays out a
    figure in a hidden tab at no size)."""
    return event.then(None, inputs=None, outputs=None, js=OPEN_TAB_JS, queue=False)
