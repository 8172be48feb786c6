"""The folded sections of a tab (ctx.section, a panel passed to ctx.listen): which views sit in one, and the
order a redraw computes a tab's views in (ui/page/context.py's dispatchers)."""
from __future__ import annotations


def first_views(views: list, open_sections: list | None) -> list:
    """The views in the order a redraw computes them. A view the viewer has open should draw first: on a long
    tab a section sits below thousands of pixels of other figures, and in registration order it came last
    (What flows drew seconds after the click, behind the explanations above it). So: each tab's main view (the
    first it registers outside a section: the figure presenter mode puts on the first screen), then the views
    of the open sections in the order of `open_sections` (the one opened last first), then the rest as
    registered. API callers (open_sections None) are answered in registration order."""
    if open_sections is None:
        return views
    mains = {}
    for view in views:
        if view.section is None:
            mains.setdefault(view.tab, view)
    rank = {name: n for n, name in enumerate(open_sections)}

    def order(item):
        n, view = item
        if mains.get(view.tab) is view:
            return 0, 0, n
        if view.section in rank:
            return 1, rank[view.section], n
        return 2, 0, n

    return [view for _, view in sorted(enumerate(views), key=order)]


def inside(block) -> list:
    """Every component inside a layout block (an accordion's rows and columns included)."""
    found = []
    for child in getattr(block, "children", []):
        found.append(child)
        found.extend(inside(child))
    return found
