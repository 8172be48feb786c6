"""What a tab is, as plain data (no Gradio): the id a link's ?tab= names, the label on the tab bar, and the figure
a presenter's first screen must hold whole. ui.tabs.TABS lists the tab modules in teaching order, each with its TAB;
the page is built from that list, and every test that walks the tabs reads it, so a tab added there is walked
by the presenter, accessibility and phone tests without anyone editing them."""
from __future__ import annotations

from dataclasses import dataclass

FIRST_FIGURE = "[role=tabpanel] .js-plotly-plot"


@dataclass(frozen=True)
class TabSpec:
    id: str
    label: str
    figure: str = FIRST_FIGURE  # CSS selector of the tab's main figure (or of a block holding it)
    query: str = ""  # what a link adds to open the tab on a model it applies to, e.g. "&model=dates"


def tab_ids(tabs) -> list[str]:
    """The ids of the tabs a gr.Tabs holds, in its order (what ?tab=... in a link may name)."""
    return [str(child.id) for child in tabs.children if getattr(child, "id", None) is not None]
